# ffi-c/build.mk: libcursus (C ABI), the C++ wrapper and the Go package.
# Included from the top-level Makefile (run from the repository root).
#
#   make ffi-lib        lay out libcursus (headers, libcursus.so/.a, cursus.pc,
#                       cursus++.pc, CMake package) under $(FFI_OUT)
#   make install PREFIX=/usr/local   the same layout from a release build
#   make test-install-c install into a temporary prefix, then build and run a
#                       C program (pkg-config) and a C++ program (CMake) there
#                       (INSTALL_PROFILE=debug skips the release build; the
#                       top-level test-install does so)
#   make ffi-header     regenerate include/cursus.h (cbindgen)
#   make header-check   fail when include/cursus.h differs from the generated one
#   make test-c         C tests against a real broker (and a secure one:
#                       TLS, mutual TLS, tokens; certificates from cursus-test-pki)
#   make test-cpp       C++ (GoogleTest) tests against real brokers (the same two)
#   make ffi-tools      install GoogleTest and CMake when missing (apt-get)
#   make test-go        go test against a real broker (ffi-c/go and its otel module)
#   make test-valgrind  the C tests under valgrind (no leaks, no invalid accesses)
#   make examples-c examples-cpp examples-go   build and run the examples
#   make quickstart-c quickstart-cpp quickstart-go   build the quickstart and run
#                       it against $(DEMO_BOOTSTRAP) (default 127.0.0.1:9000)
#   make bench-ffi      C and Go produce (per record, batch), consume, send-call
#                       cost and idle RSS next to the engine's, same broker
#                       (target/bench/ffi.json, go.json)

# Keep the includer's default goal (restored at the end of this file).
FFI_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
FFI_CARGO      ?= cargo
FFI_TARGET     := $(abspath $(or $(CARGO_TARGET_DIR),$(CURDIR)/target))
FFI_PROFILE    := $(FFI_TARGET)/$(or $(CURSUS_PROFILE),debug)
FFI_OUT        := $(FFI_TARGET)/cursus
FFI_LIBDIR     := $(FFI_OUT)/lib
FFI_BUILD      := $(FFI_OUT)/build
FFI_BROKER     := $(FFI_PROFILE)/cursus-broker
FFI_PKI        := $(FFI_PROFILE)/cursus-test-pki
FFI_WITH_BROKER := $(CURDIR)/ffi-c/tests-c/with-broker.sh $(FFI_BROKER)
# The tests also get a secure broker (TLS, mutual TLS, token auth) and a
# test PKI made by cursus-test-pki (see with-broker.sh).
FFI_WITH_SECURE_BROKER := CURSUS_TEST_PKI_BIN=$(FFI_PKI) $(FFI_WITH_BROKER)
FFI_INCLUDE    := $(FFI_OUT)/include
FFI_CFLAGS     := -std=c11 -Wall -Wextra -Werror -g -I$(FFI_INCLUDE)
FFI_CXXFLAGS   := -std=c++17 -Wall -Wextra -Werror -g -I$(FFI_INCLUDE)
FFI_LDFLAGS    := -L$(FFI_LIBDIR) -Wl,-rpath,$(FFI_LIBDIR) -lcursus -lpthread
# cgo takes its flags from pkg-config (cursus.pc); the rpath only spares the
# in-repo tests an LD_LIBRARY_PATH.
FFI_GO_ENV     := CGO_ENABLED=1 PKG_CONFIG_PATH=$(FFI_LIBDIR)/pkgconfig \
                  CGO_LDFLAGS="-Wl,-rpath,$(FFI_LIBDIR)" \
                  GOFLAGS=-mod=mod GOTOOLCHAIN=local
DEMO_BOOTSTRAP ?= 127.0.0.1:9000

.PHONY: ffi-lib install test-install-c ffi-tools ffi-header header-check test-c test-cpp test-go test-valgrind \
        test-ffi examples-c examples-cpp examples-go bench-ffi \
        quickstart-c quickstart-cpp quickstart-go

# The version and ABI version the header carries (generated from Cargo.toml).
FFI_VERSION := $(shell sed -n 's/^#define CURSUS_VERSION_STRING "\(.*\)"/\1/p' include/cursus.h)
FFI_ABI     := $(shell sed -n 's/^#define CURSUS_ABI_VERSION "\(.*\)"/\1/p' include/cursus.h)

# Lays out a libcursus installation under $(1) from the libraries in $(2):
# include/ (cursus.h, cursus.hpp and its parts in cursus/), lib/libcursus.so.<version> with the
# SONAME link libcursus.so.<abi> and the dev link libcursus.so, libcursus.a,
# relocatable pkg-config files (cursus.pc; cursus++.pc adds -std=c++17) and a
# CMake package (find_package(cursus): cursus::cursus, cursus::cursus++).
define ffi_layout
	@mkdir -p $(1)/include $(1)/lib/pkgconfig $(1)/lib/cmake/cursus
	@mkdir -p $(1)/include/cursus
	cp -f include/cursus.h include/cursus.hpp $(1)/include/
	cp -f include/cursus/*.hpp $(1)/include/cursus/
	# Copy, then rename: a process running on the old library keeps its (unlinked) file.
	cp -f $(2)/libcursus_ffi.so $(1)/lib/.libcursus.so.tmp
	mv -f $(1)/lib/.libcursus.so.tmp $(1)/lib/libcursus.so.$(FFI_VERSION)
	ln -sf libcursus.so.$(FFI_VERSION) $(1)/lib/libcursus.so.$(FFI_ABI)
	ln -sf libcursus.so.$(FFI_ABI) $(1)/lib/libcursus.so
	cp -f $(2)/libcursus_ffi.a $(1)/lib/.libcursus.a.tmp
	mv -f $(1)/lib/.libcursus.a.tmp $(1)/lib/libcursus.a
	sed 's/@VERSION@/$(FFI_VERSION)/' ffi-c/pkg/cursus.pc.in > $(1)/lib/pkgconfig/cursus.pc
	sed 's/@VERSION@/$(FFI_VERSION)/' ffi-c/pkg/cursus++.pc.in > $(1)/lib/pkgconfig/cursus++.pc
	cp -f ffi-c/pkg/cursusConfig.cmake $(1)/lib/cmake/cursus/
	sed 's/@VERSION@/$(FFI_VERSION)/' ffi-c/pkg/cursusConfigVersion.cmake.in > $(1)/lib/cmake/cursus/cursusConfigVersion.cmake
endef

# Cargo decides what is stale; the copies below are cheap. The in-repo
# layout (target/cursus) is what the tests, the Go package and the drivers
# build against.
ffi-lib:
	$(FFI_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-ffi -p cursus-broker
	@# A separate call: --bin would restrict the build above to binaries,
	@# leaving out the libraries.
	$(FFI_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-testkit --bin cursus-test-pki
	$(call ffi_layout,$(FFI_OUT),$(FFI_PROFILE))
	@mkdir -p $(FFI_BUILD)
	@echo "libcursus: $(FFI_OUT) (pkg-config: PKG_CONFIG_PATH=$(FFI_LIBDIR)/pkgconfig)"

# `make install PREFIX=/usr/local`: a release build (INSTALL_PROFILE=debug:
# the dev build, for tests), laid out as above under PREFIX.
PREFIX ?= /usr/local
INSTALL_PROFILE ?= release
install:
	$(FFI_CARGO) build $(if $(filter release,$(INSTALL_PROFILE)),--release) -p cursus-ffi
	$(call ffi_layout,$(PREFIX),$(FFI_TARGET)/$(INSTALL_PROFILE))
	@echo "installed libcursus $(FFI_VERSION) under $(PREFIX)"

# Installs (release build) into a mktemp -d prefix outside the repository,
# moves it (relocatable), checks the layout, builds ffi-c/tests-c/install's
# programs there with pkg-config and with CMake find_package(cursus), and
# runs them against a fresh broker (ffi-lib builds the broker).
test-install-c: ffi-lib ffi-tools
	MAKE="$(MAKE)" INSTALL_PROFILE=$(INSTALL_PROFILE) ffi-c/tests-c/install/run.sh $(FFI_BROKER)

# GoogleTest (test-cpp) and CMake (test-install) are not on every machine
# of the project: installed from Debian's packages on first use (as root,
# which CI and the sessions are).
ffi-tools:
	@if [ ! -f /usr/include/gtest/gtest.h ] || ! command -v cmake >/dev/null; then \
	  echo "installing libgtest-dev and cmake"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libgtest-dev cmake; \
	fi

ffi-header:
	CURSUS_UPDATE_HEADER=1 $(FFI_CARGO) test -p cursus-ffi --test header

header-check:
	$(FFI_CARGO) test -p cursus-ffi --test header


FFI_C_TESTS := $(wildcard ffi-c/tests-c/test_*.c)

$(FFI_BUILD)/test_cursus: ffi-lib $(FFI_C_TESTS) ffi-c/tests-c/test_util.h
	$(CC) $(FFI_CFLAGS) -o $@ $(FFI_C_TESTS) $(FFI_LDFLAGS)

test-c: $(FFI_BUILD)/test_cursus
	$(FFI_WITH_SECURE_BROKER) $(FFI_BUILD)/test_cursus

# Every test but the fork test, which test-c runs: in a forked child, memory
# that only the parent's (vanished) threads referenced reads as "definitely
# lost" to valgrind, though nothing leaked.
test-valgrind: $(FFI_BUILD)/test_cursus
	CURSUS_TEST_EXCLUDE=fork $(FFI_WITH_SECURE_BROKER) valgrind --quiet --num-callers=40 --leak-check=full --errors-for-leak-kinds=definite \
	  --show-leak-kinds=definite --error-exitcode=1 \
	  --suppressions=$(CURDIR)/ffi-c/tests-c/valgrind.supp $(FFI_BUILD)/test_cursus


test-cpp: ffi-lib ffi-tools
	$(CXX) $(FFI_CXXFLAGS) -o $(FFI_BUILD)/test_cursus_cpp $(wildcard ffi-c/tests-cpp/test_*.cpp) $(FFI_LDFLAGS) -lgtest
	$(FFI_WITH_SECURE_BROKER) $(FFI_BUILD)/test_cursus_cpp

# ffi-c/go/otel is a module of its own (the cursus package needs only the
# standard library): vetted and tested apart, against a broker of with-broker.sh.
test-go: ffi-lib
	cd ffi-c/go && $(FFI_GO_ENV) go vet ./...
	cd ffi-c/go && $(FFI_GO_ENV) CURSUS_BROKER_BIN=$(FFI_BROKER) CURSUS_TEST_PKI_BIN=$(FFI_PKI) go test -race -count=1 -v ./...
	cd ffi-c/go/otel && $(FFI_GO_ENV) go vet ./...
	$(FFI_WITH_BROKER) sh -c 'cd ffi-c/go/otel && $(FFI_GO_ENV) go test -race -count=1 -v ./...'

test-ffi: header-check test-c test-cpp test-go test-valgrind



examples-c: ffi-lib
	$(CC) $(FFI_CFLAGS) -o $(FFI_BUILD)/example_c ffi-c/examples/produce_consume.c $(FFI_LDFLAGS)
	$(FFI_WITH_BROKER) sh -c '$(FFI_BUILD)/example_c "$$CURSUS_TEST_BROKER"'

examples-cpp: ffi-lib
	$(CXX) $(FFI_CXXFLAGS) -o $(FFI_BUILD)/example_cpp ffi-c/examples/produce_consume.cpp $(FFI_LDFLAGS)
	$(FFI_WITH_BROKER) sh -c '$(FFI_BUILD)/example_cpp "$$CURSUS_TEST_BROKER"'

examples-go: ffi-lib
	cd ffi-c/go && $(FFI_GO_ENV) go build -o $(FFI_BUILD)/example_go ./examples/produce_consume
	$(FFI_WITH_BROKER) sh -c '$(FFI_BUILD)/example_go "$$CURSUS_TEST_BROKER"'

quickstart-c: ffi-lib
	$(CC) $(FFI_CFLAGS) -o $(FFI_BUILD)/quickstart_c ffi-c/examples/quickstart.c $(FFI_LDFLAGS)
	$(FFI_BUILD)/quickstart_c $(DEMO_BOOTSTRAP)

quickstart-cpp: ffi-lib
	$(CXX) $(FFI_CXXFLAGS) -o $(FFI_BUILD)/quickstart_cpp ffi-c/examples/quickstart.cpp $(FFI_LDFLAGS)
	$(FFI_BUILD)/quickstart_cpp $(DEMO_BOOTSTRAP)

quickstart-go: ffi-lib
	cd ffi-c/go && $(FFI_GO_ENV) go build -o $(FFI_BUILD)/quickstart_go ./examples/quickstart
	$(FFI_BUILD)/quickstart_go $(DEMO_BOOTSTRAP)

# Each figure next to the engine's, measured against the same broker just
# before (bench_send engine): C (bench_send.c -> target/bench/ffi.json), Go
# (examples/bench -> target/bench/go.json), and the C ABI called from Rust in
# the engine's own process (target/bench/ffi-rust.json). FFI_BENCH_RECORDS
# records of 100 B each way (default 200,000; docs/performance-bindings.md).
FFI_BENCH_RECORDS ?= 200000
FFI_BENCH_OUT     := $(FFI_TARGET)/bench
FFI_BENCH_ENGINE  := $(FFI_PROFILE)/examples/bench_send engine "$$CURSUS_TEST_BROKER" $(FFI_BENCH_RECORDS)
bench-ffi: ffi-lib
	$(CC) $(FFI_CFLAGS) -O2 -o $(FFI_BUILD)/bench_c ffi-c/examples/bench_send.c $(FFI_LDFLAGS)
	$(FFI_CARGO) build $(CARGO_PROFILE_FLAG) -p cursus-ffi --example bench_send
	cd ffi-c/go && $(FFI_GO_ENV) go build -o $(FFI_BUILD)/bench_go ./examples/bench
	@mkdir -p $(FFI_BENCH_OUT)
	$(FFI_WITH_BROKER) sh -c '\
	  $(FFI_PROFILE)/examples/bench_send ffi "$$CURSUS_TEST_BROKER" $(FFI_BENCH_RECORDS) $(FFI_BENCH_OUT)/ffi-rust.json && \
	  $(FFI_BENCH_ENGINE) $(FFI_BENCH_OUT)/engine-ref-c.json && \
	  $(FFI_BUILD)/bench_c "$$CURSUS_TEST_BROKER" $(FFI_BENCH_RECORDS) $(FFI_BENCH_OUT)/engine-ref-c.json $(FFI_BENCH_OUT)/ffi.json && \
	  $(FFI_BENCH_ENGINE) $(FFI_BENCH_OUT)/engine-ref-go.json && \
	  $(FFI_BUILD)/bench_go "$$CURSUS_TEST_BROKER" $(FFI_BENCH_RECORDS) $(FFI_BENCH_OUT)/engine-ref-go.json $(FFI_BENCH_OUT)/go.json'

.DEFAULT_GOAL := $(FFI_SAVED_DEFAULT_GOAL)
