"""What every command shares: the typer app, the consoles, exit codes, and a connected Langfuse."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand

from evaluator.config import Config
from evaluator.errors import ConfigError
from evaluator.langfuse import LangfuseSettings
from evaluator.reports import notice

if TYPE_CHECKING:
    from evaluator.langfuse import LangfuseConnection

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

DISTRIBUTION = "langfuse-agent-evaluator"


def _print_version(asked: bool) -> None:
    if asked:
        try:
            version = metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:  # run from a checkout that was never installed
            version = "(not installed: version unknown)"
        out.print(f"{DISTRIBUTION} {version}", highlight=False, markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Options before the command (`evaluator --version`)."""


class _NamedArgument(TyperArgument):
    """An argument shown as its name, `PATH...` (as click shows one), not with typer's Python type
    (`PATH <list[str]>`) or its braces (`{PATH}...`)."""

    def display_type_rich(self, ctx: object) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class Command(TyperCommand):
    """Every command's class: its arguments shown by name (`_NamedArgument`). Give each command a
    `short_help` too: the command list would otherwise cut its docstring's first sentence at 45
    characters, mid-sentence."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:  # typer makes them itself, with no hook for their class
                param.__class__ = _NamedArgument


ConfigOption = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="evaluator.toml to use.")]
SuiteArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="PATH", help="Scenario files, folders or globs (default: scenarios/)."),
]
TagOption = Annotated[
    list[str] | None,
    typer.Option(metavar="TAG", help="Only scenarios with this tag (repeatable: any of them)."),
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
    from evaluator.langfuse import LangfuseConnection  # here: the SDK loads only for a command that connects

    connection = LangfuseConnection(settings)
    try:
        yield connection
    finally:
        connection.shutdown(config.settings.langfuse.flush_timeout_seconds)


def warnings_only(kind: str, message: str) -> None:
    """The judges' notes (how to enable them) stay out of validate: the result says why they did not run."""
    if kind != "note":
        notice(err, kind, message)
