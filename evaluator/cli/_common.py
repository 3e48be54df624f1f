"""What every command shares: the typer app, the consoles, exit codes, and a connected Langfuse."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from evaluator.config import Config
from evaluator.errors import ConfigError
from evaluator.langfuse import LangfuseConnection, LangfuseSettings

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_UNDELIVERED, EXIT_STORE = 0, 1, 2, 3, 4

app = typer.Typer(
    help="Evaluate multi-agent LLM systems through their Langfuse traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts are plain: "[compare]" names a table of evaluator.toml
)
# Rich assumes 80 columns when output is not a terminal (CI logs, pipes): give tables room there.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

ConfigOption = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="evaluator.toml to use.")]
SuiteArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="PATH", help="Scenario files, folders or globs (default: scenarios/)."),
]
TagOption = Annotated[
    list[str] | None, typer.Option(metavar="TAG", help="Only scenarios with this tag (repeatable).")
]


@contextmanager
def langfuse(purpose: str, config: Config, alternative: str = "") -> Iterator[LangfuseConnection]:
    """A connected project for a command that needs Langfuse, shut down (bounded) afterwards."""
    settings = LangfuseSettings.from_env()
    if settings is None:
        raise ConfigError(
            f"{purpose} needs Langfuse, but no keys are set. Fix: set LANGFUSE_PUBLIC_KEY, "
            f"LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL{alternative}."
        )
    connection = LangfuseConnection(settings)
    try:
        yield connection
    finally:
        connection.shutdown(config.settings.langfuse.flush_timeout_seconds)
