# tools/dist/dist.mk: the release artifacts of every language, for Linux
# x86_64 and aarch64 (glibc 2.17 and newer). Included from the top-level
# Makefile (run from the repository root); after ffi-c/build.mk and
# bindings-java/build.mk, whose layout macros it reuses.
#
#   make dist        from a clean checkout, into target/dist/ (DIST_OUT):
#                      cursus-<v>-cp39-abi3-manylinux2014_<arch>.manylinux_2_17_<arch>.whl
#                      cursus-<v>.tar.gz             the Python sdist
#                      cursus-<v>.jar (libcursus_jni for linux-x86_64 and linux-aarch64),
#                      cursus-<v>-sources.jar, cursus-<v>-javadoc.jar, cursus-<v>.pom
#                      cursus-<v>-linux-<arch>.tar.gz   C, C++ and Go (libcursus)
#                      SHA256SUMS, manifest.json (file, version, platform, size)
#   make dist-check  proves them (tools/dist/check.sh): glibc symbol versions,
#                    linked libraries and size of every native library; the
#                    first programs outside the repository with no Rust on PATH
#                    (x86_64: Python, Java, C with pkg-config and CMake, C++,
#                    Go); the same under qemu-aarch64 (C, Go, Python, Java);
#                    the sdist built and imported by pip in a fresh venv
#   make dist-tools  the pinned build tools (below), installed on first use
#
# Measured on the 2-core machine: make dist 21 min cold (four LTO release
# builds: libcursus + libcursus_jni and the wheel, per architecture), 31 s
# warm; make dist-check 7 min with a cold sdist build (a release build by
# pip), 5 min warm, of which the sdist is 3.
#
# Cross builds use zig as C compiler and linker (cargo-zigbuild for libcursus
# and libcursus_jni, maturin --zig for the wheels), targeting glibc 2.17. TLS
# is rustls with the ring provider, which builds with zig as it is.

DIST_TARGET   := $(abspath $(or $(CARGO_TARGET_DIR),target))
DIST_OUT      := $(DIST_TARGET)/dist
DIST_WORK     := $(DIST_TARGET)/dist-work
DIST_ARCHES   := x86_64 aarch64
DIST_GLIBC    := 2.17
# Cargo.toml's [profile.release-dist]: release, fat LTO, one codegen unit, stripped.
DIST_PROFILE  := release-dist
DIST_VERSION  := $(FFI_VERSION)
# The wheels build in their own target dir: maturin's zig wrappers differ from
# cargo-zigbuild's, and sharing one would rebuild everything at every switch.
DIST_PY_TARGET := $(DIST_TARGET)/dist-python
dist_triple = $(1)-unknown-linux-gnu
dist_libs   = $(DIST_TARGET)/$(call dist_triple,$(1))/$(DIST_PROFILE)
dist_c_name = cursus-$(DIST_VERSION)-linux-$(1)
dist_c_dir  = $(DIST_WORK)/c-$(1)/$(call dist_c_name,$(1))
# Archive timestamps: the last commit's, so the archives are reproducible.
DIST_EPOCH  := $(or $(shell git log -1 --format=%ct 2>/dev/null),0)

# Build tools, pinned, in their own venv. cargo-zigbuild 0.24.0 is the one
# maturin 1.16.0 embeds.
DIST_VENV        := $(DIST_TARGET)/dist-tools/venv
DIST_TOOLS       := maturin==1.16.0 ziglang==0.15.2 cargo-zigbuild==0.24.0 auditwheel==6.8.2
DIST_TOOLS_STAMP := $(DIST_VENV)/.cursus-dist-tools
DIST_PATH        := $(DIST_VENV)/bin:$(PATH)
# Strips debug info and LLVM bitcode from the static library's objects.
dist_strip = $(1)-linux-gnu-strip
# What the checks need: qemu-user, the aarch64 glibc, and the broker they run against.
DIST_CHECK_WORK  := $(DIST_TARGET)/dist-check
DIST_BROKER      := $(DIST_TARGET)/debug/cursus-broker

# dist-native-<arch>, dist-c-<arch> and dist-wheel-<arch> are pattern rules,
# which make does not search for targets marked .PHONY.
.PHONY: dist dist-tools dist-check dist-check-tools dist-version-check dist-python dist-sdist dist-java

dist: dist-version-check
	rm -rf $(DIST_OUT) $(DIST_WORK)
	@mkdir -p $(DIST_OUT) $(DIST_WORK)
	$(MAKE) --no-print-directory $(addprefix dist-c-,$(DIST_ARCHES)) dist-java dist-python
	python3 tools/dist/manifest.py $(DIST_OUT) $(DIST_VERSION)
	@ls -l $(DIST_OUT)

# One version for every artifact: the workspace's, which the header, the
# Python package (maturin reads Cargo.toml) and the pom carry.
dist-version-check:
	@cargo_version=$$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml); \
	for v in "header $(FFI_VERSION)" "pom.xml $(JAVA_VERSION)"; do \
	  if [ "$${v#* }" != "$$cargo_version" ]; then \
	    echo "dist: $${v% *} has version $${v#* }, the workspace $$cargo_version" >&2; exit 1; \
	  fi; \
	done

$(DIST_TOOLS_STAMP): tools/dist/dist.mk
	@test -x $(DIST_VENV)/bin/python || python3 -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/python -m pip install -q --disable-pip-version-check $(DIST_TOOLS)
	@touch $@

dist-tools: $(DIST_TOOLS_STAMP)
	@for t in $(DIST_ARCHES); do \
	  rustup target list --installed | grep -qx $$t-unknown-linux-gnu || rustup target add $$t-unknown-linux-gnu || exit 1; \
	done
	@for a in $(DIST_ARCHES); do \
	  command -v $(call dist_strip,$$a) >/dev/null || pkgs="$$pkgs binutils-$$(echo $$a | tr _ -)-linux-gnu"; \
	done; \
	if [ -n "$$pkgs" ]; then \
	  echo "installing$$pkgs"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$pkgs; \
	fi

# libcursus (cdylib and staticlib) and libcursus_jni for one architecture.
dist-native-%: dist-tools
	PATH=$(DIST_PATH) $(CARGO) zigbuild --profile $(DIST_PROFILE) \
	  --target $(call dist_triple,$*).$(DIST_GLIBC) -p cursus-ffi -p cursus-jni

# cursus-<v>-linux-<arch>.tar.gz: ffi-c/build.mk's layout (ffi_layout), the
# static library stripped, the license and a README with the first program.
dist-c-%: dist-native-%
	rm -rf $(DIST_WORK)/c-$*
	$(call ffi_layout,$(call dist_c_dir,$*),$(call dist_libs,$*))
	$(call dist_strip,$*) --strip-debug -R .llvmbc -R .llvmcmd $(call dist_c_dir,$*)/lib/libcursus.a
	cp LICENSE $(call dist_c_dir,$*)/
	sed '1,/\*\//d' ffi-c/tests-c/install/hello.c > $(DIST_WORK)/c-$*/hello.c
	sed -e 's/@VERSION@/$(DIST_VERSION)/g; s/@ABI@/$(FFI_ABI)/g; s/@ARCH@/$*/g' \
	  -e '/@FIRST_PROGRAM@/{r $(DIST_WORK)/c-$*/hello.c' -e 'd}' tools/dist/README-c.md.in \
	  > $(call dist_c_dir,$*)/README.md
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(DIST_EPOCH) \
	  -C $(DIST_WORK)/c-$* -cf - $(call dist_c_name,$*) | gzip -n -9 > $(DIST_OUT)/$(call dist_c_name,$*).tar.gz

# The jar with libcursus_jni for every architecture (bindings-java/build.mk's
# staging layout and platform index), its sources and javadoc jars, and the
# POM, built apart from the development jar.
dist-java: $(addprefix dist-native-,$(DIST_ARCHES))
	rm -rf $(DIST_WORK)/java-native $(DIST_WORK)/java
	@for a in $(DIST_ARCHES); do \
	  mkdir -p $(DIST_WORK)/java-native/linux-$$a && \
	  cp $(call dist_libs,$$a)/libcursus_jni.so $(DIST_WORK)/java-native/linux-$$a/ || exit 1; \
	done
	$(call java_native_index,$(DIST_WORK)/java-native)
	cd $(JAVA_DIR) && $(JAVA_MVN) -B -ntp $(MVN_FLAGS) -Pdist -DskipTests \
	  -Dcursus.native.dir=$(DIST_WORK)/java-native -Dcursus.build.dir=$(DIST_WORK)/java package
	cp $(addprefix $(DIST_WORK)/java/cursus-$(DIST_VERSION),.jar -sources.jar -javadoc.jar) $(DIST_OUT)/
	cp $(JAVA_DIR)/pom.xml $(DIST_OUT)/cursus-$(DIST_VERSION).pom

dist-python: $(addprefix dist-wheel-,$(DIST_ARCHES)) dist-sdist

# abi3 wheels for CPython >= 3.9, manylinux2014 (glibc 2.17).
dist-wheel-%: dist-tools
	PATH=$(DIST_PATH) CARGO_TARGET_DIR=$(DIST_PY_TARGET) maturin build --quiet --profile $(DIST_PROFILE) \
	  --zig --target $(call dist_triple,$*) --compatibility manylinux2014 \
	  -m bindings-python/Cargo.toml --out $(DIST_OUT)

dist-sdist: dist-tools
	PATH=$(DIST_PATH) maturin sdist -m bindings-python/Cargo.toml --out $(DIST_OUT)

# qemu-user and the aarch64 glibc (Debian's cross package) for the aarch64
# checks; tools/dist/arm64-root.sh assembles the aarch64 CPython and JVM.
dist-check-tools: dist-tools
	@if ! command -v qemu-aarch64 >/dev/null || [ ! -e /usr/aarch64-linux-gnu/lib/libc.so.6 ]; then \
	  echo "installing qemu-user and libc6-arm64-cross"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user libc6-arm64-cross; \
	fi

dist-check: dist-check-tools
	$(CARGO) build -p cursus-broker --bin cursus-broker
	DIST_OUT=$(DIST_OUT) DIST_VERSION=$(DIST_VERSION) DIST_VENV=$(DIST_VENV) DIST_CHECK_WORK=$(DIST_CHECK_WORK) \
	  DIST_BROKER=$(DIST_BROKER) DIST_GLIBC=$(DIST_GLIBC) tools/dist/check.sh
