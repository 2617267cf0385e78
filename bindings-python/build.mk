# Python binding (bindings-python): included from the top-level Makefile,
# run from the repository root.
#
#   make test-python    venv + tools, wheel built and installed, broker and
#                       cursus-test-pki built, pytest against the real broker
#                       (TLS tests: a secure one with a PKI made at test time),
#                       mypy --strict on the examples and tests (and the trace
#                       walk-through's Python), and on the
#                       package itself (its stubs and the CLI)
#   make bench-python   records/s produced (per record, batch) and consumed
#                       from Python, send-call cost and idle RSS, next to the
#                       engine's on the same broker (target/bench/python.json)
#
# The venv is .venv at the root (git-ignored); tool versions are pinned
# (opentelemetry-api and -sdk: tests/test_otel.py, the `otel` extra).

PY_VENV        ?= .venv
PY_BIN         := $(PY_VENV)/bin/python
PY_TOOLS       := maturin==1.7.4 pytest==8.3.3 pytest-timeout==2.3.1 mypy==1.13.0 \
                  opentelemetry-api==1.45.2 opentelemetry-sdk==1.45.2
PY_TOOLS_STAMP := $(PY_VENV)/.cursus-python-tools
PY_TARGET      := $(abspath $(or $(CARGO_TARGET_DIR),target))
PY_WHEELS      := $(PY_TARGET)/wheels-python
PY_BROKER_BIN  := $(PY_TARGET)/$(or $(CURSUS_PROFILE),debug)/cursus-broker
# Writes the test PKI of the TLS tests (tests/test_security.py) at test time.
PY_PKI_BIN     := $(PY_TARGET)/$(or $(CURSUS_PROFILE),debug)/cursus-test-pki

.PHONY: test-python python-wheel bench-python quickstart-python

# Depends on this file: a venv made before a tool was added gets it.
$(PY_TOOLS_STAMP): bindings-python/build.mk
	@test -x $(PY_BIN) || python3 -m venv $(PY_VENV)
	$(PY_BIN) -m pip install -q --disable-pip-version-check $(PY_TOOLS)
	@touch $@

# Builds the abi3 wheel (dev profile, or release with CURSUS_PROFILE=release)
# and installs it into the venv.
python-wheel: $(PY_TOOLS_STAMP)
	rm -rf $(PY_WHEELS)
	CARGO_TARGET_DIR=$(PY_TARGET) $(PY_BIN) -m maturin build --quiet $(CARGO_PROFILE_FLAG) \
	  -m bindings-python/Cargo.toml -i $(PY_BIN) --out $(PY_WHEELS)
	$(PY_BIN) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
	  $(PY_WHEELS)/cursus-*.whl

test-python: python-wheel
	CARGO_TARGET_DIR=$(PY_TARGET) $(CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-broker \
	  -p cursus-testkit --bin cursus-broker --bin cursus-test-pki
	cd bindings-python && CURSUS_BROKER_BIN=$(PY_BROKER_BIN) CURSUS_TEST_PKI_BIN=$(PY_PKI_BIN) \
	  $(abspath $(PY_BIN)) -m pytest tests -p no:cacheprovider --timeout 300 -q
	$(PY_BIN) -m mypy --strict --cache-dir $(PY_TARGET)/mypy-python bindings-python/examples bindings-python/tests examples/trace-walkthrough
	$(PY_BIN) -m mypy --strict --cache-dir $(PY_TARGET)/mypy-python-package \
	  --python-executable $(abspath $(PY_BIN)) bindings-python/python/cursus

PY_BENCH_RECORDS ?= 200000
bench-python: python-wheel
	CARGO_TARGET_DIR=$(PY_TARGET) $(CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-broker
	CARGO_TARGET_DIR=$(PY_TARGET) $(CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-ffi --example bench_send
	CURSUS_BUILD_PROFILE=$(or $(CURSUS_PROFILE),debug) CURSUS_BROKER_BIN=$(PY_BROKER_BIN) \
	  CURSUS_ENGINE_BENCH_BIN=$(PY_TARGET)/$(or $(CURSUS_PROFILE),debug)/examples/bench_send \
	  $(PY_BIN) bindings-python/bench/bench.py --records $(PY_BENCH_RECORDS) --out $(PY_TARGET)/bench/python.json

# The quickstart `make demo` runs (DEMO_BOOTSTRAP from the top-level Makefile).
quickstart-python: python-wheel
	$(PY_BIN) bindings-python/examples/quickstart.py $(DEMO_BOOTSTRAP)
