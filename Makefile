# Skill Librarian. `make demo` sets up and opens the app on the demo library;
# `make check` sets up and runs every check (lint, types, import rules, tests).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo check lint format types imports test test-fast bench screenshots clean

$(STAMP): pyproject.toml
	@echo "setting up $(VENV): installing dependencies (~1-2 min on first run, then skipped)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	@echo "opening the demo library (built on first run, ~25 s)"
	$(BIN)/librarian demo

check: setup lint types imports test

lint: setup
	$(BIN)/ruff check app widgets store tooling tests
	$(BIN)/ruff format --check app widgets store tooling tests

format: setup
	$(BIN)/ruff format app widgets store tooling tests
	$(BIN)/ruff check --fix app widgets store tooling tests

types: setup
	$(BIN)/mypy

imports: setup
	$(BIN)/lint-imports

test: setup
	$(BIN)/python -m pytest -q -n auto

test-fast: setup
	$(BIN)/python -m pytest -q -n auto -m "not corpus"

bench: setup
	$(BIN)/librarian bench --json

screenshots: setup
	$(BIN)/python -m app.screenshots

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
