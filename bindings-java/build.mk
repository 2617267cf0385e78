# bindings-java: the Java binding (JNI crate + Maven project). Included from the
# top-level Makefile, run from the repository root.
#
#   make test-java    build libcursus_jni, the broker and cursus-test-pki, then `mvn test`
#                     (JUnit 5, -Xcheck:jni) against real brokers (plain, and TLS + mutual
#                     TLS + token auth with a PKI made at test time); Surefire's summary
#   make jar-java     the jar, with the native library inside
#   make install-java the jar, its sources and javadoc jars (javadoc fails on a public
#                     item without docs) into the local Maven repository (~/.m2)
#   make java-bridge  regenerate NativeBridge.java, the JNI entry points and the result
#                     records (all of `make bridge-gen`; `make bridge-gen-check` fails when stale)
#   make bench-java   records/s produced (per record, batch) and consumed from Java, send-call
#                     cost and idle RSS, next to the engine's on the same broker
#                     (target/bench/java.json; CURSUS_PROFILE=release for an optimised engine)
#   make quickstart-java  compile examples/Quickstart.java against the jar and run it
#                     against $(DEMO_BOOTSTRAP) (default 127.0.0.1:9000)
#
# Maven uses the standard local repository (~/.m2): the first run downloads the
# plugins and JUnit, later runs need no network. MVN_FLAGS=-o forces offline.

JAVA_DIR := bindings-java
JAVA_CARGO ?= $(or $(CARGO),cargo)
JAVA_MVN ?= mvn
JAVA_TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))
JAVA_PROFILE_DIR := $(JAVA_TARGET_DIR)/$(or $(CURSUS_PROFILE),debug)
# The jar carries a copy without debug info (the debug build's is ~60 MB), in
# JAVA_NATIVE_STAGE/<os>-<arch>/ (the jar's native/<os>-<arch>/).
JAVA_NATIVE_STAGE := $(JAVA_TARGET_DIR)/java-native
JAVA_PLATFORM := $(shell uname -s | tr A-Z a-z)-$(shell uname -m | sed 's/amd64/x86_64/;s/arm64/aarch64/')
# The jar `make jar-java` leaves (the project version, read from pom.xml).
JAVA_VERSION := $(shell sed -n 's:^  <version>\(.*\)</version>.*:\1:p' $(JAVA_DIR)/pom.xml | head -n 1)
JAVA_JAR := $(abspath $(JAVA_DIR))/target/cursus-$(JAVA_VERSION).jar
JAVA_EXAMPLES_OUT := $(JAVA_TARGET_DIR)/java-examples
DEMO_BOOTSTRAP ?= 127.0.0.1:9000
JAVA_MVN_ARGS := -B -ntp $(MVN_FLAGS) \
  -Dcursus.native.dir=$(JAVA_NATIVE_STAGE) \
  -Dbroker.bin=$(JAVA_PROFILE_DIR)/cursus-broker \
  -Dpki.bin=$(JAVA_PROFILE_DIR)/cursus-test-pki

.PHONY: java-native java-pki java-bridge test-java jar-java install-java bench-java quickstart-java

# Writes $(1)/platforms.txt, the platform directories of the native staging
# directory $(1) that hold a library, one a line: the jar carries it, and the
# loader names them when none fits the running JVM. `make dist` stages its
# own directory (tools/dist/dist.mk) and reuses this.
define java_native_index
	@(cd $(1) && for f in */libcursus_jni.so */libcursus_jni.dylib */cursus_jni.dll; do \
	  if [ -f "$$f" ]; then dirname "$$f"; fi; done | sort -u) > $(1)/platforms.txt.tmp
	@mv $(1)/platforms.txt.tmp $(1)/platforms.txt
endef

java-native:
	$(JAVA_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-jni -p cursus-broker
	@mkdir -p $(JAVA_NATIVE_STAGE)/$(JAVA_PLATFORM)
	@for f in libcursus_jni.so libcursus_jni.dylib cursus_jni.dll; do \
	  if [ -f $(JAVA_PROFILE_DIR)/$$f ]; then \
	    out=$(JAVA_NATIVE_STAGE)/$(JAVA_PLATFORM)/$$f; \
	    if command -v objcopy >/dev/null 2>&1 && [ $$f = libcursus_jni.so ]; then \
	      objcopy --strip-debug $(JAVA_PROFILE_DIR)/$$f $$out.tmp; \
	    else cp $(JAVA_PROFILE_DIR)/$$f $$out.tmp; fi; \
	    mv $$out.tmp $$out; \
	  fi; \
	done
	$(call java_native_index,$(JAVA_NATIVE_STAGE))

# The TLS tests' certificates are made at test time by this tool (a separate cargo call:
# `--bin` would restrict the build above to binaries).
java-pki:
	$(JAVA_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-testkit --bin cursus-test-pki

java-bridge: bridge-gen

test-java: java-native java-pki
	cd $(JAVA_DIR) && $(JAVA_MVN) $(JAVA_MVN_ARGS) test

jar-java: java-native
	cd $(JAVA_DIR) && $(JAVA_MVN) $(JAVA_MVN_ARGS) -DskipTests package
	@ls -l $(JAVA_DIR)/target/cursus-*.jar

install-java: java-native
	cd $(JAVA_DIR) && $(JAVA_MVN) $(JAVA_MVN_ARGS) -Pdist -DskipTests install

JAVA_BENCH_RECORDS ?= 200000
bench-java: java-native
	$(JAVA_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-ffi --example bench_send
	cd $(JAVA_DIR) && $(JAVA_MVN) $(JAVA_MVN_ARGS) -q -DskipTests test-compile && \
	  java -cp target/classes:target/test-classes \
	    -Dcursus.broker.bin=$(JAVA_PROFILE_DIR)/cursus-broker \
	    -Dcursus.engine.bench=$(JAVA_PROFILE_DIR)/examples/bench_send \
	    -Dcursus.bench.out=$(JAVA_TARGET_DIR)/bench/java.json \
	    io.cursus.bench.ProducerBench $(JAVA_BENCH_RECORDS)

# The quickstart lives outside src/ so Maven neither compiles nor tests it.
quickstart-java: jar-java
	rm -rf $(JAVA_EXAMPLES_OUT)
	@mkdir -p $(JAVA_EXAMPLES_OUT)
	javac --release 17 -Xlint:all -Werror -cp $(JAVA_JAR) -d $(JAVA_EXAMPLES_OUT) $(JAVA_DIR)/examples/Quickstart.java
	java -cp $(JAVA_JAR):$(JAVA_EXAMPLES_OUT) Quickstart $(DEMO_BOOTSTRAP)
