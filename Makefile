# Two commands do everything on a fresh machine with Python 3.11+ and make:
#   make run    create .venv, install, start the bot (the local console when no Slack tokens are set)
#   make test   create .venv, install, then lint, type-check and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed-stamp

.PHONY: run test lint typecheck pytest bench quality ordinary clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "incident-bot needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/incident-bot

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

quality: $(STAMP)
	$(BIN)/python -m bench.quality

bench: $(STAMP)
	$(BIN)/python -m bench.matcher_bench

ordinary: $(STAMP)
	$(BIN)/python tests/build_ordinary.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache data
