#!/usr/bin/env bash
# The aarch64 artifacts run under qemu-user against a broker on this (x86_64)
# host, as `make dist-check`'s step 4 (run by check.sh, no Rust on PATH):
#   C     hello.c built with zig cc for aarch64-linux-gnu.2.17 against the
#         unpacked archive (pkg-config; dynamic and static), C++ hello.cpp
#         with zig c++ (cursus++.pc); run with Debian's aarch64 glibc
#         (libc6-arm64-cross, /usr/aarch64-linux-gnu)
#   Go    the README program cross-built with cgo (GOARCH=arm64, zig cc)
#   Python  the aarch64 wheel, installed by pip for manylinux2014_aarch64,
#         run by Debian's arm64 CPython 3.11 (arm64-root.sh)
#   Java  the README program compiled by Maven against the dist jar, run by
#         Debian's arm64 OpenJDK 17, which loads the jar's linux-aarch64 library
#   environment: DIST_OUT DIST_VERSION DIST_VENV DIST_BROKER MAVEN_REPO MVN_FLAGS
#   JAVA_VERSION DIST_AARCH64_PREFIX (the unpacked archive) DIST_ARM64_ROOT
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/ffi-c/tests-c/install
sysroot=/usr/aarch64-linux-gnu
root=$DIST_ARM64_ROOT
prefix=$DIST_AARCH64_PREFIX
zig="$DIST_VENV/bin/python -m ziglang"
target=aarch64-linux-gnu.2.17
work=$(mktemp -d "${TMPDIR:-/tmp}/cursus-aarch64.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "check-aarch64: $*" >&2; exit 1; }
step() { printf '\n== aarch64: %s\n' "$*"; }

step "C and C++ built with zig for $target against $prefix"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir cursus)
cp "$here/hello.c" "$here/hello.cpp" "$work/"
(cd "$work" && set -x &&
  $zig cc -target $target -std=c11 -Wall -Wextra -Werror hello.c -o hello-c \
    $(pkg-config --cflags --libs cursus) -Wl,-rpath,"$libdir" &&
  $zig cc -target $target -std=c11 -Wall -Wextra -Werror hello.c -o hello-c-static \
    $(pkg-config --cflags cursus) "$libdir/libcursus.a" $(pkg-config --static --libs-only-l cursus | sed 's/-lcursus//') &&
  $zig c++ -target $target -Wall -Wextra -Werror hello.cpp -o hello-cpp \
    $(pkg-config --cflags --libs cursus++) -Wl,-rpath,"$libdir")
for p in hello-c hello-c-static hello-cpp; do
  file "$work/$p" | grep -q 'ARM aarch64' || fail "$p is not an aarch64 program: $(file "$work/$p")"
done
if objdump -p "$work/hello-c-static" | grep -q 'NEEDED.*libcursus'; then fail "hello-c-static needs libcursus.so"; fi

step "run them under qemu-aarch64 -L $sysroot"
"$repo/ffi-c/tests-c/with-broker.sh" "$DIST_BROKER" bash -c '
  set -e
  for program in hello-c hello-c-static hello-cpp; do
    echo "-- $program"
    qemu-aarch64 -L "$0" "$1/$program" "$CURSUS_TEST_BROKER"
  done' "$sysroot" "$work"

step "Go (cgo, GOARCH=arm64, CC=zig cc), Python (arm64 CPython 3.11), Java (arm64 OpenJDK 17)"
python3=$root/usr/bin/python3.11
java=$root/usr/lib/jvm/java-17-openjdk-arm64/bin/java
file -L "$python3" | grep -q 'ARM aarch64' || fail "$python3 is not an aarch64 program"
file -L "$java" | grep -q 'ARM aarch64' || fail "$java is not an aarch64 program"
# What the loader will see: the jar's linux-aarch64 library is the one to load.
qemu-aarch64 -L "$root" "$java" -XshowSettings:properties -version 2>&1 | grep -E '^ +os\.(arch|name) ='
qemu-aarch64 -L "$root" "$python3" -c 'import platform; print("python", platform.python_version(), platform.machine())'
GOARCH=arm64 CC="$zig cc -target $target" GO_EXEC="qemu-aarch64 -L $sysroot" CURSUS_PREFIX=$prefix \
  PYTHON_WHEEL=$(ls "$DIST_OUT"/cursus-"$DIST_VERSION"-*_aarch64.whl) \
  PYTHON_TARGET_RUN="qemu-aarch64 -L $root $python3" PYTHON_TARGET_PLATFORM=manylinux2014_aarch64 \
  PYTHON_TARGET_VERSION=3.11 JAVA_CMD="qemu-aarch64 -L $root $java" \
  "$repo/ffi-c/tests-c/with-broker.sh" "$DIST_BROKER" "$repo/tools/test-install.sh" go python java
echo
echo "check-aarch64: ok (C, C++, Go, Python and Java first programs ran under qemu-aarch64)"
