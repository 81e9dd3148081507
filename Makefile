# Two commands do everything on a fresh machine with Python 3.11+, make and a package index (PyPI):
#   make run    create .venv-run with what running needs, start the bot (the console without Slack tokens)
#   make test   create .venv with the development tools too, then lint, type-check and run every test
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed-stamp
RUN_VENV ?= .venv-run
RUN_STAMP = $(RUN_VENV)/.installed-stamp

.PHONY: run test lint typecheck pytest stress mutants bench quality ordinary clean

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

# The multi-process and timing tests (@pytest.mark.timing), STRESS_COUNT times each, two at a time, with
# every core kept busy: stress-ng --cpu 0 (one worker per core) when installed, else a busy loop per core.
STRESS_COUNT ?= 50
stress: $(STAMP)
	@load=""; \
	if command -v stress-ng >/dev/null 2>&1; then stress-ng --cpu 0 --quiet & load=$$!; \
	else for _ in $$(seq $$(nproc)); do sh -c 'while :; do :; done' & load="$$load $$!"; done; fi; \
	trap 'kill $$load 2>/dev/null' EXIT INT TERM; \
	echo "stress: each timing test $(STRESS_COUNT) times, $$(nproc) core(s) kept busy"; \
	$(BIN)/pytest -m timing --count $(STRESS_COUNT) -n 2 -q -p no:cacheprovider $$(grep -l 'mark.timing' tests/test_*.py)

# Mutation testing of the security-relevant modules ([tool.mutmut] in pyproject.toml); fails under 90%.
mutants: $(STAMP)
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2 >/dev/null
	$(BIN)/python -m bench.mutation_score --mutmut $(BIN)/mutmut

quality: $(STAMP)
	$(BIN)/python -m bench.quality

bench: $(STAMP)
	$(BIN)/python -m bench.matcher_bench

ordinary: $(STAMP)
	$(BIN)/python tests/build_ordinary.py

clean:
	rm -rf $(VENV) $(RUN_VENV) .mypy_cache .ruff_cache .pytest_cache data mutants
