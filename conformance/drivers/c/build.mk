# The C conformance driver (conformance/drivers/c): driver.c over include/cursus.h.
# Included from the top-level Makefile (run from the repository root); uses
# the flags of ffi-c/build.mk (FFI_CFLAGS, FFI_LDFLAGS).
CONF_C_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: conformance-driver-c
conformance-driver-c: ffi-lib
	@mkdir -p $(CONF_C_TARGET)/conformance/bin
	$(CC) $(FFI_CFLAGS) -o $(CONF_C_TARGET)/conformance/bin/c conformance/drivers/c/driver.c $(FFI_LDFLAGS)
