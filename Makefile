# Two commands do everything on a fresh machine with Python 3.11+, make and a package index (PyPI):
#   make run    create .venv-run with what running needs, start the bot (the console without Slack tokens)
#   make test   create .venv with the development tools too, then lint, type-check and run every test
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed-stamp
RUN_VENV ?= .venv-run
RUN_STAMP = $(RUN_VENV)/.installed-stamp

.PHONY: help run test lint typecheck docs pytest stress mutants bench quality ordinary dev-slurm dev-alerts clean

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

help:  ## this list
	@echo "make targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

run: $(RUN_STAMP)  ## the bot: Slack when SLACK_BOT_TOKEN is set, else the local console
	$(RUN_VENV)/bin/incident-bot

lint: $(STAMP)  ## ruff check and ruff format --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)  ## mypy --strict
	$(BIN)/mypy

pytest: $(STAMP)  ## the test suite only
	$(BIN)/pytest

# The docs site, strictly: a broken link, a missing anchor or a page left out of the navigation fails; so does
# a generated page (configuration, command reference) that differs from what the code gives.
docs: $(STAMP)  ## build the docs site into site/ (strict)
	$(BIN)/python tools/gen_docs.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint typecheck docs pytest  ## ruff, mypy --strict, the docs build and every test

# The multi-process and timing tests (@pytest.mark.timing), STRESS_COUNT times each, two at a time, with
# every core kept busy: stress-ng --cpu 0 (one worker per core) when installed, else a busy loop per core.
STRESS_COUNT ?= 50
stress: $(STAMP)  ## the timing tests, many times, on a loaded machine
	@load=""; \
	if command -v stress-ng >/dev/null 2>&1; then stress-ng --cpu 0 --quiet & load=$$!; \
	else for _ in $$(seq $$(nproc)); do sh -c 'while :; do :; done' & load="$$load $$!"; done; fi; \
	trap 'kill $$load 2>/dev/null' EXIT INT TERM; \
	echo "stress: each timing test $(STRESS_COUNT) times, $$(nproc) core(s) kept busy"; \
	$(BIN)/pytest -m timing --count $(STRESS_COUNT) -n 2 -q -p no:cacheprovider $$(grep -l 'mark.timing' tests/test_*.py)

# Mutation testing of the security-relevant modules ([tool.mutmut] in pyproject.toml); fails under 90%.
mutants: $(STAMP)  ## mutation testing of the security-relevant modules (slow)
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2 >/dev/null
	$(BIN)/python -m bench.mutation_score --mutmut $(BIN)/mutmut

quality: $(STAMP)  ## matching quality on the real-log corpus (dev and test)
	$(BIN)/python -m bench.quality

bench: $(STAMP)  ## matcher benchmarks next to a simple baseline
	$(BIN)/python -m bench.matcher_bench

ordinary: $(STAMP)  ## rebuild the ordinary-vocabulary list
	$(BIN)/python tests/build_ordinary.py

# A real one-host Slurm 22.05 cluster (slurmctld, slurmd, slurmrestd) for the Slurm tests; run as root.
# Prints the settings to export; `deploy/slurm/dev-slurm.sh stop` stops it (deploy/slurm/README.md).
dev-slurm:  ## start a one-host Slurm test cluster and print its settings (root)
	deploy/slurm/dev-slurm.sh

# A real Prometheus + Alertmanager (and a dcgm-exporter stand-in) sending alerts to BOT_ALERT_URL; run as root.
# Prints the settings to export; `deploy/prometheus/dev-alerts.sh stop` stops it (deploy/prometheus/README.md).
dev-alerts:  ## start a Prometheus + Alertmanager test stack and print its settings (root)
	deploy/prometheus/dev-alerts.sh

clean:  ## remove the virtualenvs, caches and data/
	rm -rf $(VENV) $(RUN_VENV) .mypy_cache .ruff_cache .pytest_cache data mutants site
