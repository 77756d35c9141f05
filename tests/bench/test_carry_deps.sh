#!/usr/bin/env bash
# bench/carry-deps.sh's unpack half (docs/development.md, "A GPU machine without dpgnn's
# libraries"), on two small packages made here with dpkg-deb in Debian's layout (the real
# download needs a package registry): everything lands under the prefix, the launcher names
# exist, the HDF5 view, pkg-config's sysroot, CPATH and the exported variables point into the
# prefix, and the CMake arguments name the prefix's tools. Also the two refusals.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
script="$repo/bench/carry-deps.sh"
work="$(mktemp -d /tmp/dpgnn-carry-deps.XXXXXX)"
trap 'rm -rf "$work"' EXIT
fail() { echo "test_carry_deps: FAIL: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "test_carry_deps: no dpkg-deb: skipped"; exit 77; }
command -v pkgconf >/dev/null || { echo "test_carry_deps: no pkgconf: skipped"; exit 77; }
A=x86_64-linux-gnu

# Two packages in Debian's layout: an "MPI" (launcher, wrapper, pkg-config binary) and a "library"
# with HDF5's serial folders, a .pc file saying prefix=/usr and gmp.h in the multiarch folder.
mk() {  # name: package the tree under $work/src/name into $work/debs/name.deb
  mkdir -p "$work/src/$1/DEBIAN" "$work/debs"
  printf 'Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: test <t@t>\nDescription: test\n' "$1" \
    >"$work/src/$1/DEBIAN/control"
  dpkg-deb --build --root-owner-group "$work/src/$1" "$work/debs/$1.deb" >/dev/null
}
d="$work/src/fake-mpi"
mkdir -p "$d/usr/bin"
printf '#!/bin/sh\necho orterun\n' >"$d/usr/bin/orterun"
printf '#!/bin/sh\necho opal_wrapper\n' >"$d/usr/bin/opal_wrapper"
ln -s opal_wrapper "$d/usr/bin/mpicc.openmpi"
cp "$(command -v pkgconf)" "$d/usr/bin/pkgconf"
chmod +x "$d/usr/bin/orterun" "$d/usr/bin/opal_wrapper"
mk fake-mpi
d="$work/src/fake-lib"
mkdir -p "$d/usr/include/hdf5/serial" "$d/usr/lib/$A/hdf5/serial" "$d/usr/lib/$A/pkgconfig" "$d/usr/include/$A" \
  "$d/usr/include/fakelib"
echo '/* hdf5 */' >"$d/usr/include/hdf5/serial/hdf5.h"
: >"$d/usr/lib/$A/hdf5/serial/libhdf5.so"
echo '/* gmp */' >"$d/usr/include/$A/gmp.h"
cat >"$d/usr/lib/$A/pkgconfig/fakelib.pc" <<'PC'
prefix=/usr
includedir=${prefix}/include/fakelib
libdir=${prefix}/lib/x86_64-linux-gnu
Name: fakelib
Description: test
Version: 1
Cflags: -I${includedir}
Libs: -L${libdir} -lfakelib
PC
mk fake-lib

P="$work/prefix"
# shellcheck disable=SC1090
out="$(source "$script" unpack "$work/debs" "$P" && {
  echo "OPAL_PREFIX=$OPAL_PREFIX"; echo "PMIX_PREFIX=$PMIX_PREFIX"; echo "HDF5_ROOT=$HDF5_ROOT"
  echo "CPATH=$CPATH"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; echo "CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"
  echo "PATH_FIRST=${PATH%%:*}"; echo "ARGS=${DEPS_CMAKE_ARGS[*]}"
  echo "MPIEXEC=$(mpiexec)"; echo "CFLAGS=$(pkg-config --cflags fakelib | sed "s/ *$//")"; echo "LIBS=$(pkg-config --libs fakelib | sed "s/ *$//")"
})" || fail "unpack failed: $out"
echo "$out"
has() { grep -qxF -- "$1" <<<"$out" || fail "expected the line '$1'"; }
has "carry-deps.sh: 2 packages unpacked under $P"
has "OPAL_PREFIX=$P/usr"
has "PMIX_PREFIX=$P/usr/lib/$A/pmix2"
has "HDF5_ROOT=$P/hdf5"
has "PATH_FIRST=$P/usr/bin"
has "MPIEXEC=orterun"
has "CFLAGS=-I$P/usr/include/fakelib"
has "LIBS=-L$P/usr/lib/$A -lfakelib"
grep -q "^CPATH=$P/usr/include/$A" <<<"$out" || fail "CPATH does not start with the multiarch include folder"
grep -q "^LD_LIBRARY_PATH=$P/usr/lib/$A:" <<<"$out" || fail "LD_LIBRARY_PATH does not start with the prefix"
grep -q "^CMAKE_PREFIX_PATH=$P/usr" <<<"$out" || fail "CMAKE_PREFIX_PATH does not start with the prefix"
grep -q -- "-DMPI_C_COMPILER=$P/usr/bin/mpicc.openmpi" <<<"$out" || fail "DEPS_CMAKE_ARGS lacks the prefix's mpicc"
grep -q -- "-DPKG_CONFIG_EXECUTABLE=$P/usr/bin/pkgconf" <<<"$out" || fail "DEPS_CMAKE_ARGS lacks the prefix's pkgconf"
[ -f "$P/hdf5/include/hdf5.h" ] && [ -f "$P/hdf5/lib/libhdf5.so" ] || fail "no HDF5 view under $P/hdf5"
for l in mpiexec mpirun mpicc pkg-config; do [ -L "$P/usr/bin/$l" ] || fail "no $P/usr/bin/$l"; done
# Nothing outside the prefix: every file the packages hold is under it.
n_src=$(cd "$work/src" && find fake-mpi fake-lib -path '*/DEBIAN' -prune -o \( -type f -o -type l \) -print | wc -l)
n_p=$(find "$P/usr" \( -type f -o -type l \) | wc -l)
[ "$n_p" -ge "$n_src" ] || fail "$n_src files in the packages, $n_p under $P/usr"

# The refusals: a folder without packages, and no verb.
mkdir -p "$work/empty"
if msg="$(source "$script" unpack "$work/empty" "$work/p2" 2>&1)"; then fail "unpack of an empty folder succeeded"; fi
grep -q "no .deb files in $work/empty" <<<"$msg" || fail "empty folder: $msg"
if msg="$(bash "$script" 2>&1)"; then fail "no verb succeeded"; fi
grep -q "usage:" <<<"$msg" || fail "no verb: $msg"
echo "test_carry_deps: ok"
