# The two commands of the README's quick start, plus the checks CI runs.
.PHONY: setup demo test test-fast lint typecheck check bench

VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DB ?= var/demo.duckdb

setup:
	@./scripts/setup.sh

# Set up, crawl the bundled recordings (offline, on 127.0.0.1) into a DuckDB file,
# and print the cheapest in-stock cards with at least 32 GB.
demo: setup
	$(BIN)/gpurent crawl --replay --db $(DEMO_DB)
	$(BIN)/gpurent cheapest --min-vram 32 --db $(DEMO_DB)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy gpurent gpurent_core spiders flows warehouse sizing replay dashboards

# One worker per CPU (pytest-xdist); a module's tests stay on one worker, so a module's
# fixtures (a crawl, a warehouse, a flow server) are built once. `PYTEST_WORKERS=0` runs
# everything in this process (a debugger, --pdb).
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadscope

test: setup
	$(BIN)/python -m pytest $(XDIST)

# The fast tier (tests/tiers.py): what a developer runs after each change.
test-fast: setup
	$(BIN)/python -m pytest $(XDIST) -m "not slow" --hypothesis-profile fast -q

check: lint typecheck test

bench: setup
	$(BIN)/python -m benchmarks $(BENCH_ARGS)
