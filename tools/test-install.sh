#!/usr/bin/env bash
# Builds and runs a first program per language OUTSIDE the repository, the way
# a user would, against the installed artefacts:
#   rust    a Cargo project with a path dependency on core/
#   python  a fresh venv with the wheel installed by pip (the README program)
#   go      a module with a replace directive, cgo flags from pkg-config (the README program)
#   java    a Maven project resolving io.cursus:cursus from ~/.m2 (the README program)
#   (c, cpp: ffi-c/tests-c/install/run.sh, pkg-config and CMake find_package
#    against `make install PREFIX=`; `make test-install` runs both)
# Each program connects to $CURSUS_TEST_BROKER (run under with-broker.sh).
#   usage: test-install.sh LANG...   (environment: see the Makefile's test-install)
#     JAVA_VERSION    the io.cursus:cursus version in ~/.m2 (java)
#     PYTHON_WHEEL    the wheel file (python)
#     CURSUS_PREFIX   an installed libcursus layout (go)
#   For another architecture run under emulation (tools/dist/check-aarch64.sh):
#     JAVA_CMD        the java launcher (default: java)
#     GO_EXEC         the program that runs the built Go binary (go run -exec);
#                     GOARCH and CC come from the environment
#     PYTHON_TARGET_RUN       an interpreter command for another platform; the
#                             wheel is then installed for PYTHON_TARGET_PLATFORM
#                             and PYTHON_TARGET_VERSION (pip --target) into a
#                             folder on its PYTHONPATH instead of a venv
set -euo pipefail
sdk=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cursus-first-program.XXXXXX")
trap 'rm -rf "$work"' EXIT

readme_block() { "$sdk/tools/readme-block.sh" "$1"; }

first_rust() {
  mkdir -p "$work/rust"
  cp -r "$sdk/tools/install-check/rust/src" "$work/rust/"
  sed "s#@SDK@#$sdk#" "$sdk/tools/install-check/rust/Cargo.toml.in" >"$work/rust/Cargo.toml"
  # The SDK's lock file and target dir: same dependency versions, no rebuild.
  cp "$sdk/Cargo.lock" "$work/rust/Cargo.lock"
  (cd "$work/rust" && CARGO_TARGET_DIR="$sdk/target" cargo run -q --bin first-cursus-program)
}

first_java() {
  mkdir -p "$work/java/src/main/java/first"
  cp "$sdk/tools/install-check/java/pom.xml" "$work/java/"
  # The program is the README's: what a user copies is what is tested.
  readme_block "$sdk/bindings-java/README.md" >"$work/java/src/main/java/first/First.java"
  # Compiling resolves io.cursus:cursus from ~/.m2 (make install-java); the
  # program then runs with that jar, which carries the native library.
  (cd "$work/java" && mvn -B -ntp -q ${MVN_FLAGS:-} compile)
  jar="${MAVEN_REPO:-$HOME/.m2/repository}/io/cursus/cursus/$JAVA_VERSION/cursus-$JAVA_VERSION.jar"
  (cd "$work/java" && ${JAVA_CMD:-java} -cp "target/classes:$jar" first.First)
}

first_python() {
  mkdir -p "$work/python"
  readme_block "$sdk/bindings-python/README.md" | sed "s#127.0.0.1:9000#$CURSUS_TEST_BROKER#" >"$work/python/first.py"
  if [[ -n "${PYTHON_TARGET_RUN:-}" ]]; then
    # Another platform's interpreter: pip installs the wheel as for that
    # platform (it refuses one that does not fit) into a folder on its path.
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-index --no-deps --only-binary=:all: \
      --platform "$PYTHON_TARGET_PLATFORM" --python-version "$PYTHON_TARGET_VERSION" --implementation cp \
      --target "$work/python/site" "$PYTHON_WHEEL"
    (cd "$work/python" && PYTHONPATH=site $PYTHON_TARGET_RUN first.py)
    return
  fi
  # A fresh venv: only the wheel and what it declares.
  python3 -m venv "$work/python/venv"
  "$work/python/venv/bin/pip" install -q --disable-pip-version-check --no-index "$PYTHON_WHEEL"
  (cd "$work/python" && venv/bin/python first.py)
}

first_go() {
  mkdir -p "$work/go"
  sed "s#@SDK@#$sdk#" "$sdk/tools/install-check/go/go.mod.in" >"$work/go/go.mod"
  # The README's program, pointed at the test broker.
  readme_block "$sdk/ffi-c/go/README.md" | sed "s#127.0.0.1:9000#$CURSUS_TEST_BROKER#" >"$work/go/main.go"
  # cgo flags from pkg-config (cursus.pc of the installed layout); the rpath
  # finds libcursus.so at run time.
  (cd "$work/go" && CGO_ENABLED=1 PKG_CONFIG_PATH="$CURSUS_PREFIX/lib/pkgconfig" \
    CGO_LDFLAGS="-Wl,-rpath,$CURSUS_PREFIX/lib" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
    go run ${GO_EXEC:+-exec "$GO_EXEC"} .)
}

for lang in "$@"; do
  echo "== first program: $lang (in $work/$lang)"
  "first_$lang"
done
