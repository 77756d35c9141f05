#!/usr/bin/env bash
# Installs what dpgnn needs to build, test and run, from Debian 12's packages. Idempotent:
# installs only what is missing and says what it installs. Needs root (or sudo).
#   scripts/install-deps.sh            # build + test + run dependencies
#   scripts/install-deps.sh --check    # only report what is missing (exit 1 if anything is)
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake g++ make ccache pkg-config
  # libraries (LibTorch is Debian's CPU build; users on clusters point Torch_DIR elsewhere)
  libtorch-dev libopenmpi-dev openmpi-bin libhdf5-dev libmetis-dev libptscotch-dev libbz2-dev liblzma-dev libyaml-cpp-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
  libxxhash-dev zlib1g-dev libsodium-dev libmpfr-dev libgmp-dev
  # an optimised BLAS: without it LibTorch falls back to the reference BLAS (30-50x slower).
  # The OpenMP build, selected below: it shares LibTorch's OpenMP threads, where the pthreads
  # build's own pool competes with them (steps 1.5-2x slower, docs/benchmarks.md)
  libopenblas0-openmp
  # dataset converters (tools/*.py) and plots
  python3 python3-numpy python3-scipy python3-h5py python3-yaml python3-matplotlib
  # per-rank peak memory in the benchmarks (bench/*.sh: GNU time %M)
  time
)
# Optional: SLURM for the cluster tests and iproute2 (ip netns) for their simulated hosts
# (tests/cluster, docs/cluster.md). When these cannot be installed the tests skip with a
# message; nothing else needs them.
OPTIONAL_PACKAGES=(slurmctld slurmd slurm-client munge iproute2)

OPENMP_BLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
# The alternatives LibTorch's libraries load (libblas.so.3, and libopenblas.so.0 directly).
BLAS_ALTERNATIVES=(libblas.so.3-x86_64-linux-gnu:libblas.so.3 libopenblas.so.0-x86_64-linux-gnu:libopenblas.so.0)
blas_selected() {
  local a
  for a in "${BLAS_ALTERNATIVES[@]}"; do
    update-alternatives --query "${a%%:*}" 2>/dev/null | grep -q "^Value: $OPENMP_BLAS_DIR/${a##*:}$" || return 1
  done
}
select_openmp_blas() {  # SUDO may be empty
  blas_selected && return 0
  local a
  for a in "${BLAS_ALTERNATIVES[@]}"; do
    if [ -e "$OPENMP_BLAS_DIR/${a##*:}" ]; then
      $SUDO update-alternatives --set "${a%%:*}" "$OPENMP_BLAS_DIR/${a##*:}" >/dev/null
    fi
  done
  echo "install-deps: selected OpenBLAS's OpenMP build ($OPENMP_BLAS_DIR) for libblas.so.3 and libopenblas.so.0"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
optional_missing=()
for p in "${OPTIONAL_PACKAGES[@]}"; do installed "$p" || optional_missing+=("$p"); done

if [ "${1:-}" = "--check" ]; then
  [ ${#optional_missing[@]} -eq 0 ] || echo "install-deps: optional, missing: ${optional_missing[*]}"
  if [ ${#missing[@]} -eq 0 ]; then
    blas_selected || { echo "install-deps: OpenBLAS's OpenMP build is installed but not selected"; exit 1; }
    echo "install-deps: all ${#PACKAGES[@]} packages are installed"; exit 0
  fi
  echo "install-deps: missing: ${missing[*]}"
  exit 1
fi

SUDO=""
if [ ${#missing[@]} -eq 0 ] && [ ${#optional_missing[@]} -eq 0 ] && blas_selected; then
  echo "install-deps: all ${#PACKAGES[@]} packages (and the optional SLURM ones) are installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    if [ ${#missing[@]} -eq 0 ]; then
      blas_selected || echo "install-deps: not root and no sudo: select $OPENMP_BLAS_DIR with update-alternatives yourself"
      echo "install-deps: not root and no sudo: the optional SLURM test will skip (missing: ${optional_missing[*]})"
      exit 0
    fi
    echo "install-deps: not root and no sudo: install these yourself: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ] || [ ${#optional_missing[@]} -gt 0 ]; then $SUDO apt-get update -qq; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
select_openmp_blas
if [ ${#optional_missing[@]} -gt 0 ]; then
  echo "install-deps: installing optional package(s) for the SLURM and multihost tests: ${optional_missing[*]}"
  # Their postinst scripts try to start services; with no init system (containers) that
  # fails harmlessly. The SLURM test starts its own daemons.
  $SUDO apt-get install -y -qq --no-install-recommends "${optional_missing[@]}" ||
    echo "install-deps: could not install ${optional_missing[*]}: the SLURM and multihost tests will skip"
fi
echo "install-deps: done"
