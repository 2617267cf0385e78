# Side by side with Apache Kafka (issue #20): included from the top-level
# Makefile, run from the repository root. Not part of `make test`.
#
#   make bench-peer     Kafka 4.1.1 (from Maven Central) and our broker, the
#                       same workloads against each: Python (confluent-kafka /
#                       cursus) and native (Kafka Java client / Rust engine).
#                       One table; target/bench/peer.json. See
#                       tools/bench-peer/README.md.
#
#   BENCH_PEER_RECORDS=N         Python produce/consume records (500,000)
#   BENCH_PEER_NATIVE_RECORDS=N  native produce/consume records (2,000,000)
#   BENCH_PEER_ROUNDTRIPS=M      round trips per latency row (2,000)
#
# The Kafka jars are fetched once with Maven into target/bench-peer/kafka-lib
# (a stamp file keeps a second run offline); confluent-kafka is installed into
# the venv (.venv, bindings-python/build.mk) for this target only.

BENCH_PEER_RECORDS        ?= 500000
BENCH_PEER_NATIVE_RECORDS ?= 2000000
BENCH_PEER_ROUNDTRIPS     ?= 2000
BENCH_PEER_CONFLUENT      := confluent-kafka==2.16.1
BENCH_PEER_TARGET         := $(abspath $(or $(CARGO_TARGET_DIR),target))
BENCH_PEER_DIR            := $(BENCH_PEER_TARGET)/bench-peer
BENCH_PEER_LIB            := $(BENCH_PEER_DIR)/kafka-lib
BENCH_PEER_LIB_STAMP      := $(BENCH_PEER_LIB)/.fetched
BENCH_PEER_PY_STAMP       := $(PY_VENV)/.cursus-bench-peer

.PHONY: bench-peer

$(BENCH_PEER_LIB_STAMP): tools/bench-peer/pom.xml
	rm -rf $(BENCH_PEER_LIB)
	mvn -q -B -f tools/bench-peer/pom.xml dependency:copy-dependencies \
	  -DincludeScope=runtime -DoutputDirectory=$(BENCH_PEER_LIB)
	@touch $@

$(BENCH_PEER_PY_STAMP): $(PY_TOOLS_STAMP)
	$(PY_BIN) -m pip install -q --disable-pip-version-check $(BENCH_PEER_CONFLUENT)
	@touch $@

bench-peer: $(BENCH_PEER_LIB_STAMP) $(BENCH_PEER_PY_STAMP)
	$(MAKE) --no-print-directory python-wheel CURSUS_PROFILE=release
	CARGO_TARGET_DIR=$(BENCH_PEER_TARGET) $(CARGO) build --release -p cursus-broker \
	  -p cursus --bin cursus-broker --example bench_native
	RUST_LOG=warn $(PY_BIN) tools/bench-peer/run.py \
	  --kafka-lib $(BENCH_PEER_LIB) --classes $(BENCH_PEER_DIR)/classes \
	  --broker-bin $(BENCH_PEER_TARGET)/release/cursus-broker \
	  --native-bin $(BENCH_PEER_TARGET)/release/examples/bench_native \
	  --records $(BENCH_PEER_RECORDS) --native-records $(BENCH_PEER_NATIVE_RECORDS) \
	  --roundtrips $(BENCH_PEER_ROUNDTRIPS) --out $(BENCH_PEER_TARGET)/bench/peer.json \
	  --command "make bench-peer BENCH_PEER_RECORDS=$(BENCH_PEER_RECORDS) BENCH_PEER_NATIVE_RECORDS=$(BENCH_PEER_NATIVE_RECORDS) BENCH_PEER_ROUNDTRIPS=$(BENCH_PEER_ROUNDTRIPS)"
