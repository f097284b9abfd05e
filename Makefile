# Set-up and the everyday targets. `make demo` and `make test` are the README's two commands.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

UI_FRONTEND = lineage_platform/ui/frontend
UI_VENDOR   = lineage_platform/ui/static/vendor

.PHONY: setup ui-assets system-deps demo test test-fast lint format bench bench-warehouse conformance clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ui-assets

# `lineage ui` and `trace --format html` front-end: npm packages pinned in package-lock.json, copied into the Python
# package (offline, no CDN). The vendor folder is built, never committed.
ui-assets: $(UI_VENDOR)/.built

$(UI_VENDOR)/.built: $(UI_FRONTEND)/package-lock.json
	@command -v npm >/dev/null || { if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm >/dev/null; \
	  else echo "npm is needed to build the lineage ui front end: apt-get install npm"; exit 1; fi; }
	cd $(UI_FRONTEND) && npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(UI_VENDOR)
	cd $(UI_FRONTEND)/node_modules/elkjs && cp lib/elk.bundled.js lib/elk-worker.min.js LICENSE.md $(CURDIR)/$(UI_VENDOR)/
	touch $@

# Debian packages the tests use: chromium (screenshots of HTML lineage, `lineage ui` browser tests, driven by
# Playwright from the dev extras) and graphviz (SVG output); npm builds the UI's front-end bundle (ui-assets).
system-deps:
	@command -v chromium >/dev/null && command -v dot >/dev/null && command -v npm >/dev/null || \
	  { if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium graphviz npm >/dev/null; \
	    else echo "install chromium, graphviz and npm (apt-get install chromium graphviz npm) for the picture tests"; fi; }

demo: setup
	$(BIN)/lineage demo

test: system-deps setup  # system-deps first: setup builds the UI bundle with npm
	$(BIN)/pytest -q

test-fast: setup
	$(BIN)/pytest -q -m "not slow"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# TinkerPop's Gherkin scenarios, then 10,000 random traversals compared with the reference TinkerGraph server
conformance: setup
	$(BIN)/python -m tools.conformance
	$(BIN)/python -m tools.conformance.differential --count 10000 --seed 1

# every benchmark with its defaults (bench_warehouse.py: 1/10 of the year, ~1 hour on 2 vCPUs)
bench: setup
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

# the warehouse-scale benchmark alone: `make bench-warehouse SCALE=0.1` (or 1 for the full year)
SCALE ?= 0.01
bench-warehouse: setup
	PYTHONPATH=. $(BIN)/python benchmarks/bench_warehouse.py --scale $(SCALE)

include benchmarks/sql_peers/peers.mk
include docs/docs.mk

clean:
	rm -rf $(VENV) .venv-peers .pytest_cache build *.egg-info
