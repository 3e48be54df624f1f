"""A target's `tool_schemas` file (DESIGN.md, Per-agent analysis: a JSON list of OpenAI function
definitions, relative to evaluator.toml), read when a per-agent check first needs a definition from it,
not when the metrics are built: `report`, `compare` and a run whose traces record their tools' schemas
never read it. A file that cannot be read, or is not such a list, is an InputError naming
evaluator.toml, the target's `tool_schemas` field, what is wrong and the fix, whether `lint` finds it
(`tool_schema_problems`), a run's start (for the targets it uses) or the first check that needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from evaluator.config import Config
from evaluator.errors import InputError, Problem
from evaluator.trace import ToolDefinition, load_tool_schemas

__all__ = ["ToolSchemaFile", "check_tool_schemas", "tool_schema_problems"]


def _problem(config: Config, target: str, relative: Path, error: InputError) -> Problem:
    path = config.path(relative)
    first = error.problems[0]
    missing = not path.exists()
    found = (
        f"{path} does not exist"
        if missing
        else f"{path}{f' {first.field}' if first.field else ''}: {first.found}"
    )
    fix = (
        f"write the file, or correct the path (relative to {config.base_dir}), or remove tool_schemas"
        if missing
        else first.fix
    )
    return Problem(
        source=str(config.source or "evaluator.toml"),
        field=f"[targets.{target}] tool_schemas",
        found=found,
        fix=fix,
    )


def _read(config: Config, target: str, relative: Path) -> dict[str, ToolDefinition]:
    try:
        return load_tool_schemas(config.path(relative))
    except InputError as exc:
        raise InputError([_problem(config, target, relative, exc)]) from None


class ToolSchemaFile(Mapping[str, ToolDefinition]):
    """One target's `tool_schemas` definitions by tool name, read on first use (once, whatever the
    threads); a broken file raises the same InputError at every use."""

    def __init__(self, config: Config, target: str, relative: Path) -> None:
        self._config, self._target, self._relative = config, target, relative
        self.path = config.path(relative)
        self._lock = threading.Lock()
        self._definitions: dict[str, ToolDefinition] | None = None
        self._error: InputError | None = None

    def _loaded(self) -> dict[str, ToolDefinition]:
        if self._definitions is None:
            with self._lock:
                if self._error is not None:
                    raise self._error
                if self._definitions is None:
                    try:
                        self._definitions = _read(self._config, self._target, self._relative)
                    except InputError as exc:
                        self._error = exc
                        raise
        return self._definitions

    def __getitem__(self, name: str) -> ToolDefinition:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __bool__(self) -> bool:
        return True  # declared: the per-agent analysis applies, whatever the file holds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolSchemaFile) and (self._target, self.path) == (other._target, other.path)

    def __hash__(self) -> int:
        return hash((self._target, self.path))

    def __repr__(self) -> str:
        return f"ToolSchemaFile({self._target!r}, {str(self.path)!r})"


def tool_schema_problems(config: Config, names: Collection[str] | None = None) -> list[Problem]:
    """What is wrong with the `tool_schemas` files of the configured targets (of `names`: None, all)."""
    problems: list[Problem] = []
    for name, target in config.settings.targets.items():
        if target.tool_schemas is None or (names is not None and name not in names):
            continue
        try:
            _read(config, name, target.tool_schemas)
        except InputError as exc:
            problems += exc.problems
    return problems


def check_tool_schemas(config: Config, names: Collection[str] | None = None) -> None:
    """Raise an InputError listing `tool_schema_problems`, if there are any."""
    problems = tool_schema_problems(config, names)
    if problems:
        raise InputError(problems)
