# The Python conformance driver: driver.py run by the venv that test-python
# builds (the binding's wheel installed in it). Two columns of the matrix:
# `python` (the synchronous API) and `python-asyncio` (cursus.aio).
CONF_PY_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
CONF_PY_DRIVER := $(CURDIR)/conformance/drivers/python/driver.py

.PHONY: conformance-driver-python conformance-driver-python-asyncio
conformance-driver-python: python-wheel
	$(PY_BIN) -m mypy --strict --cache-dir $(CONF_PY_TARGET)/mypy-python $(CONF_PY_DRIVER)
	CARGO_TARGET_DIR=$(CONF_PY_TARGET) $(CARGO) build -p cursus-broker
	@mkdir -p $(CONF_PY_TARGET)/conformance/bin
	printf '#!/bin/sh\nexec %s %s "$$@"\n' '$(abspath $(PY_BIN))' '$(CONF_PY_DRIVER)' \
	  > $(CONF_PY_TARGET)/conformance/bin/python
	printf '#!/bin/sh\nexec %s %s --asyncio "$$@"\n' '$(abspath $(PY_BIN))' '$(CONF_PY_DRIVER)' \
	  > $(CONF_PY_TARGET)/conformance/bin/python-asyncio
	chmod +x $(CONF_PY_TARGET)/conformance/bin/python $(CONF_PY_TARGET)/conformance/bin/python-asyncio

conformance-driver-python-asyncio: conformance-driver-python
