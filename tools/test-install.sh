#!/usr/bin/env bash
# Builds and runs a first program per language OUTSIDE the repository, the way
# a user would, against the installed artefacts:
#   rust    a Cargo project with a path dependency on core/
#   python  a fresh venv with the wheel installed by pip
#   go      a module with a replace directive, cgo flags from pkg-config
#   java    a Maven project resolving io.cursus:cursus from ~/.m2
#   c, cpp  pkg-config and CMake find_package against `make install PREFIX=`
# Each program connects to $CURSUS_TEST_BROKER (run under with-broker.sh).
#   usage: test-install.sh LANG...   (environment: see the Makefile's test-install)
set -euo pipefail
sdk=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cursus-first-program.XXXXXX")
trap 'rm -rf "$work"' EXIT

first_rust() {
  mkdir -p "$work/rust"
  cp -r "$sdk/tools/install-check/rust/src" "$work/rust/"
  sed "s#@SDK@#$sdk#" "$sdk/tools/install-check/rust/Cargo.toml.in" >"$work/rust/Cargo.toml"
  # The SDK's lock file and target dir: same dependency versions, no rebuild.
  cp "$sdk/Cargo.lock" "$work/rust/Cargo.lock"
  (cd "$work/rust" && CARGO_TARGET_DIR="$sdk/target" cargo run -q --bin first-cursus-program)
}

first_java() {
  mkdir -p "$work/java"
  cp -r "$sdk/tools/install-check/java/." "$work/java/"
  # Compiling resolves io.cursus:cursus from ~/.m2 (make install-java); the
  # program then runs with that jar, which carries the native library.
  (cd "$work/java" && mvn -B -ntp -q ${MVN_FLAGS:-} compile)
  jar="${MAVEN_REPO:-$HOME/.m2/repository}/io/cursus/cursus/$JAVA_VERSION/cursus-$JAVA_VERSION.jar"
  (cd "$work/java" && java -cp "target/classes:$jar" first.First)
}

for lang in "$@"; do
  echo "== first program: $lang (in $work/$lang)"
  "first_$lang"
done
