# The C++ conformance driver (conformance/drivers/cpp): driver.cpp over include/cursus.hpp.
# Included from the top-level Makefile (run from the repository root); uses
# the flags of ffi-c/build.mk (FFI_CXXFLAGS, FFI_LDFLAGS).
CONF_CPP_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: conformance-driver-cpp
conformance-driver-cpp: ffi-lib
	@mkdir -p $(CONF_CPP_TARGET)/conformance/bin
	$(CXX) $(FFI_CXXFLAGS) -o $(CONF_CPP_TARGET)/conformance/bin/cpp conformance/drivers/cpp/driver.cpp $(FFI_LDFLAGS)
