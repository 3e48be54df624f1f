# `make demo` and `make test` bootstrap .venv from requirements.lock on first use (the package with its
# dev tools and the agent frameworks the tests build real systems with: the `frameworks` extra).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit browser bench lock clean

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing pinned dependencies into $(VENV) (log: $(VENV)/install.log)"
	@$(BIN)/python -m pip install --disable-pip-version-check -c requirements.lock -e '.[dev,frameworks]' \
	  > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

# Runs the bundled concierge dialogues, then the research scenarios (last, so that `latest` is the
# research run the README's walk-through goes on from), on the embedded default (Langfuse and LLM settings ignored: no
# keys, no services; the LLM judges do not run, and the run says how to enable them). Exit 1 (some scenarios failed) is the demo's point, so it does not fail the make
# target; exit 2 (bad input or configuration) does.
# The demo runs on the embedded default whatever the shell holds: every LANGFUSE_*, OPENAI_* and
# EVALUATOR_JUDGE_* variable unset (LANGFUSE_TRACING_ENABLED=false or a bad LANGFUSE_FLUSH_AT too).
DEMO_UNSET := $(sort LANGFUSE_PUBLIC_KEY LANGFUSE_SECRET_KEY LANGFUSE_BASE_URL LANGFUSE_HOST \
	OPENAI_API_KEY OPENAI_BASE_URL EVALUATOR_JUDGE_BASE_URL EVALUATOR_JUDGE_API_KEY EVALUATOR_CONFIG \
	$(filter LANGFUSE_% OPENAI_% EVALUATOR_JUDGE_%,$(.VARIABLES)))
DEMO_ENV := env $(addprefix -u ,$(DEMO_UNSET))

demo: $(STAMP)
	@echo "Dialogues: scenarios/concierge against the concierge demo (demo_agents/concierge/README.md)"
	@$(DEMO_ENV) $(BIN)/evaluator run scenarios/concierge --output .evaluator/demo-dialogues.json; \
	  code=$$?; if [ $$code -eq 1 ]; then echo "(exit 1: some dialogues failed, as the demo intends)"; \
	  elif [ $$code -ne 0 ]; then exit $$code; fi
	@echo; echo "Single-turn scenarios: scenarios/research against the research demo"
	@$(DEMO_ENV) $(BIN)/evaluator run scenarios/research --output .evaluator/demo-results.json; \
	  code=$$?; if [ $$code -eq 1 ]; then echo "(exit 1: some scenarios failed, as the demo intends)"; exit 0; fi; exit $$code

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The HTML report test opens the page in a headless Chromium: install Debian's when missing (as root,
# with apt-get); otherwise that one test is skipped and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && echo "Installing chromium (apt-get)" && \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1; } || \
	  echo "(no Chromium and it cannot be installed here: the HTML rendering test will be skipped)"

# Two worker processes, each taking whole modules (their module fixtures run once): most tests wait on
# loopback servers and deadlines, so two halve the wall time on two cores.
unit: $(STAMP) browser
	$(BIN)/pytest -q -n 2 --dist loadscope

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_validate.py
	$(BIN)/python benchmarks/bench_agent_checks.py
	$(BIN)/python benchmarks/bench_runner.py
	$(BIN)/python benchmarks/bench_judge.py
	$(BIN)/python benchmarks/bench_replies.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_overhead.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_stages.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_judges.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_judges.py --items 1000 --concurrency 64 --latency-ms 50
	$(BIN)/python benchmarks/bench_startup.py

# Re-pin after changing dependencies in pyproject.toml (--all: setuptools too, a dev dependency).
lock: $(STAMP)
	$(BIN)/python -m pip freeze --all --exclude pip --exclude-editable --exclude langfuse-agent-evaluator \
	  > requirements.lock

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
