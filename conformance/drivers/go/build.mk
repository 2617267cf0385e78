# The Go conformance driver (conformance/drivers/go): its own module, using
# the cgo package of ffi-c/go through a replace directive. Included from the
# top-level Makefile (run from the repository root); uses FFI_GO_ENV of
# ffi-c/build.mk (cgo flags, GOFLAGS=-mod=mod, GOTOOLCHAIN=local).
CONF_GO_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: conformance-driver-go
conformance-driver-go: ffi-lib
	@mkdir -p $(CONF_GO_TARGET)/conformance/bin
	cd conformance/drivers/go && $(FFI_GO_ENV) go vet . && \
	  $(FFI_GO_ENV) go build -o $(CONF_GO_TARGET)/conformance/bin/go .
