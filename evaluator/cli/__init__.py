"""The `evaluator` command line (contract: DESIGN.md, Command line): typer commands only, each parsing
its options, calling the library and mapping errors to exit codes.

Exit codes: 0 every scenario passed, 1 any scenario failed or errored, 2 bad input or configuration
(a clear message on stderr, no traceback), 4 the local store cannot be used (errors.StoreError: disk
full, locked, damaged, read-only; the message says which and what to do).
"""

import logging
import sys
from collections.abc import Sequence

from evaluator.cli import compare, datasets, lint, prompts, report, run, sync, validate
from evaluator.cli._common import EXIT_BAD_INPUT, EXIT_STORE, app, err
from evaluator.errors import EvaluatorError, InputError, StoreError
from evaluator.langfuse import OwnPromptFetchLines
from evaluator.reports import notice

__all__ = ["app", "compare", "datasets", "lint", "main", "prompts", "report", "run", "sync", "validate"]


# The span exporter's lines on a batch it will retry or gave up retrying: a run accounts for every
# span itself (what Langfuse acknowledged, what waits in the outbox for `sync`), so on a Langfuse that
# is down they would repeat that, a line per batch, amid its notes. A refusal, with its reason, stays.
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_EXPORT_OUTCOMES = ("Transient error %s", "Failed to export %s batch due to timeout")


class _AccountedExports(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_EXPORT_OUTCOMES))


def _quiet(logger: str, kind: type[logging.Filter]) -> None:
    log = logging.getLogger(logger)
    if not any(isinstance(f, kind) for f in log.filters):
        log.addFilter(kind())


def main(args: Sequence[str] | None = None) -> None:
    """The console script: `evaluator ARGS...` (`args` instead of sys.argv, for scripts)."""
    _quiet(_EXPORTER_LOGGER, _AccountedExports)
    _quiet("langfuse", OwnPromptFetchLines)  # the run says which prompts it could not get
    try:
        app(args=list(args) if args is not None else None)
    except InputError as exc:
        for problem in exc.problems:
            notice(err, "error", str(problem))
        err.print(f"{len(exc.problems)} problem(s); fix them and run the command again.", highlight=False)
        sys.exit(EXIT_BAD_INPUT)
    except StoreError as exc:  # not bad input: the disk, another program, or the file itself
        notice(err, "error", str(exc))
        sys.exit(EXIT_STORE)
    except EvaluatorError as exc:
        notice(err, "error", str(exc))
        sys.exit(EXIT_BAD_INPUT)
