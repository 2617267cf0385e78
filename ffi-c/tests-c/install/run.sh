#!/usr/bin/env bash
# `make test-install-c`: installs libcursus (`make install`, the release
# build unless INSTALL_PROFILE=debug) into a fresh temporary prefix outside the repository, moves it
# (the installation must be relocatable), checks its layout, then builds
#   - hello.c with pkg-config (cursus.pc), dynamically and statically,
#   - hello.cpp with pkg-config (cursus++.pc),
#   - hello.cpp and hello.c with CMake find_package(cursus),
# each in its own temporary folder, and runs them against a fresh broker.
# With CURSUS_ARCHIVE=cursus-<version>-linux-<arch>.tar.gz (`make dist`), the
# layout is that archive unpacked instead of `make install`'s, and its LICENSE
# and README are checked too (`make dist-check`).
#   usage: run.sh BROKER_BIN   (or, with CURSUS_TEST_BROKER set: run.sh)
set -euo pipefail
broker_bin=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cursus-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$work" in "$repo"/*) echo "test-install: $work is inside the repository" >&2; exit 1 ;; esac

step() { printf '\n== %s\n' "$*"; }
fail() { echo "test-install: $*" >&2; exit 1; }

step "the README's first program is hello.c"
readme_program=$("$repo/tools/readme-block.sh" "$repo/ffi-c/README.md")
if ! diff <(printf '%s\n' "$readme_program") <(sed '1,/\*\//d' "$here/hello.c"); then
  fail "ffi-c/README.md's first program differs from hello.c (above)"
fi
echo ok

prefix=$work/prefix
if [[ -n "${CURSUS_ARCHIVE:-}" ]]; then
  step "unpack $(basename "$CURSUS_ARCHIVE")"
  mkdir "$work/staged"
  tar -xzf "$CURSUS_ARCHIVE" -C "$work/staged"
  top=$(basename "$CURSUS_ARCHIVE" .tar.gz)
  [[ "$(ls "$work/staged")" == "$top" ]] || fail "the archive holds more than $top/"
  mv "$work/staged/$top" "$prefix"
  for f in LICENSE README.md; do [[ -s "$prefix/$f" ]] || fail "the archive has no $f"; done
else
  step "make install PREFIX=$work/staged"
  "${MAKE:-make}" -C "$repo" --no-print-directory install PREFIX="$work/staged"
  mv "$work/staged" "$prefix"   # nothing may point back at where it was installed
fi

step "layout of $prefix"
version=$(sed -n 's/^#define CURSUS_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/cursus.h")
abi=$(sed -n 's/^#define CURSUS_ABI_VERSION "\(.*\)"/\1/p' "$prefix/include/cursus.h")
for f in include/cursus.h include/cursus.hpp include/cursus/error.hpp include/cursus/consumer.hpp "lib/libcursus.so.$version" lib/libcursus.a \
         lib/pkgconfig/cursus.pc lib/pkgconfig/cursus++.pc \
         lib/cmake/cursus/cursusConfig.cmake lib/cmake/cursus/cursusConfigVersion.cmake; do
  [[ -f "$prefix/$f" ]] || fail "missing $f"
done
[[ "$(readlink "$prefix/lib/libcursus.so.$abi")" == "libcursus.so.$version" ]] || fail "libcursus.so.$abi is not a link to libcursus.so.$version"
[[ "$(readlink "$prefix/lib/libcursus.so")" == "libcursus.so.$abi" ]] || fail "libcursus.so is not a link to libcursus.so.$abi"
soname=$(objdump -p "$prefix/lib/libcursus.so.$version" | awk '$1 == "SONAME" {print $2}')
[[ "$soname" == "libcursus.so.$abi" ]] || fail "SONAME is '$soname', expected libcursus.so.$abi"
if objdump -p "$prefix/lib/libcursus.so.$version" | grep -Eq '^ *(RPATH|RUNPATH) '; then fail "libcursus has an rpath"; fi
if grep -rn -e "$repo" -e "$work/staged" "$prefix/lib/pkgconfig" "$prefix/lib/cmake"; then
  fail "the package files name a build or staging folder"
fi
if grep -n -e '-Wl,-rpath' -e 'rpath' "$prefix/lib/pkgconfig/"*.pc; then fail "the .pc files set an rpath"; fi
echo "ok: headers, libcursus.so.$version (SONAME libcursus.so.$abi, no rpath), libcursus.a, cursus.pc, cursus++.pc, CMake package"

step "C with pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ "$(pkg-config --modversion cursus)" == "$version" ]] || fail "pkg-config --modversion cursus"
mkdir "$work/c" && cp "$here/hello.c" "$work/c/"
libdir=$(pkg-config --variable=libdir cursus)
# The prefix is not a system library folder: the program carries an rpath
# to it (or run it with LD_LIBRARY_PATH).
(cd "$work/c" && set -x &&
  cc -std=c11 -Wall -Wextra -Werror hello.c -o hello $(pkg-config --cflags --libs cursus) -Wl,-rpath,"$libdir")
# Static: libcursus.a and the system libraries of Libs.private.
(cd "$work/c" && set -x &&
  cc -std=c11 -Wall -Wextra -Werror hello.c -o hello-static $(pkg-config --cflags cursus) \
    "$libdir/libcursus.a" $(pkg-config --static --libs-only-l cursus | sed 's/-lcursus//'))
if objdump -p "$work/c/hello-static" | grep -q 'NEEDED.*libcursus'; then fail "hello-static needs libcursus.so"; fi

step "C++ with pkg-config (cursus++)"
mkdir "$work/cpp-pc" && cp "$here/hello.cpp" "$work/cpp-pc/"
(cd "$work/cpp-pc" && set -x &&
  c++ -std=c++14 -Wall -Wextra -Werror hello.cpp -o hello $(pkg-config --cflags --libs cursus++) -Wl,-rpath,"$libdir")

step "C++ and C with CMake find_package(cursus)"
mkdir "$work/cmake" && cp "$here/hello.cpp" "$here/hello.c" "$here/CMakeLists.txt" "$work/cmake/"
# C++14 asked for, C++17 needed: cursus::cursus++ must raise it (as the
# -std=c++14 above shows cursus++.pc does).
cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_STANDARD=14 -DCMAKE_CXX_EXTENSIONS=OFF >/dev/null
cmake --build "$work/cmake/build"

step "run them against a broker"
# Under with-broker.sh already (CURSUS_TEST_BROKER set): that broker;
# otherwise a fresh one of BROKER_BIN.
broker_cmd=("$repo/ffi-c/tests-c/with-broker.sh" "$broker_bin")
[[ -n "${CURSUS_TEST_BROKER:-}" ]] && broker_cmd=()
"${broker_cmd[@]}" bash -c '
  set -e
  for program in "$@"; do
    echo "-- $program"
    "$program" "$CURSUS_TEST_BROKER"
  done' run "$work/c/hello" "$work/c/hello-static" "$work/cpp-pc/hello" \
  "$work/cmake/build/hello_cpp" "$work/cmake/build/hello_c"
echo
echo "test-install: ok (installed, relocated, built with pkg-config and CMake outside the repository, ran)"
