#!/usr/bin/env python3
"""Run scenarios: the same arguments as `evaluator run` (see `--help`)."""

import sys

from evaluator.cli import main

if __name__ == "__main__":
    sys.argv = [sys.argv[0], "run", *sys.argv[1:]]
    main()
