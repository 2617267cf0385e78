# The Python conformance driver: driver.py run by the venv that test-python
# builds (the binding's wheel installed in it).
CONF_PY_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))

.PHONY: conformance-driver-python
conformance-driver-python: python-wheel
	$(PY_BIN) -m mypy --strict --cache-dir $(CONF_PY_TARGET)/mypy-python conformance/drivers/python/driver.py
	CARGO_TARGET_DIR=$(CONF_PY_TARGET) $(CARGO) build -p cursus-broker
	@mkdir -p $(CONF_PY_TARGET)/conformance/bin
	printf '#!/bin/sh\nexec %s %s "$$@"\n' '$(abspath $(PY_BIN))' '$(CURDIR)/conformance/drivers/python/driver.py' \
	  > $(CONF_PY_TARGET)/conformance/bin/python
	chmod +x $(CONF_PY_TARGET)/conformance/bin/python
