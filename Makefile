# nineplan: every target creates .venv from nothing and installs what it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make demo` runs from a venv with only what running needs (no dev tools).
RUN_VENV := .venv-run
RUN_STAMP := $(RUN_VENV)/.installed
# `make wheel-check` installs the built wheel here, as `pip install nineplan` would.
WHEEL_VENV := build/wheel-venv

.PHONY: demo test test-deep test-fast wheel-check lint typecheck docs docs-check conformance clients soak load bench torture fuzz screenshots clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("nineplan needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

$(RUN_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("nineplan needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(RUN_VENV)
	$(RUN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RUN_VENV)/bin/python -m pip install --quiet -e .
	@touch $@

demo: $(RUN_STAMP)
	$(RUN_VENV)/bin/nineplan demo

# Build the wheel, install it (not editable) into a scratch venv, and smoke-test it from outside
# the source tree: a file missing from the package data fails here.
wheel-check: $(STAMP)
	rm -rf build/lib build/bdist.* build/dist
	$(BIN)/python -m pip wheel --quiet --no-deps -w build/dist .
	test -x $(WHEEL_VENV)/bin/python || $(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip uninstall --quiet --yes nineplan
	$(WHEEL_VENV)/bin/python -m pip install --quiet build/dist/nineplan-*.whl
	cd $(WHEEL_VENV) && bin/python $(CURDIR)/tests/smoke/wheel_smoke.py

lint: $(STAMP)
	$(BIN)/ruff format --check src tests examples benchmarks conformance scripts
	$(BIN)/ruff check src tests examples benchmarks conformance scripts
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite runs in two phases: every test but the timing-bound ones on three pytest-xdist workers
# (two cores: a test waiting on a server, a browser or a lease leaves a core to another;
# worksteal hands a long test's neighbours to an idle worker; each worker has its own PostgreSQL
# database and temporary folders, tests/conftest.py), then the `serial` ones (races, kills,
# torture rounds, live checks with short deadlines) two at a time, each keeping a core of the
# two, and last the `alone` ones (the board's moves raced against live redraws) by themselves;
# both without coverage's tracer,
# which would double their CPU and move their deadlines. Coverage is measured over the first
# phase and every process it starts; the 20 slowest tests of the whole run print at the end.
# Lint, types and the wheel check come first, side by side (-j3, each one's output whole: -O).
PYTEST_WORKERS ?= 3
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 -O lint typecheck wheel-check
	rm -f .coverage .coverage.* build/junit-*.xml
	$(BIN)/coverage run -m pytest -n $(PYTEST_WORKERS) --dist worksteal -m "not serial" --junitxml=build/junit-parallel.xml
	$(BIN)/pytest -n 2 --dist worksteal -m "serial and not alone" --junitxml=build/junit-serial.xml
	$(BIN)/pytest -p no:xdist -m alone --junitxml=build/junit-alone.xml
	$(BIN)/coverage combine --quiet
	# Without a test PostgreSQL server its adapter is not exercised, so it is not counted.
	$(BIN)/coverage report $(if $(NINEPLAN_TEST_DATABASE_URL),,--omit='*/nineplan_adapters/storage/postgres/*')
	$(BIN)/python scripts/slowest.py build/junit-parallel.xml build/junit-serial.xml build/junit-alone.xml --top 20

# What is long on purpose, for a schedule or before a release (docs/testing.md): the property
# tests 2,000 examples deep on every backend, then `make torture` (500 SIGKILL rounds, 20 races).
test-deep: soak torture

# The inner loop: unit and property tests (fewer hypothesis examples), no process started, no
# browser, no PostgreSQL.
test-fast: $(STAMP)
	NINEPLAN_FAST=1 $(BIN)/pytest -q -p no:cacheprovider -n 2 -m "not slow and not browser and not postgres" tests

# The web view's screenshots in docs/img/ (docs/ui.md shows them): a demo sessions folder in a
# temporary directory, `nineplan ui` on it, Debian's Chromium at desktop and phone width, dark.
screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py --out docs/img

# Regenerate the tool reference from the live server.
docs: $(STAMP)
	$(BIN)/python -m nineplan_adapters.entrypoints.mcp.reference > docs/tools.md

# Run every command the README and docs show, and check docs/tools.md is current (also in make test).
docs-check: $(STAMP)
	$(BIN)/pytest -q tests/integration/test_docs.py tests/integration/test_cli.py -k "documented or docs_show or reference or snippet or json_block or library_example"

# The official MCP conformance suite, pinned, with a Node 22 it runs on (both from the npm
# registry, into build/), against `nineplan serve --transport http`; each server scenario's result
# must be what conformance/expected.txt says.
CONFORMANCE_DIR := build/conformance
CONFORMANCE_VERSION := 0.1.16
CONFORMANCE_NODE := 22.23.5
NODE_ARCH := $(shell uname -m | sed -e s/x86_64/x64/ -e s/aarch64/arm64/)
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/.installed-$(CONFORMANCE_VERSION)-node-$(CONFORMANCE_NODE)

$(CONFORMANCE_STAMP):
	@command -v npm >/dev/null || { echo "make conformance needs npm to install the suite" >&2; exit 2; }
	rm -rf $(CONFORMANCE_DIR)
	mkdir -p $(CONFORMANCE_DIR)
	cd $(CONFORMANCE_DIR) && npm install --prefix . --no-save --no-audit --no-fund --loglevel=error \
		@modelcontextprotocol/conformance@$(CONFORMANCE_VERSION) node-linux-$(NODE_ARCH)@$(CONFORMANCE_NODE)
	@touch $@

conformance: $(STAMP) $(CONFORMANCE_STAMP)
	$(BIN)/python conformance/check.py \
		--node $(CONFORMANCE_DIR)/node_modules/node-linux-$(NODE_ARCH)/bin/node \
		--suite $(CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance/dist/index.js

# The real MCP clients, pinned in tests/clients/package.json (its lock file: `npm ci`), installed
# into build/clients when missing or when the pins change; then tests/clients drives each one
# headless against the wheel's `nineplan serve` (wheel-check installs it into build/wheel-venv)
# and a scripted stand-in for its model's API, one test at a time (docs/clients.md, "Testing
# with the real clients"). `make test` leaves tests/clients out.
CLIENTS_DIR := build/clients
CLIENTS_STAMP := $(CLIENTS_DIR)/.installed

$(CLIENTS_STAMP): tests/clients/package.json tests/clients/package-lock.json
	@command -v npm >/dev/null || { echo "make clients needs npm to install the clients" >&2; exit 2; }
	rm -rf $(CLIENTS_DIR)
	mkdir -p $(CLIENTS_DIR)
	cp tests/clients/package.json tests/clients/package-lock.json $(CLIENTS_DIR)/
	npm ci --prefix $(CLIENTS_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

clients: $(STAMP) $(CLIENTS_STAMP) wheel-check
	NINEPLAN_CLIENTS_SERVER=$(CURDIR)/$(WHEEL_VENV)/bin/nineplan $(BIN)/pytest -p no:xdist tests/clients

# Long property runs: more hypothesis examples than CI affords.
soak: $(STAMP)
	NINEPLAN_SOAK=1 $(BIN)/pytest -n $(PYTEST_WORKERS) tests/property -q

# 8 concurrent clients x 100 add/pull/complete cycles, over HTTP and over stdio.
load: $(STAMP)
	$(BIN)/python -m benchmarks.load --clients 8 --cycles 100

# nineplan against its floors (docs/performance.md); BENCH_SIZE=tiny for a quick run. Then
# 1, 2, 4, 8 workers emptying one queue beside N processes committing with the driver directly;
# then a person's drag-moves in a 10,000-plan queue.
BENCH_SIZE ?= full
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run --size $(BENCH_SIZE)
	$(BIN)/python -m benchmarks.workers --size $(BENCH_SIZE)
	$(BIN)/python -m benchmarks.steering --size $(BENCH_SIZE)

# 500 rounds of SIGKILL at random moments, then the workers' race 20 times (8 worker processes on
# a 200-plan SQLite queue; 2 x 4 on PostgreSQL too with NINEPLAN_TEST_DATABASE_URL), then the same
# race 20 times on a random 200-plan graph of prerequisites; each prints a table and exits 1 on
# any loss (the races: on any plan completed twice or lost; the graph's: or pulled early).
torture: $(STAMP)
	$(BIN)/python -m tests.reliability.torture --rounds 500
	$(BIN)/python -m tests.reliability.race --runs 20
	$(BIN)/python -m tests.reliability.graph_race --runs 20

# 50,000 hostile MCP calls.
fuzz: $(STAMP)
	NINEPLAN_FUZZ_CALLS=50000 $(BIN)/pytest tests/reliability/test_fuzz.py -q -o timeout=3600

clean:
	rm -rf $(VENV) $(RUN_VENV) build dist .coverage .coverage.* .mypy_cache .ruff_cache .pytest_cache .hypothesis
