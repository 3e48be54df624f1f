"""The `evaluator` command line (contract: DESIGN.md, Command line): typer commands only, each parsing
its options, calling the library and mapping errors to exit codes.

Exit codes: 0 every scenario passed, 1 any scenario failed or errored, 2 bad input or configuration
(a clear message on stderr, no traceback), 4 the local store cannot be used (errors.StoreError: disk
full, locked, damaged, read-only; the message says which and what to do), 130 interrupted (Ctrl-C)
before a run could stop itself, 143 the same for SIGTERM.

This module imports the commands (and through them the library, the Langfuse SDK, pydantic...) only
inside `main`, so that a Ctrl-C while they load is `main`'s to answer, as one line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    from evaluator.errors import LangfuseUnavailableError

__all__ = ["app", "compare", "datasets", "lint", "main", "prompts", "report", "run", "sync", "validate"]

EXIT_INTERRUPTED = 128 + 2  # SIGINT, as a shell reports a program it stopped
EXIT_TERMINATED = 128 + signal.SIGTERM
_CHAIN_DEPTH = 4  # how far down an exception's causes to look for the interrupt or closed pipe under it


def main(args: Sequence[str] | None = None) -> None:
    """The console script: `evaluator ARGS...` (`args` instead of sys.argv, for scripts).

    A Ctrl-C that no command handles itself (while the command starts: imports, the configuration,
    the targets' imports, the Langfuse checks; a run handles its own, and says so) prints
    "interrupted" and exits 130; a SIGTERM there does the same and exits 143 (without this, Python's
    default ended the process at once, saying nothing). A closed stdout (`evaluator compare ... |
    head`) ends the command quietly with exit 0, as CLI tools do: the reader has what it wanted."""
    previous = _terminate_as_interrupt()
    try:
        _main(args)
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except BrokenPipeError:
        _stdout_closed()
    except SystemExit as exc:  # typer's own answers to both: exit 130 silently, exit 1
        if _caused_by(exc, KeyboardInterrupt):
            _interrupted(_cause(exc, KeyboardInterrupt))
        if _caused_by(exc, BrokenPipeError):
            _stdout_closed()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class _Terminated(KeyboardInterrupt):
    """A SIGTERM that no run handles: it stops the command where it is, as a Ctrl-C does."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def _terminate_as_interrupt() -> Any:
    """SIGTERM raises _Terminated from now on (a run installs its own handler for its duration);
    the handler before, to put back. Outside the main thread no handler can be set: None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)


def _main(args: Sequence[str] | None) -> None:
    from evaluator.cli._common import EXIT_BAD_INPUT, EXIT_STORE, err
    from evaluator.errors import EvaluatorError, InputError, LangfuseUnavailableError, StoreError
    from evaluator.langfuse import one_command
    from evaluator.reports import notice

    command_line = _app()
    try:
        with one_command():  # the process ends with the command: a run shuts the SDK down at its end
            command_line(args=list(args) if args is not None else None)
    except InputError as exc:
        for problem in exc.problems:
            notice(err, "error", str(problem))
        err.print(f"{len(exc.problems)} problem(s); fix them and run the command again.", highlight=False)
        sys.exit(EXIT_BAD_INPUT)
    except StoreError as exc:  # not bad input: the disk, another program, or the file itself
        notice(err, "error", str(exc))
        sys.exit(EXIT_STORE)
    except LangfuseUnavailableError as exc:
        notice(err, "error", _with_fix(exc))
        sys.exit(EXIT_BAD_INPUT)
    except EvaluatorError as exc:
        notice(err, "error", str(exc))
        sys.exit(EXIT_BAD_INPUT)


def _with_fix(exc: LangfuseUnavailableError) -> str:
    """The message of a Langfuse that could not be reached or kept failing, with the fix where the
    command that met it gave none (validate --trace-id, prompts push, datasets push)."""
    message = str(exc).rstrip(".")
    if "Fix:" in message:
        return str(exc)
    if exc.status == 429:
        wait = f"{exc.retry_after:g} s, as it asks" if exc.retry_after else "a minute"
        fix = f"Langfuse is rate-limiting these keys: wait {wait}, then run the command again"
    elif exc.timed_out:
        fix = (
            "check that Langfuse is up at LANGFUSE_BASE_URL, or give a slow one more time "
            "(LANGFUSE_TIMEOUT, seconds per request), then run the command again"
        )
    else:
        fix = (
            "check that Langfuse is up at LANGFUSE_BASE_URL and reachable from here, then run the "
            "command again"
        )
    return f"{message}. Fix: {fix}."


def _app() -> typer.Typer:
    """The typer app with every command registered, its loggers quieted."""
    from evaluator.cli import compare, datasets, lint, prompts, report, run, sync, validate  # noqa: F401
    from evaluator.cli._common import app
    from evaluator.langfuse import quiet_accounted_lines

    quiet_accounted_lines()
    return app


def _interrupted(exc: BaseException | None) -> None:
    if isinstance(exc, _Terminated):
        sys.stderr.write("\ninterrupted by SIGTERM\n")
        sys.exit(EXIT_TERMINATED)
    sys.stderr.write("\ninterrupted\n")
    sys.exit(EXIT_INTERRUPTED)


def _stdout_closed() -> None:
    """Exit 0, sending whatever is still buffered for stdout nowhere (its flush at exit would fail)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file behind stdout (captured): nothing to flush
        pass
    sys.exit(0)


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether `exc` was raised while handling (or because of) an exception of `kind`."""
    return _cause(exc, kind) is not None


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The exception of `kind` that `exc` was raised while handling (or because of), if any."""
    current: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        current = current.__cause__ or current.__context__ if current is not None else None
        if isinstance(current, kind):
            return current
    return None


def __getattr__(name: str) -> object:
    """`app` and the command modules, loaded on first use (PEP 562)."""
    if name == "app":
        return _app()
    if name in __all__:
        import importlib

        return importlib.import_module(f"evaluator.cli.{name}")
    raise AttributeError(f"module 'evaluator.cli' has no attribute {name!r}")
