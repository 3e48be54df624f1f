#!/usr/bin/env python3
"""Run scenarios: the same arguments as `evaluator run` (see `--help`). Like the command, it runs the
suite through `evaluator.run.run_suite()`; call that directly from Python or a notebook."""

import sys

from evaluator.cli import main

if __name__ == "__main__":
    main(["run", *sys.argv[1:]])
