#!/usr/bin/env python3
"""Run scenarios: the same arguments as `evaluator run` (see `--help`). Like the command, it runs the
suite through `evaluator.run.run_suite()`; call that directly from Python or a notebook."""

import sys

try:
    from evaluator.cli import main
except ModuleNotFoundError as exc:  # a Python without the evaluator and its dependencies
    if exc.name != "evaluator":
        raise
    sys.exit(
        f"error: {exc}. Fix: run this with the project's virtualenv, "
        f".venv/bin/python {sys.argv[0]} (`make demo` or `make test` creates it)."
    )

if __name__ == "__main__":
    main(["run", *sys.argv[1:]])
