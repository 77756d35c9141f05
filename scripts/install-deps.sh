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
  libtorch-dev libopenmpi-dev openmpi-bin libhdf5-dev libmetis-dev libyaml-cpp-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
  libxxhash-dev zlib1g-dev
  # an optimised BLAS: without it LibTorch falls back to the reference BLAS (30-50x slower)
  libopenblas0-pthread
  # dataset converters (tools/*.py) and plots
  python3 python3-numpy python3-scipy python3-h5py
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-deps: missing: ${missing[*]}"
  exit 1
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: not root and no sudo: install these yourself: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
