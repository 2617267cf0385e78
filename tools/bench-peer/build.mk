# Side by side with Apache Kafka (issue #20): included from the top-level
# Makefile, run from the repository root. Not part of `make test`.
#
#   make bench-peer     Kafka 4.1.1 (from Maven Central) and our broker, the
#                       same workloads against each, every language against
#                       its own Kafka client: Python (confluent-kafka /
#                       cursus), native (Kafka Java client / Rust engine),
#                       C and C++ (librdkafka, librdkafka++ / libcursus,
#                       cursus++), Go (franz-go / our Go package), Java
#                       (Kafka Java client / our jar). One table;
#                       target/bench/peer.json. See tools/bench-peer/README.md.
#
#   BENCH_PEER_RECORDS=N         Python produce/consume records (500,000)
#   BENCH_PEER_NATIVE_RECORDS=N  native, C, C++, Go and Java records (2,000,000)
#   BENCH_PEER_ROUNDTRIPS=M      round trips per latency row (2,000)
#   BENCH_PEER_TXN_RECORDS=N     records per transactional run (200,000)
#   BENCH_PEER_CLUSTER_RECORDS=N acks=all records of the cluster rows (500,000)
#   BENCH_PEER_EVENTS=N          appends of the event-store rows (20,000)
#
# The Kafka jars are fetched once with Maven into target/bench-peer/kafka-lib
# (a stamp file keeps a second run offline); confluent-kafka is installed into
# the venv (.venv, bindings-python/build.mk) for this target only;
# librdkafka-dev (C, C++) from Debian with apt-get when missing; franz-go by
# `go build` into the module cache (tools/bench-peer/go/go.mod). Our side
# is built in release: libcursus laid out under target/bench-peer/cursus
# (headers, library, pkg-config for cgo), the jar with its release JNI library.

BENCH_PEER_RECORDS        ?= 500000
BENCH_PEER_NATIVE_RECORDS ?= 2000000
BENCH_PEER_ROUNDTRIPS     ?= 2000
BENCH_PEER_TXN_RECORDS    ?= 200000
BENCH_PEER_CLUSTER_RECORDS ?= 500000
BENCH_PEER_EVENTS         ?= 20000
BENCH_PEER_CONFLUENT      := confluent-kafka==2.16.1
BENCH_PEER_TARGET         := $(abspath $(or $(CARGO_TARGET_DIR),target))
BENCH_PEER_DIR            := $(BENCH_PEER_TARGET)/bench-peer
BENCH_PEER_LIB            := $(BENCH_PEER_DIR)/kafka-lib
BENCH_PEER_LIB_STAMP      := $(BENCH_PEER_LIB)/.fetched
BENCH_PEER_PY_STAMP       := $(PY_VENV)/.cursus-bench-peer
BENCH_PEER_CURSUS         := $(BENCH_PEER_DIR)/cursus
BENCH_PEER_LINK           := -L$(BENCH_PEER_CURSUS)/lib -Wl,-rpath,$(BENCH_PEER_CURSUS)/lib -lcursus
BENCH_PEER_SRC            := tools/bench-peer

.PHONY: bench-peer bench-peer-tools bench-peer-harnesses

$(BENCH_PEER_LIB_STAMP): tools/bench-peer/pom.xml
	rm -rf $(BENCH_PEER_LIB)
	mvn -q -B -f tools/bench-peer/pom.xml dependency:copy-dependencies \
	  -DincludeScope=runtime -DoutputDirectory=$(BENCH_PEER_LIB)
	@touch $@

$(BENCH_PEER_PY_STAMP): $(PY_TOOLS_STAMP)
	$(PY_BIN) -m pip install -q --disable-pip-version-check $(BENCH_PEER_CONFLUENT)
	@touch $@

# librdkafka and librdkafka++ (the C and C++ peers) are Debian's, installed
# on first use (as root, which CI and the sessions are).
bench-peer-tools:
	@test -f /usr/include/librdkafka/rdkafkacpp.h || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends librdkafka-dev; }

# The C, C++ and Go harnesses, against the release libcursus (ffi_layout,
# ffi-c/build.mk) in a directory of their own, so that the debug layout the
# tests use (target/cursus) stays as it is.
bench-peer-harnesses: bench-peer-tools
	CARGO_TARGET_DIR=$(BENCH_PEER_TARGET) $(CARGO) build --release -p cursus-ffi
	$(call ffi_layout,$(BENCH_PEER_CURSUS),$(BENCH_PEER_TARGET)/release)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -I$(BENCH_PEER_CURSUS)/include -o $(BENCH_PEER_DIR)/bench_peer_c \
	  $(BENCH_PEER_SRC)/c/bench_peer.c $(BENCH_PEER_LINK) -lrdkafka -lpthread
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror -I$(BENCH_PEER_CURSUS)/include -o $(BENCH_PEER_DIR)/bench_peer_cpp \
	  $(BENCH_PEER_SRC)/cpp/bench_peer.cpp $(BENCH_PEER_LINK) -lrdkafka++ -lrdkafka -lpthread
	cd $(BENCH_PEER_SRC)/go && CGO_ENABLED=1 PKG_CONFIG_PATH=$(BENCH_PEER_CURSUS)/lib/pkgconfig \
	  CGO_LDFLAGS="-Wl,-rpath,$(BENCH_PEER_CURSUS)/lib" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
	  go build -o $(BENCH_PEER_DIR)/bench_peer_go .

bench-peer: $(BENCH_PEER_LIB_STAMP) $(BENCH_PEER_PY_STAMP) bench-peer-harnesses
	$(MAKE) --no-print-directory python-wheel CURSUS_PROFILE=release
	$(MAKE) --no-print-directory jar-java CURSUS_PROFILE=release
	CARGO_TARGET_DIR=$(BENCH_PEER_TARGET) $(CARGO) build --release -p cursus-broker \
	  -p cursus --bin cursus-broker --example bench_native --example bench_txn \
	  --example bench_cluster --example bench_eventstore
	RUST_LOG=warn $(PY_BIN) tools/bench-peer/run.py \
	  --kafka-lib $(BENCH_PEER_LIB) --classes $(BENCH_PEER_DIR)/classes \
	  --broker-bin $(BENCH_PEER_TARGET)/release/cursus-broker \
	  --native-bin $(BENCH_PEER_TARGET)/release/examples/bench_native \
	  --txn-bin $(BENCH_PEER_TARGET)/release/examples/bench_txn \
	  --cluster-bin $(BENCH_PEER_TARGET)/release/examples/bench_cluster \
	  --eventstore-bin $(BENCH_PEER_TARGET)/release/examples/bench_eventstore \
	  --cluster-records $(BENCH_PEER_CLUSTER_RECORDS) --events $(BENCH_PEER_EVENTS) \
	  --cursus-jar $(JAVA_JAR) --c-bin $(BENCH_PEER_DIR)/bench_peer_c \
	  --cpp-bin $(BENCH_PEER_DIR)/bench_peer_cpp --go-bin $(BENCH_PEER_DIR)/bench_peer_go \
	  --records $(BENCH_PEER_RECORDS) --native-records $(BENCH_PEER_NATIVE_RECORDS) \
	  --roundtrips $(BENCH_PEER_ROUNDTRIPS) --txn-records $(BENCH_PEER_TXN_RECORDS) --out $(BENCH_PEER_TARGET)/bench/peer.json \
	  --command "make bench-peer BENCH_PEER_RECORDS=$(BENCH_PEER_RECORDS) BENCH_PEER_NATIVE_RECORDS=$(BENCH_PEER_NATIVE_RECORDS) BENCH_PEER_ROUNDTRIPS=$(BENCH_PEER_ROUNDTRIPS) BENCH_PEER_TXN_RECORDS=$(BENCH_PEER_TXN_RECORDS) BENCH_PEER_CLUSTER_RECORDS=$(BENCH_PEER_CLUSTER_RECORDS) BENCH_PEER_EVENTS=$(BENCH_PEER_EVENTS)"
	$(MAKE) --no-print-directory bench-report
