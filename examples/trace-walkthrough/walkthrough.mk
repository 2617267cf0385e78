# examples/trace-walkthrough/walkthrough.mk: one trace from a Go producer to
# a Python consumer (docs/observability.md). Included from the top-level
# Makefile, after ffi-c/build.mk and bindings-python/build.mk.
#
#   make trace-walkthrough      builds libcursus, the broker and the Python
#                               wheel, then runs the walk-through
#   make trace-walkthrough-run  runs it on what is already built (make test:
#                               after test-ffi and test-python built them)

.PHONY: trace-walkthrough trace-walkthrough-run

trace-walkthrough: ffi-lib python-wheel
	$(MAKE) --no-print-directory trace-walkthrough-run

trace-walkthrough-run:
	$(FFI_GO_ENV) examples/trace-walkthrough/run.sh $(FFI_BROKER) $(abspath $(PY_BIN))
