# Cursus SDK — the entry points a person uses. See README.md.
#
#   make test    every test (what CI runs): formatting, lints, all test suites,
#                conformance, first programs built outside the repository,
#                the documentation site built, link-checked and opened in
#                headless Chromium (make docs, make docs-check)
#   make bench   benchmarks; results in target/bench/*.json, charts in
#                target/bench/report.html
#   make docs    the documentation site into target/docs/site/, link-checked
#                (tools/docs/docs.mk); make docs-check opens it in Chromium
#   make fuzz    run every codec fuzz target for FUZZ_SECONDS each (nightly + cargo-fuzz)
#   make chaos   the crash-consistency suite for CHAOS_SECONDS (chaos/README.md)
#   make chaos-cluster  the same against a cluster, members killed (chaos/README.md)
#   make chaos-nemesis  the cluster under partitions, pauses and kills (chaos/README.md)
#   make trace-walkthrough  one trace from a Go producer to a Python consumer,
#                printed and checked (docs/observability.md)
#   make demo    a local broker and the quickstart in every language
#   make cluster a three-broker cluster on loopback until Ctrl-C
#   make dist    release artifacts for every language, Linux x86_64 and aarch64
#                (glibc 2.17), into target/dist/ (tools/dist/dist.mk)
#   make dist-check  proves them: glibc versions, links and sizes, the first
#                programs outside the repository with no Rust on PATH, and
#                under qemu-aarch64; the sdist built by pip. Not in `make
#                test` (2 cores: dist 21 min cold, 31 s warm; dist-check
#                7 min with a cold sdist build, 5 min warm), which keeps the
#                x86_64 first programs in test-install
#   make bridge-gen        rewrite the files generated from bridge/src/api (C and JNI
#                          entry points, NativeBridge.java, every language's result shapes)
#   make bridge-gen-check  fail when one of them is stale (part of `make lint`)

SHELL := /bin/bash
CARGO ?= cargo
FUZZ_SECONDS ?= 60
CHAOS_SECONDS ?= 60
# Empty: a seed from the clock (printed, to rerun with CHAOS_SEED=…).
CHAOS_SEED ?=
SOAK_SECONDS ?= 120
FUZZ_TARGETS := wire/frame wire/batch wire/record wire/command wire/error broker/request_path

# Build profile of the engine, broker and bindings: debug for the tests,
# release for the binding benchmarks (`make bench` passes CURSUS_PROFILE=release).
CURSUS_PROFILE ?= debug
CARGO_PROFILE_FLAG := $(if $(filter release,$(CURSUS_PROFILE)),--release)

.PHONY: all build test test-install test-rust chaos test-chaos lint fmt-check clippy doc-check bridge-gen bridge-gen-check bench bench-bindings fuzz fuzz-build demo quickstart-rust cluster clean

all: build

# Each binding owns its build and test recipes.
include ffi-c/build.mk
include bindings-python/build.mk
include bindings-java/build.mk
include conformance/build.mk
include tools/bench-peer/build.mk
include tools/dist/dist.mk
include tools/docs/docs.mk
include examples/trace-walkthrough/walkthrough.mk

build:
	$(CARGO) build --workspace --all-targets

test: lint test-rust test-chaos test-ffi test-python trace-walkthrough-run test-java conformance test-install docs docs-check

# First programs built outside the repository from the installed artefacts,
# the way a user would: C and C++ (pkg-config, CMake) against `make install`
# into a temporary prefix (the dev build, to spare CI a release build), then
# Rust, Python (wheel in a fresh venv), Go (module with a replace directive)
# and Java (Maven project resolving the jar from ~/.m2), against one broker.
test-install: INSTALL_PROFILE := debug
test-install: test-install-c python-wheel install-java
	JAVA_VERSION=$(JAVA_VERSION) CURSUS_PREFIX=$(FFI_OUT) \
	  PYTHON_WHEEL=$$(ls $(PY_WHEELS)/cursus-*.whl) \
	  $(FFI_WITH_BROKER) tools/test-install.sh rust python go java

lint: fmt-check bridge-gen-check clippy doc-check

bridge-gen:
	CURSUS_UPDATE_GENERATED=1 $(CARGO) test -q -p cursus-bridge-gen --test generated

bridge-gen-check:
	$(CARGO) test -q -p cursus-bridge-gen --test generated

fmt-check:
	$(CARGO) fmt --all -- --check

# The second run lints the OpenTelemetry layer (cargo feature `otel` of
# `cursus`), which no crate of the workspace enables.
clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p cursus --all-targets --features otel -- -D warnings

# The Rust crates users read: no broken links, every public item documented.
doc-check:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps -p cursus -p cursus-wire -p cursus-bridge --features cursus/otel

# The OpenTelemetry layer's tests need the feature `otel` (one more build
# of `cursus` and one test binary, about a second of tests).
test-rust:
	$(CARGO) test --workspace
	$(CARGO) test -p cursus --features otel --test engine_otel

# Workloads against a broker killed with SIGKILL at random moments, then a
# check of everything acknowledged (chaos/README.md). Debug builds: the
# broker is the one `cargo test --workspace` already built.
chaos:
	$(CARGO) build -q -p cursus-broker --bin cursus-broker
	$(CARGO) run -q -p cursus-chaos -- --seconds $(CHAOS_SECONDS) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

# The nemesis run replaces the 20 s kill-only cluster run here: it is that
# run (same members, workloads and checker) with partitions and pauses
# added to the kills, so 60 s of it covers both within the CI budget.
test-chaos:
	$(MAKE) --no-print-directory chaos CHAOS_SECONDS=30
	$(MAKE) --no-print-directory chaos-nemesis CHAOS_SECONDS=60

# The same against three data brokers and a gateway, one member SIGKILLed
# at a time, the Raft leader included (chaos/README.md, "The cluster run");
# `make test` runs the nemesis run instead (it kills as well).
.PHONY: chaos-cluster
chaos-cluster:
	$(CARGO) build -q -p cursus-broker --bin cursus-broker
	$(CARGO) run -q -p cursus-chaos -- --cluster --seconds $(CHAOS_SECONDS) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

# The cluster run with the nemesis as well: network partitions between
# members (through fault-injecting proxies), SIGSTOP/SIGCONT pauses past
# the session, kills, kills during a partition (chaos/README.md, "The
# nemesis run"); `make test` runs 60 s of it.
.PHONY: chaos-nemesis
chaos-nemesis:
	$(CARGO) build -q -p cursus-broker --bin cursus-broker
	$(CARGO) run -q -p cursus-chaos -- --nemesis --seconds $(CHAOS_SECONDS) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

bench:
	$(CARGO) bench -p cursus-wire --bench wire
	python3 tools/bench-summary.py target
	$(CARGO) build --release -p cursus-broker -p cursus-chaos
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker \
	  $(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-chaos soak --seconds $(SOAK_SECONDS) \
	  --out $(abspath $(or $(CARGO_TARGET_DIR),target))/bench/soak.json
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench engine
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench latency
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench memory
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench transactions
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --features otel --bench otel
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench eventstore
	CURSUS_BROKER_BIN=$(abspath $(or $(CARGO_TARGET_DIR),target))/release/cursus-broker $(CARGO) bench -p cursus --bench cluster
	$(CARGO) bench -p cursus-broker --bench throughput
	$(MAKE) --no-print-directory bench-bindings
	python3 tools/bench-table.py $(abspath $(or $(CARGO_TARGET_DIR),target))
	$(MAKE) --no-print-directory bench-report

# target/bench/report.html: the figures of target/bench/*.json as charts
# (tools/bench-report.py; matplotlib, pinned, in the docs tools' venv). A
# chart whose file is missing says "not measured": it works after a partial
# run, and `make bench-peer` rewrites it with the Kafka rows. Without a
# benchmark run: `make bench-report BENCH_RECORD=docs/figures/performance.json`
# draws the checked-in figures of record instead (docs/figures/README.md).
.PHONY: bench-report
bench-report: $(DOCS_VENV_STAMP)
	$(DOCS_PY) tools/bench-report.py $(abspath $(or $(CARGO_TARGET_DIR),target)) \
	  $(if $(BENCH_RECORD),--from-record $(BENCH_RECORD))

# The binding benches (C, Go, the C ABI from Rust, Python, Java; release
# builds) BENCH_RUNS times, each run's files kept under target/bench/runs/<i>/,
# then the median of every figure written to target/bench/ by
# tools/bench-median.py (one run's binding ÷ engine ratio moves by ±20 % on
# a two-core machine; the ratios' min and max go along).
BENCH_RUNS ?= 3
BENCH_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))/bench
BENCH_BINDING_FILES := ffi.json go.json ffi-rust.json engine-ref-c.json engine-ref-go.json python.json java.json
bench-bindings:
	rm -rf $(BENCH_DIR)/runs
	for i in $$(seq 1 $(BENCH_RUNS)); do \
	  $(MAKE) --no-print-directory bench-ffi bench-python bench-java CURSUS_PROFILE=release || exit 1; \
	  mkdir -p $(BENCH_DIR)/runs/$$i || exit 1; \
	  for f in $(BENCH_BINDING_FILES); do cp $(BENCH_DIR)/$$f $(BENCH_DIR)/runs/$$i/ || exit 1; done; \
	done
	python3 tools/bench-median.py $(BENCH_DIR) $(BENCH_DIR)/runs/*

# Long, coverage-guided fuzzing: FUZZ_SECONDS per target, the wire codec
# targets (wire/fuzz) and the broker's whole request path in-process
# (broker/fuzz, request_path). Each run starts from the committed seeds
# (<crate>/fuzz/seeds/<target>, read-only) and grows <crate>/fuzz/corpus/<target>
# (ignored by git). `make test` runs every target briefly on stable Rust
# (wire/tests/fuzz_short.rs, broker/tests/fuzz_short.rs, same bodies).
# Needs a nightly toolchain and cargo-fuzz; installed here on first use.
fuzz-build:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	cd wire && $(CARGO) +nightly fuzz build
	cd broker && $(CARGO) +nightly fuzz build

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  crate=$${t%%/*}; target=$${t#*/}; \
	  echo "== fuzz $$crate $$target ($(FUZZ_SECONDS)s)"; \
	  mkdir -p $$crate/fuzz/corpus/$$target; \
	  (cd $$crate && $(CARGO) +nightly fuzz run $$target fuzz/corpus/$$target fuzz/seeds/$$target -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048) || exit 1; \
	done

# Builds what the quickstarts need (venv, Maven dependencies, libcursus,
# broker), then runs every language's quickstart against one local broker.
DEMO_BOOTSTRAP ?= 127.0.0.1:9000
DEMO_LANGUAGES ?= rust,c,cpp,go,python,java

demo: ffi-lib python-wheel jar-java
	$(CARGO) build -p cursus-broker -p cursus --example quickstart
	python3 tools/demo.py --languages $(DEMO_LANGUAGES)

quickstart-rust:
	$(CARGO) run -q -p cursus --example quickstart -- $(DEMO_BOOTSTRAP)

# Three brokers in distributed mode on loopback (tools/cluster.py), in the
# foreground until Ctrl-C: broker N on client port CLUSTER_CLIENT_PORT+N-1,
# health CLUSTER_HEALTH_PORT+N-1, cluster (Raft, replication)
# CLUSTER_PEER_PORT+N-1, data and log under CLUSTER_DIR/node-N (kept between
# runs; CLUSTER_FRESH=1 empties them first). Debug build of the broker.
CLUSTER_HOST ?= 127.0.0.1
CLUSTER_CLIENT_PORT ?= 9101
CLUSTER_HEALTH_PORT ?= 9181
CLUSTER_PEER_PORT ?= 7101
CLUSTER_DIR ?= $(abspath $(or $(CARGO_TARGET_DIR),target))/cluster
CLUSTER_FRESH ?=

cluster:
	$(CARGO) build -p cursus-broker --bin cursus-broker
	python3 tools/cluster.py --broker-bin $(abspath $(or $(CARGO_TARGET_DIR),target))/debug/cursus-broker \
	  --host $(CLUSTER_HOST) --client-port $(CLUSTER_CLIENT_PORT) --health-port $(CLUSTER_HEALTH_PORT) \
	  --cluster-port $(CLUSTER_PEER_PORT) --data-dir $(CLUSTER_DIR) $(if $(CLUSTER_FRESH),--fresh)

clean:
	$(CARGO) clean
