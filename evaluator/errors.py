"""The evaluator's exceptions, in one tree.

    EvaluatorError                 anything the CLI reports as "bad input or configuration" (exit 2)
    ├── InputError                 problems in user files, collected and reported together
    │   ├── ScenarioError          scenario files (YAML, unknown keys, unknown targets, duplicate ids)
    │   └── PromptError            prompt files (header, version, missing variables)
    ├── ConfigError                evaluator.toml, --prompt/--target values, environment
    │   └── LangfuseAuthError      Langfuse rejected the keys (401/403): one message, no retries
    ├── LangfuseUnavailableError   Langfuse unreachable, failing (5xx) or rate-limiting (429)
    └── TraceError                 a trace that cannot be read (missing file, unknown shape, not found)

Each problem names the file, the field, what was found and the fix. Validators never raise for what a
trace contains: "could not evaluate" is a value, not an exception.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong with one input, phrased so that a user can fix it without reading code."""

    source: str
    field: str
    found: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.source}: {self.field}" if self.field else self.source
        return f"{where}: {self.found}. Fix: {self.fix}"


class EvaluatorError(Exception):
    """Base class: the CLI prints these without a traceback and exits 2."""


class InputError(EvaluatorError):
    """One or more problems in user files, reported together."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ScenarioError(InputError):
    """Problems in scenario files."""


class PromptError(InputError):
    """Problems in prompt files or prompt variables."""


class ConfigError(EvaluatorError):
    """Bad configuration: evaluator.toml, command-line values, environment."""


class LangfuseAuthError(ConfigError):
    """Langfuse answered 401/403: wrong keys or wrong project. Retrying cannot help."""


class LangfuseUnavailableError(EvaluatorError):
    """Langfuse could not be reached or did not accept a request: `status` is the HTTP status (None:
    no answer), `retry_after` the seconds it asked to wait, if it did."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class TraceError(EvaluatorError):
    """A trace that cannot be read at all (as opposed to one that fails validation)."""


def did_you_mean(found: str, choices: Iterable[str]) -> str:
    """' (did you mean "x"?)' for a near miss, else the valid choices, else ''."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(found, options, n=1, cutoff=0.6)
    if close:
        return f' (did you mean "{close[0]}"?)'
    if options and len(options) <= 12:
        return f" (valid: {', '.join(options)})"
    return ""
