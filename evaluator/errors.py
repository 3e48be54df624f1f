"""The evaluator's exceptions, in one tree.

    EvaluatorError                 anything the CLI reports as "bad input or configuration" (exit 2, but
                                   a StoreError: exit 4)
    ├── InputError                 problems in user files, collected and reported together
    │   ├── ScenarioError          scenario files (YAML, unknown keys, unknown targets, duplicate ids)
    │   └── PromptError            prompt files (header, version, labels)
    │       └── PromptVariableError  a prompt compiled without a value for one of its variables
    ├── ConfigError                evaluator.toml, --prompt/--target values, environment
    │   ├── LangfuseAuthError      Langfuse rejected the keys (401/403): one message, no retries
    │   └── StoreError             the local store cannot be used: disk full, locked by another
    │       │                      program, damaged or not a database, read-only place (exit 4)
    │       ├── StoreMovedError    its file was deleted, moved or replaced while in use: what was
    │       │                      written to it since it was opened is not at its path
    │       ├── NotRecordedError   (evaluator.run.pipeline) the store failed during a run's pipeline:
    │       │                      it carries every result, and which ones the store did not take
    │       └── RunNotStoredError  (evaluator.run) a run is over but the store could not take its end
    │                              (or failed during it): it carries the run, every result in it
    ├── LangfuseUnavailableError   Langfuse unreachable, failing (5xx) or rate-limiting (429)
    ├── JudgeUnavailableError      the judge's LLM endpoint unreachable, timing out, failing or refusing
    │   ├── ResponseFormatRejectedError  the endpoint refused structured output (`response_format`)
    │   ├── ParameterRejectedError  the endpoint refused a request parameter (a reasoning model's
    │   │                          `temperature` or `max_tokens`)
    │   └── ModelNotServedError    the endpoint serves no model of the requested name (in a 400 too)
    └── TraceError                 a trace that cannot be read (missing file, unknown shape, not found)

    TargetTimeoutError             (not an EvaluatorError) a target did not return within its timeout

Each problem names the file, the field, what was found and the fix. Validators never raise for what a
trace contains: "could not evaluate" is a value, not an exception. An exception that is none of these,
raised inside the evaluator while it handles a scenario, is an evaluator bug: the run keeps it with its
traceback as that scenario's `evaluator_error` (results.EvaluatorFailure), never as the agent's failure.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Self

__all__ = [
    "ConfigError",
    "EvaluatorError",
    "InputError",
    "JudgeUnavailableError",
    "LangfuseAuthError",
    "LangfuseUnavailableError",
    "ModelNotServedError",
    "ParameterRejectedError",
    "Problem",
    "PromptError",
    "PromptVariableError",
    "ResponseFormatRejectedError",
    "ScenarioError",
    "StoreError",
    "StoreMovedError",
    "TargetTimeoutError",
    "TraceError",
    "did_you_mean",
]


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

    @classmethod
    def one(cls, *, source: str, field: str, found: str, fix: str) -> Self:
        """The error for a single problem."""
        return cls([Problem(source=source, field=field, found=found, fix=fix)])


class ScenarioError(InputError):
    """Problems in scenario files."""


class PromptError(InputError):
    """Problems in prompt files or prompt variables."""


class PromptVariableError(PromptError):
    """A prompt was compiled without a value for one of its variables."""


class ConfigError(EvaluatorError):
    """Bad configuration: evaluator.toml, command-line values, environment."""


class LangfuseAuthError(ConfigError):
    """Langfuse answered 401/403: wrong keys or wrong project. Retrying cannot help."""


class StoreError(ConfigError):
    """The local store cannot be used: the disk is full, another program held the database locked
    past the store's busy timeout, the file is damaged or not a database, or its place is read-only
    (or not a folder). A ConfigError, since `[store] path` may be the fix, but the CLI exits 4, not 2:
    the configuration may well be right. What was committed before the failure stays in the store."""


class StoreMovedError(StoreError):
    """The store's file was deleted, moved or replaced (its folder removed, say) while a command had it
    open. SQLite goes on writing to the file it opened, deleted or not, without a word: so what was
    written since it was opened is not at the store's path (it goes with that file when it is closed)."""


class LangfuseUnavailableError(EvaluatorError):
    """Langfuse could not be reached or did not accept a request: `status` is the HTTP status (None:
    no answer), `retry_after` the seconds it asked to wait, if it did; `timed_out` when the request was
    sent but no answer came in time (Langfuse may have taken it)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out


class JudgeUnavailableError(EvaluatorError):
    """The judge's endpoint did not give a reply: `status` is the HTTP status (None: no answer, e.g. a
    timeout or a refused connection), `retry_after` the seconds it asked to wait. The judge stage never
    lets it escape: after the retries it is an *unscored* judgement with this message as the reason."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """No answer, a timeout (408), a conflict (409), rate limiting (429) or a server error (5xx)."""
        return self.status is None or self.status in (408, 409, 429) or self.status >= 500

    @property
    def about_the_endpoint(self) -> bool:
        """A failure of the endpoint itself (down, overloaded, wrong key or model), not of one request
        (a 400 for its length or content): the next judgement would fail the same way."""
        return self.retryable or self.status in (401, 403, 404)


class ResponseFormatRejectedError(JudgeUnavailableError):
    """The endpoint answered 400 about `response_format`: it does not do structured output."""


class ParameterRejectedError(JudgeUnavailableError):
    """The endpoint answered 400 to a parameter the request sent, `param`: `temperature` (a reasoning
    model takes only its default) or `max_tokens` (it takes `max_completion_tokens` instead)."""

    def __init__(self, message: str, *, param: str, status: int | None = 400) -> None:
        super().__init__(message, status=status)
        self.param = param


class ModelNotServedError(JudgeUnavailableError):
    """The endpoint serves no model of the requested name. Some say so with a 400, not a 404 (llama.cpp's
    router: "model 'NAME' not found"; LiteLLM: "Invalid model name"): a failure of the endpoint's
    configuration all the same, as a wrong key is, that the next judgement would meet too."""

    @property
    def about_the_endpoint(self) -> bool:
        return True


class TraceError(EvaluatorError):
    """A trace that cannot be read at all (as opposed to one that fails validation); `unanswered` when
    Langfuse did not answer the last read (as opposed to answering without the trace)."""

    def __init__(self, message: str, *, unanswered: bool = False) -> None:
        super().__init__(message)
        self.unanswered = unanswered


class TargetTimeoutError(Exception):
    """The target did not return within the scenario timeout (the scenario's error, not bad input)."""


def did_you_mean(found: str, choices: Iterable[str]) -> str:
    """' (did you mean "x"?)' for a near miss, else the valid choices, else ''."""
    options = sorted(set(choices))
    close = difflib.get_close_matches(found, options, n=1, cutoff=0.6)
    if close:
        return f' (did you mean "{close[0]}"?)'
    if options and len(options) <= 12:
        return f" (valid: {', '.join(options)})"
    return ""
