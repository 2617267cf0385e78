#!/usr/bin/env bash
# `make dist-check`: proves the artifacts `make dist` left in DIST_OUT.
#   1. SHA256SUMS and manifest.json match the files.
#   2. Portability (portability.py): every native library needs glibc <= 2.17,
#      links glibc and libgcc only, is stripped and at most 8 MB; auditwheel
#      finds each wheel manylinux_2_17.
#   3. x86_64, outside the repository, with no Rust toolchain on PATH, against
#      a broker: the C archive unpacked, C and C++ built with pkg-config and
#      CMake (ffi-c/tests-c/install/run.sh); the wheel in a fresh venv, the
#      Maven project with the jar, Go against the unpacked archive
#      (tools/test-install.sh).
#   4. aarch64 under qemu-user (check-aarch64.sh).
#   5. The sdist: pip builds it (with Rust) in a fresh venv, and it imports.
# Each step prints its time; the summary lists them.
#   environment (from tools/dist/dist.mk): DIST_OUT DIST_VERSION DIST_VENV
#   DIST_CHECK_WORK DIST_BROKER DIST_GLIBC
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tools/dist
abi=$(sed -n 's/^#define CURSUS_ABI_VERSION "\(.*\)"/\1/p' "$repo/include/cursus.h")
version=$DIST_VERSION
work=$(mktemp -d "${TMPDIR:-/tmp}/cursus-dist-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$work" in "$repo"/*) echo "dist-check: $work is inside the repository" >&2; exit 1 ;; esac
mkdir -p "$DIST_CHECK_WORK"

timings=()
started=$SECONDS
step_name=""
# Closes the running step (its time goes to the summary) and opens the next.
step() {
  if [[ -n "$step_name" ]]; then timings+=("$(printf '%5ds  %s' $((SECONDS - step_started)) "$step_name")"); fi
  step_name=$1; step_started=$SECONDS
  if [[ -n "$1" ]]; then printf '\n==== %s\n' "$1"; fi
}

step "checksums and manifest"
(cd "$DIST_OUT" && sha256sum --check --quiet SHA256SUMS)
python3 - "$DIST_OUT" <<'PY'
import json, pathlib, sys
dist = pathlib.Path(sys.argv[1])
listed = {a["file"] for a in json.loads((dist / "manifest.json").read_text())["artifacts"]}
present = {p.name for p in dist.iterdir()} - {"manifest.json", "SHA256SUMS"}
if listed != present:
    sys.exit(f"manifest.json lists {sorted(listed)}, the folder holds {sorted(present)}")
print(f"ok: {len(listed)} artifacts, each in SHA256SUMS and manifest.json")
PY

step "portability of every native library"
python3 "$here/portability.py" "$DIST_OUT" "$version" "$abi" "$DIST_VENV/bin/auditwheel"

# The local Maven repository of the Java checks: the dist jar and POM laid
# out as `mvn install` would, in a repository of its own (not ~/.m2, which
# may hold a development jar of the same version). Kept between runs, so
# Maven's plugins are downloaded once.
m2=$DIST_CHECK_WORK/m2
rm -rf "$m2/io/cursus"
mkdir -p "$m2/io/cursus/cursus/$version"
cp "$DIST_OUT/cursus-$version.jar" "$m2/io/cursus/cursus/$version/"
cp "$DIST_OUT/cursus-$version.pom" "$m2/io/cursus/cursus/$version/"
export JAVA_VERSION=$version MAVEN_REPO=$m2 MVN_FLAGS="-Dmaven.repo.local=$m2"

# The aarch64 CPython and JVM (Debian's arm64 packages, unpacked); fetched
# before the toolchain leaves PATH (apt needs none, but this is no user step).
step "aarch64 root (Debian's arm64 python3.11 and openjdk-17-jre-headless)"
"$here/arm64-root.sh" "$DIST_CHECK_WORK/arm64-root"

# Everything below runs as a user would: no cargo, no rustc.
saved_path=$PATH
no_rust_path=$(tr ':' '\n' <<<"$PATH" | while read -r d; do
  [[ -n "$d" && ! -x "$d/cargo" && ! -x "$d/rustc" ]] && echo "$d"; done | paste -sd: -)
export PATH=$no_rust_path
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "dist-check: a Rust toolchain is still on PATH" >&2; exit 1
fi
echo "PATH without Rust: $PATH"

for arch in x86_64 aarch64; do
  mkdir -p "$work/$arch"
  tar -xzf "$DIST_OUT/cursus-$version-linux-$arch.tar.gz" -C "$work/$arch"
done
prefix_x86_64=$work/x86_64/cursus-$version-linux-x86_64

step "x86_64: C and C++ against the unpacked archive (pkg-config, CMake)"
CURSUS_ARCHIVE=$DIST_OUT/cursus-$version-linux-x86_64.tar.gz "$repo/ffi-c/tests-c/install/run.sh" "$DIST_BROKER"

step "x86_64: Python (wheel, fresh venv), Java (Maven project, dist jar), Go (unpacked archive)"
PYTHON_WHEEL=$(ls "$DIST_OUT"/cursus-"$version"-*_x86_64.whl) CURSUS_PREFIX=$prefix_x86_64 \
  "$repo/ffi-c/tests-c/with-broker.sh" "$DIST_BROKER" "$repo/tools/test-install.sh" python java go

step "aarch64 under qemu-user: C, C++, Go, Python, Java"
DIST_AARCH64_PREFIX=$work/aarch64/cursus-$version-linux-aarch64 DIST_ARM64_ROOT=$DIST_CHECK_WORK/arm64-root \
  "$here/check-aarch64.sh"

step "sdist: pip builds it in a fresh venv (with Rust), and it imports"
# The toolchain comes back: building from source needs it. Its own target
# dir, kept between runs (a cold build is a full release build).
export PATH=$saved_path
python3 -m venv "$work/sdist-venv"
CARGO_TARGET_DIR=$DIST_CHECK_WORK/sdist-target "$work/sdist-venv/bin/pip" install -q --disable-pip-version-check \
  "$DIST_OUT/cursus-$version.tar.gz"
(cd "$work" && sdist-venv/bin/python -c "
import cursus
assert cursus.__version__ == '$version', cursus.__version__
print('sdist: import cursus', cursus.__version__, 'from', cursus.__file__)")

step ""
printf '\n==== dist-check: ok (%ds)\n' $((SECONDS - started))
printf '%s\n' "${timings[@]}"
