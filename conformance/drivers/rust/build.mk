# The Rust conformance driver (conformance/drivers/rust), a workspace crate.
CONF_RUST_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: conformance-driver-rust
conformance-driver-rust:
	$(CARGO) build -p cursus-conformance -p cursus-broker
	@mkdir -p $(CONF_RUST_TARGET)/conformance/bin
	ln -sf $(CONF_RUST_TARGET)/debug/cursus-conformance-rust $(CONF_RUST_TARGET)/conformance/bin/rust
