# conformance/build.mk: the cross-language conformance matrix.
# Included from the top-level Makefile (run from the repository root).
#
#   make conformance                        every binding x every scenario (plain),
#                                           the secure and the cluster core sets
#   make conformance CONFORMANCE_BINDINGS=rust,go CONFORMANCE_SCENARIOS='admin_*'
#   make conformance CONFORMANCE_MODES=secure    only the TLS + auth runs
#   make conformance CONFORMANCE_MODES=cluster CONFORMANCE_CLUSTER_SCENARIOS=all
#                                           every scenario against a cluster
#
# Each driver's build.mk defines conformance-driver-<lang>, which leaves an
# executable at target/conformance/bin/<lang>. The harness starts a fresh
# broker per scenario and writes target/conformance/report.json.

CONFORMANCE_BINDINGS  ?= rust,c,cpp,go,python,python-asyncio,java
CONFORMANCE_SCENARIOS ?= *
CONFORMANCE_JOBS      ?= 3
CONFORMANCE_MODES     ?= plain,secure,cluster
# Cluster mode runs conformance/cluster-core.txt (core) or every scenario (all).
CONFORMANCE_CLUSTER_SCENARIOS ?= core
comma := ,

include $(wildcard conformance/drivers/*/build.mk)

CONFORMANCE_DRIVERS := $(foreach b,$(subst $(comma), ,$(CONFORMANCE_BINDINGS)),conformance-driver-$(b))

.PHONY: conformance conformance-pki-tool
# The secure mode's certificates are made at run time by this tool (rcgen).
conformance-pki-tool:
	$(CARGO) build -p cursus-testkit --bin cursus-test-pki

conformance: $(CONFORMANCE_DRIVERS) conformance-pki-tool $(PY_TOOLS_STAMP)
	$(PY_BIN) -m mypy --strict --cache-dir $(abspath $(or $(CARGO_TARGET_DIR),target))/mypy-python \
	  conformance/harness.py tools/demo.py
	python3 conformance/harness.py --bindings '$(CONFORMANCE_BINDINGS)' \
	  --scenarios '$(CONFORMANCE_SCENARIOS)' --modes '$(CONFORMANCE_MODES)' \
	  --cluster-scenarios '$(CONFORMANCE_CLUSTER_SCENARIOS)' --jobs $(CONFORMANCE_JOBS)
