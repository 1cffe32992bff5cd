# Everything the project needs is installed here, into .venv, from the package registries.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install chromium demo test bench clean

$(BIN)/workbench: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip uninstall --quiet --yes workbench 2>/dev/null || true   # the distribution's old name
	$(BIN)/pip install --quiet -e '.[dev,lm-eval]'
	touch $(BIN)/workbench

install: $(BIN)/workbench

demo: install
	$(BIN)/python -m workbench.demo

# The report's browser test (tests/test_report.py) opens its page in headless Chromium, from Debian's packages.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  { echo "make test needs Chromium: apt-get install chromium (as root)"; exit 1; }

test: install chromium
	$(BIN)/python -m pytest -q

# make bench: every section; make bench SECTION=fluency (or SECTION="fluency sofa"): some of them.
bench: install
	$(BIN)/python -m benchmarks.run $(SECTION)

clean:
	rm -rf $(VENV) .workbench demo-output
