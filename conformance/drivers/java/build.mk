# conformance/drivers/java/build.mk: the Java conformance driver, compiled with plain
# javac against the binding's jar (no Maven dependencies of its own). Included from the
# top-level Makefile after bindings-java/build.mk; run from the repository root.
#
#   make conformance-driver-java   classes in target/conformance/java-classes and the
#                                  wrapper target/conformance/bin/java

CONF_JAVA_TARGET := $(abspath $(or $(CARGO_TARGET_DIR),target))
CONF_JAVA_CLASSES := $(CONF_JAVA_TARGET)/conformance/java-classes
CONF_JAVA_BIN := $(CONF_JAVA_TARGET)/conformance/bin/java
CONF_JAVA_SRC := $(wildcard conformance/drivers/java/src/io/cursus/conformance/*.java)
CONF_JAVAC ?= javac

.PHONY: conformance-driver-java

# JAVA_JAR comes from bindings-java/build.mk (expanded when the recipe runs).
conformance-driver-java: jar-java
	@rm -rf $(CONF_JAVA_CLASSES).tmp && mkdir -p $(CONF_JAVA_CLASSES).tmp $(dir $(CONF_JAVA_BIN))
	$(CONF_JAVAC) --release 17 -Xlint:all -Werror -cp $(JAVA_JAR) -d $(CONF_JAVA_CLASSES).tmp $(CONF_JAVA_SRC)
	@rm -rf $(CONF_JAVA_CLASSES) && mv $(CONF_JAVA_CLASSES).tmp $(CONF_JAVA_CLASSES)
	@printf '%s\n' '#!/bin/sh' \
	  '# The Java conformance driver (conformance/drivers/java): <bootstrap> <plan file>' \
	  'exec java -cp "$(JAVA_JAR):$(CONF_JAVA_CLASSES)" io.cursus.conformance.Driver "$$@"' \
	  > $(CONF_JAVA_BIN).tmp
	@chmod +x $(CONF_JAVA_BIN).tmp && mv $(CONF_JAVA_BIN).tmp $(CONF_JAVA_BIN)
	@echo "java driver: $(CONF_JAVA_BIN)"
