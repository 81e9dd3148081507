# Two commands do everything on a fresh machine with Python 3.11+, make and a package index (PyPI):
#   make run    create .venv-run with what running needs, start the bot (the console without Slack tokens)
#   make test   create .venv with the development tools too, then lint, type-check and run every test
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed-stamp
RUN_VENV ?= .venv-run
RUN_STAMP = $(RUN_VENV)/.installed-stamp

.PHONY: run test lint typecheck pytest bench quality ordinary clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "incident-bot needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(RUN_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "incident-bot needs Python 3.11+")'
	$(PYTHON) -m venv $(RUN_VENV)
	$(RUN_VENV)/bin/pip install --quiet --disable-pip-version-check -e .
	@touch $(RUN_STAMP)

run: $(RUN_STAMP)
	$(RUN_VENV)/bin/incident-bot

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
	rm -rf $(VENV) $(RUN_VENV) .mypy_cache .ruff_cache .pytest_cache data
