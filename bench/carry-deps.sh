#!/usr/bin/env bash
# carry-deps.sh: dpgnn's build and run dependencies (all but LibTorch, CUDA and NCCL) as Debian
# 12 packages, for a GPU machine that has a CUDA LibTorch but not these libraries and cannot
# reach a package registry (a lent cloud GPU, a container image). Two halves:
#
#   bench/carry-deps.sh download DIR
#       here, on Debian 12: the .deb files into DIR (apt-get download; no root needed).
#   source bench/carry-deps.sh unpack DIR PREFIX
#       there, on any x86-64 Linux with glibc >= 2.36: unpacks DIR/*.deb under PREFIX (not
#       into /, so nothing of that machine's is replaced) and exports what makes CMake,
#       pkg-config, the compiler, the loader and OpenMPI use them. Sets the bash array
#       DEPS_CMAKE_ARGS, to add to the cmake line. Then build as usual, e.g.
#         cmake -S . -B build-cuda -DTorch_DIR=... "${DEPS_CMAKE_ARGS[@]}"
#
# What it takes care of (each found by rehearsing in a mount namespace that hides the
# system's copies): OpenMPI and PMIx are relocated with OPAL_PREFIX, PMIX_PREFIX and PMIx's
# component path; Debian's HDF5 lives under hdf5/serial, where FindHDF5's search does not
# look, so a view of it is made; the .pc files say prefix=/usr, so pkg-config gets the prefix
# as its sysroot; gmp.h is in Debian's multiarch include folder (CPATH). Used to run
# bench/gpu-check.sh on a lent H100/H200 (docs/development.md, "The GPU check").

_carry_packages=(
  # headers, CMake configs and .pc files
  libopenmpi-dev libhdf5-dev libmetis-dev libptscotch-dev libscotch-dev libbz2-dev liblzma-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libgtest-dev
  libgmock-dev googletest libxxhash-dev zlib1g-dev libsodium-dev libmpfr-dev libgmp-dev
  libaec-dev pkgconf pkgconf-bin libpkgconf3
  # the libraries they name, and OpenMPI's launcher and data
  libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libmunge2 libnuma1 libltdl7 libudev1 libgfortran5
  libhdf5-103-1 libhdf5-hl-100 libhdf5-cpp-103-1 libhdf5-hl-cpp-100 libaec0 libsz2
  libmetis5 libscotch-7.0 libptscotch-7.0 libyaml-cpp0.7 libspdlog1.10 libfmt9 libxxhash0
  libsodium23 libmpfr6 libgmp10 libgmpxx4ldbl libjpeg62-turbo libzstd1
  # HDF5's libcurl and what Debian's libcurl links (other distributions ship other sonames)
  libcurl4 libssh2-1 libldap-2.5-0 librtmp1 libnghttp2-14 libpsl5 libbrotli1 libidn2-0
  libunistring2 libsasl2-2 libsasl2-modules-db libdb5.3 libgnutls30 libhogweed6 libnettle8
  libtasn1-6 libp11-kit0 libkrb5-3 libk5crypto3 libkrb5support0 libgssapi-krb5-2
  libkeyutils1 libcom-err2 libssl3
)

_carry_download() {
  local dir="${1:?usage: bench/carry-deps.sh download DIR}"
  mkdir -p "$dir" && cd "$dir" || return 2  # run as a command, so the cd stays here
  apt-get download "${_carry_packages[@]}" || { echo "carry-deps.sh: apt-get download failed" >&2; return 1; }
  echo "carry-deps.sh: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in $dir"
}

_carry_unpack() {
  local dir="${1:?usage: source bench/carry-deps.sh unpack DIR PREFIX}" P="${2:?usage: source bench/carry-deps.sh unpack DIR PREFIX}"
  local A=x86_64-linux-gnu f n=0
  [ -d "$dir" ] || { echo "carry-deps.sh: no folder $dir (bench/carry-deps.sh download DIR makes it)" >&2; return 1; }
  local debs=("$dir"/*.deb)
  [ -e "${debs[0]}" ] || { echo "carry-deps.sh: no .deb files in $dir" >&2; return 1; }
  mkdir -p "$P"
  for f in "${debs[@]}"; do
    dpkg-deb -x "$f" "$P" || { echo "carry-deps.sh: cannot unpack $f" >&2; return 1; }
    n=$((n + 1))
  done
  ln -sfn orterun "$P/usr/bin/mpiexec"
  ln -sfn orterun "$P/usr/bin/mpirun"
  ln -sfn opal_wrapper "$P/usr/bin/mpicc"
  ln -sfn pkgconf "$P/usr/bin/pkg-config"
  mkdir -p "$P/hdf5"
  ln -sfn "$P/usr/include/hdf5/serial" "$P/hdf5/include"
  ln -sfn "$P/usr/lib/$A/hdf5/serial" "$P/hdf5/lib"
  export OPAL_PREFIX="$P/usr" PMIX_PREFIX="$P/usr/lib/$A/pmix2"
  export PMIX_MCA_mca_base_component_path="$P/usr/lib/$A/pmix2/lib/pmix"
  export LD_LIBRARY_PATH="$P/usr/lib/$A:$P/lib/$A:$P/usr/lib/$A/hdf5/serial${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$P/usr/bin:$PATH"
  export PKG_CONFIG_LIBDIR="$P/usr/lib/$A/pkgconfig:$P/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$P"
  export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
  export CMAKE_PREFIX_PATH="$P/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export HDF5_ROOT="$P/hdf5"
  export CPATH="$P/usr/include/$A${CPATH:+:$CPATH}"
  DEPS_CMAKE_ARGS=(-DMPI_C_COMPILER="$P/usr/bin/mpicc.openmpi" -DMPIEXEC_EXECUTABLE="$P/usr/bin/orterun"
                   -DPKG_CONFIG_EXECUTABLE="$P/usr/bin/pkgconf" -DHDF5_C_COMPILER_EXECUTABLE=/nonexistent)
  echo "carry-deps.sh: $n packages unpacked under $P"
}

case "${1:-}" in
  download) shift; _carry_download "$@" ;;
  unpack) shift; _carry_unpack "$@" ;;
  *) echo "usage: bench/carry-deps.sh download DIR | source bench/carry-deps.sh unpack DIR PREFIX" >&2; false ;;
esac
