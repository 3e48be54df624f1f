"""The `evaluator` command line (contract: DESIGN.md, Command line): typer commands only, each parsing
its options, calling the library and mapping errors to exit codes.

Exit codes: 0 every scenario passed, 1 any scenario failed or errored, 2 bad input or configuration
(a clear message on stderr, no traceback).
"""

import logging
import sys
from collections.abc import Sequence

from evaluator.cli import compare, datasets, lint, prompts, report, run, sync, validate
from evaluator.cli._common import EXIT_BAD_INPUT, app, err
from evaluator.errors import EvaluatorError, InputError
from evaluator.reports import notice

__all__ = ["app", "compare", "datasets", "lint", "main", "prompts", "report", "run", "sync", "validate"]


# Library log lines the command says better itself, by logger: the span exporter's on a batch it will
# retry or gave up retrying (a run accounts for every span: what Langfuse acknowledged, what waits in
# the outbox for `sync`; a refusal, with its reason, stays), and the SDK's on a prompt it could not
# fetch (the run says which local file it uses instead). On a Langfuse that is down they would repeat
# that, a line per batch or prompt, amid the run's own notes.
_SAID_OTHERWISE = {
    "opentelemetry.exporter.otlp.proto.http.trace_exporter": (
        "Transient error %s",
        "Failed to export %s batch due to timeout",
    ),
    "langfuse": ("Error while fetching prompt '%s'", "Prompt '%s' not found during refresh"),
}


class _SaidOtherwise(logging.Filter):
    def __init__(self, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self._prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(self._prefixes))


def main(args: Sequence[str] | None = None) -> None:
    """The console script: `evaluator ARGS...` (`args` instead of sys.argv, for scripts)."""
    for name, prefixes in _SAID_OTHERWISE.items():
        log = logging.getLogger(name)
        if not any(isinstance(f, _SaidOtherwise) for f in log.filters):
            log.addFilter(_SaidOtherwise(prefixes))
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
