"""The `evaluator` command line (contract: DESIGN.md, Command line): typer commands only, each parsing
its options, calling the library and mapping errors to exit codes.

Exit codes: 0 every scenario passed, 1 any scenario failed or errored, 2 bad input or configuration
(a clear message on stderr, no traceback).
"""

import sys
from collections.abc import Sequence

from evaluator.cli import compare, datasets, lint, prompts, report, run, sync, validate
from evaluator.cli._common import EXIT_BAD_INPUT, app, err
from evaluator.errors import EvaluatorError, InputError
from evaluator.reports import notice

__all__ = ["app", "compare", "datasets", "lint", "main", "prompts", "report", "run", "sync", "validate"]


def main(args: Sequence[str] | None = None) -> None:
    """The console script: `evaluator ARGS...` (`args` instead of sys.argv, for scripts)."""
    try:
        app(args=list(args) if args is not None else None)
    except InputError as exc:
        for problem in exc.problems:
            notice(err, "error", str(problem))
        err.print(f"{len(exc.problems)} problem(s); fix them and run the command again.", highlight=False)
        sys.exit(EXIT_BAD_INPUT)
    except EvaluatorError as exc:
        notice(err, "error", str(exc))
        sys.exit(EXIT_BAD_INPUT)
