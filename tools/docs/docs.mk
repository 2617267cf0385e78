# tools/docs/docs.mk: the documentation site. Included from the top-level
# Makefile (run from the repository root), after the bindings' build files.
#
#   make docs        builds the site into target/docs/site/ (open index.html;
#                    it works from file:// and offline), then checks every
#                    page's internal links and anchors and its title
#                    (tools/docs/linkcheck.py). Fails on any warning of the
#                    tools below.
#   make docs-check  opens every page of the built site in headless Chromium
#                    (tools/docs/browser_check.py): no console error, no
#                    broken link or anchor, a title; the search finds
#                    "transaction" and "rebalance"; screenshots at desktop
#                    and phone widths into target/docs/screens/
#   make docs-tools  the pinned tools (below), installed on first use
#   make docs-tools-test  the tools' own tests (pytest; part of make docs);
#                    the browser check's own test runs in make docs-check
#
# One source: the site's own pages and its table of contents are
# docs/site/ (SUMMARY.md); the guides and READMEs are read from where they
# are in the repository, and the getting-started programs are the ones
# make test-install runs (tools/docs/assemble.py). The API reference of each
# language is made by that language's tool:
#   Rust    rustdoc (cursus, cursus-wire, cursus-bridge), RUSTDOCFLAGS=-D warnings
#   Java    the Maven javadoc plugin of `make install-java` (-Pdist: doclint,
#           failOnWarnings)
#   Python  pdoc over the installed wheel (its .pyi stubs included); a
#           warning fails (tools/docs/pdoc_build.py)
#   Go      tools/docs/godoc (go/doc of the standard library) as a page of
#           the site; an exported item without a doc comment fails
#   C, C++  Doxygen over include/ (tools/docs/Doxyfile), warnings are errors
#
# Both run in `make test`: from a fresh clone on 2 shared cores make docs
# took 6 minutes (mdBook's build 2 of them) and make docs-check 4 (940
# pages); warm, 1 and 4. make test's cold budget is 45 minutes.
#
# Tools: mdBook (crates.io, pinned, into target/docs-tools), Doxygen and
# Chromium (Debian, apt-get on first use), the Python tools pinned in
# tools/docs/requirements.txt (into target/docs-tools/venv).

DOCS_TARGET    := $(abspath $(or $(CARGO_TARGET_DIR),target))
DOCS_OUT       := $(DOCS_TARGET)/docs
DOCS_SITE      := $(DOCS_OUT)/site
DOCS_GEN       := $(DOCS_OUT)/generated
DOCS_API       := $(DOCS_OUT)/api
DOCS_TOOLS     := $(DOCS_TARGET)/docs-tools
DOCS_VENV      := $(DOCS_TOOLS)/venv
DOCS_PY        := $(DOCS_VENV)/bin/python
DOCS_MDBOOK_VERSION := 0.5.4
DOCS_MDBOOK    := $(DOCS_TOOLS)/bin/mdbook
DOCS_VENV_STAMP := $(DOCS_VENV)/.cursus-docs-tools
DOCS_CRATES    := cursus cursus-wire cursus-bridge

.PHONY: docs docs-check docs-tools docs-tools-test docs-api docs-api-rust docs-api-java docs-api-python \
  docs-api-go docs-api-c docs-fragments docs-book

docs: docs-book
	$(DOCS_PY) tools/docs/linkcheck.py $(DOCS_SITE)

# The tools' own tests, on small inputs (tools/docs/tests).
docs-tools-test: docs-tools
	$(DOCS_PY) -m pytest tools/docs/tests -q -p no:cacheprovider --ignore tools/docs/tests/test_browser_check.py
	cd tools/docs/godoc && GOTOOLCHAIN=local GOFLAGS=-mod=mod go test ./...

docs-check: docs-tools
	@command -v chromium >/dev/null || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }
	$(DOCS_PY) -m pytest tools/docs/tests/test_browser_check.py -q -p no:cacheprovider
	$(DOCS_PY) tools/docs/browser_check.py $(DOCS_SITE) --screens $(DOCS_OUT)/screens

# The Python tools, mdBook (without its serve/watch features) and Doxygen.
# (PATH: so that cargo install does not warn that its --root is not on it.)
docs-tools: $(DOCS_VENV_STAMP)
	@$(DOCS_MDBOOK) --version 2>/dev/null | grep -qx "mdbook v$(DOCS_MDBOOK_VERSION)" || \
	  PATH="$(DOCS_TOOLS)/bin:$$PATH" $(CARGO) install mdbook --locked --version $(DOCS_MDBOOK_VERSION) --no-default-features \
	    --features search --root $(DOCS_TOOLS)
	@command -v doxygen >/dev/null || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends doxygen; }

$(DOCS_VENV_STAMP): tools/docs/requirements.txt
	@test -x $(DOCS_PY) || python3 -m venv $(DOCS_VENV)
	$(DOCS_PY) -m pip install -q --disable-pip-version-check -r tools/docs/requirements.txt
	@touch $@

docs-api: docs-api-rust docs-api-java docs-api-python docs-api-go docs-api-c

docs-api-rust:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps $(addprefix -p ,$(DOCS_CRATES))
	rm -rf $(DOCS_API)/rust && mkdir -p $(DOCS_API)
	cp -r $(DOCS_TARGET)/doc $(DOCS_API)/rust
	@# rustdoc makes no page above the crates (its help and settings pages link one).
	@printf '%s\n' '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">' \
	  '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Cursus SDK: Rust API</title>' \
	  '<style>body{font-family:sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}</style></head><body>' \
	  '<h1>Rust API</h1><ul>' \
	  '<li><a href="cursus/index.html">cursus</a>: the engine (clients, producer, consumer, admin, event store)</li>' \
	  '<li><a href="cursus_wire/index.html">cursus_wire</a>: the Wire v2 codec</li>' \
	  '<li><a href="cursus_bridge/index.html">cursus_bridge</a>: where the engine meets the languages</li>' \
	  '</ul><p><a href="../../index.html">Back to the documentation</a></p></body></html>' > $(DOCS_API)/rust/index.html

# The plugin skips the run when the source folder's time stamp is older
# than its stale-data file, which editing a file deep inside does not
# change: without the rm, an edit could ship stale pages unchecked.
docs-api-java:
	rm -f $(JAVA_DIR)/target/maven-javadoc-plugin-stale-data.txt
	cd $(JAVA_DIR) && $(JAVA_MVN) -B -ntp -q $(MVN_FLAGS) -Pdist javadoc:javadoc
	rm -rf $(DOCS_API)/java && mkdir -p $(DOCS_API)
	cp -r $(JAVA_DIR)/target/reports/apidocs $(DOCS_API)/java
	@# Debian's JDK has javadoc without the DejaVu web fonts its stylesheet imports
	@# (resources/fonts/dejavu.css, a missing file on every page): an empty one,
	@# the pages fall back to the system's sans-serif.
	@test -f $(DOCS_API)/java/resources/fonts/dejavu.css || { mkdir -p $(DOCS_API)/java/resources/fonts && \
	  echo '/* The JDK that made these pages has no DejaVu web fonts: the system sans-serif is used. */' \
	    > $(DOCS_API)/java/resources/fonts/dejavu.css; }

# The wheel of `make python-wheel`, installed into the tools' venv alone.
docs-api-python: python-wheel docs-tools
	$(DOCS_PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(PY_WHEELS)/cursus-*.whl
	$(DOCS_PY) tools/docs/pdoc_build.py --out $(DOCS_API)/python --counts $(DOCS_GEN)/counts/python.json

docs-api-go:
	@mkdir -p $(DOCS_GEN)/pages/reference $(DOCS_GEN)/counts
	cd tools/docs/godoc && GOTOOLCHAIN=local GOFLAGS=-mod=mod go run . -dir $(CURDIR)/ffi-c/go \
	  -out $(DOCS_GEN)/pages/reference/api-go.md -counts $(DOCS_GEN)/counts/go.json \
	  -title "Go package cursus"

docs-api-c: docs-tools
	rm -rf $(DOCS_API)/doxygen && mkdir -p $(DOCS_API)/doxygen
	DOCS_REPO=$(CURDIR) DOCS_DOXYGEN_OUT=$(DOCS_API)/doxygen doxygen tools/docs/Doxyfile
	rm -rf $(DOCS_API)/c && mv $(DOCS_API)/doxygen/html $(DOCS_API)/c

# Tables made at build time: the broker's settings (from its --help), the
# API reference's coverage, the figures of record as charts.
docs-fragments: docs-api docs-tools
	$(CARGO) build -q -p cursus-broker --bin cursus-broker
	$(DOCS_PY) tools/docs/fragments.py --generated $(DOCS_GEN) --api $(DOCS_API) \
	  --broker $(DOCS_TARGET)/debug/cursus-broker --figures docs/figures/performance.json

docs-book: docs-tools-test docs-fragments
	python3 tools/docs/assemble.py --generated $(DOCS_GEN) --out $(DOCS_OUT)/book/src
	rm -rf $(DOCS_SITE)
	$(DOCS_MDBOOK) build $(DOCS_OUT)/book -d $(DOCS_SITE) 2>&1 | tee $(DOCS_OUT)/mdbook.log
	@! grep -E ' (WARN|ERROR) ' $(DOCS_OUT)/mdbook.log || { echo "docs: mdBook warned (above)"; exit 1; }
	# The 404 page is for a web server (it loads from the site's root), not for file://.
	rm -f $(DOCS_SITE)/404.html
	mkdir -p $(DOCS_SITE)/api
	cp -r $(DOCS_API)/rust $(DOCS_API)/java $(DOCS_API)/python $(DOCS_API)/c $(DOCS_SITE)/api/
