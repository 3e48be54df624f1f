"""What the judges need from tracing: each judgement its own trace (`judge:<scenario id>`, tagged with
the run id) with one GENERATION per model call (the request, and the repair request if there is one),
linked to the judge prompt version when Langfuse served it. `langfuse.JudgeTracing` is the real one
(the only importer of `langfuse` lives there); `NO_TRACING` records nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from evaluator.judge.model import TokenUsage
from evaluator.prompts import ChatMessage, Prompt

__all__ = ["NO_TRACING", "GenerationRecord", "JudgeTracer", "JudgementTrace", "UnrecordedJudgement"]


class GenerationRecord(Protocol):
    """One model call inside a judgement's trace."""

    def succeeded(self, *, output: str, usage: TokenUsage | None, model: str) -> None:
        """The endpoint replied (whether the reply is usable is `unusable`'s to say)."""
        ...

    def failed(self, message: str) -> None:
        """No reply, after the retries."""
        ...

    def unusable(self, reason: str) -> None:
        """A reply that is not a valid verdict."""
        ...

    def parameters_sent(self, parameters: Mapping[str, Any]) -> None:
        """The model parameters the call went out with in the end, when they are not those the
        generation opened with (the endpoint refused one, and the request was sent without it)."""
        ...


class JudgementTrace(Protocol):
    @property
    def trace_id(self) -> str | None: ...

    @property
    def exported(self) -> bool:
        """Whether the trace is sent to Langfuse (else `trace_id` names a trace no one can open)."""
        ...

    def generation(
        self, *, name: str, messages: Sequence[ChatMessage], model: str, parameters: Mapping[str, Any]
    ) -> AbstractContextManager[GenerationRecord]: ...


class JudgeTracer(Protocol):
    def judgement(
        self, *, run_id: str, scenario_id: str, judge: str, prompt: Prompt
    ) -> AbstractContextManager[JudgementTrace]: ...


class UnrecordedJudgement:
    """A judgement that records nothing: its generation and outcome go nowhere; `trace_id` is the id
    its trace would have had (None: none at all)."""

    exported = False

    def __init__(self, trace_id: str | None = None) -> None:
        self.trace_id = trace_id

    def succeeded(self, *, output: str, usage: TokenUsage | None, model: str) -> None:
        return None

    def failed(self, message: str) -> None:
        return None

    def unusable(self, reason: str) -> None:
        return None

    def parameters_sent(self, parameters: Mapping[str, Any]) -> None:
        return None

    @contextmanager
    def generation(
        self, *, name: str, messages: Sequence[ChatMessage], model: str, parameters: Mapping[str, Any]
    ) -> Iterator[GenerationRecord]:
        yield self


class NoTracing:
    """A tracer that records nothing (judge traces are then absent; the verdicts are the same)."""

    @contextmanager
    def judgement(
        self, *, run_id: str, scenario_id: str, judge: str, prompt: Prompt
    ) -> Iterator[JudgementTrace]:
        yield UnrecordedJudgement()


NO_TRACING = NoTracing()
