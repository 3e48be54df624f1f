# `make demo` and `make test` bootstrap .venv from requirements.lock on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit bench lock clean

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@touch $(STAMP)

# Runs the bundled research scenarios offline. Exit 1 (some scenarios failed) is the demo's point,
# so it does not fail the make target; exit 2 (bad input or configuration) does.
demo: $(STAMP)
	@$(BIN)/evaluator run scenarios/research --output .evaluator/demo-results.json; \
	  code=$$?; if [ $$code -eq 1 ]; then echo "(exit 1: some scenarios failed, as the demo intends)"; exit 0; fi; exit $$code

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_validate.py
	$(BIN)/python benchmarks/bench_runner.py

# Re-pin after changing dependencies in pyproject.toml.
lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable --exclude langfuse-agent-evaluator > requirements.lock

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
