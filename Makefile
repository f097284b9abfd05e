# Set-up and the everyday targets. `make demo` and `make test` are the README's two commands.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: setup demo test test-fast lint format bench conformance clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/lineage demo

test: setup
	$(BIN)/pytest -q

test-fast: setup
	$(BIN)/pytest -q -m "not slow"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

conformance: setup
	$(BIN)/python -m lineage_platform.graph.conformance

bench: setup
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
