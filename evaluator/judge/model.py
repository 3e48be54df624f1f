"""The judges' seam to an LLM: one method, `complete`, over chat messages.

`OpenAIJudgeModel` (the `openai` client against any OpenAI-compatible endpoint) is the real one;
`FakeJudgeModel` is its recording twin for tests. A model that can also be awaited (`AsyncJudgeModel`:
`acomplete`, as the OpenAI one) is asked on the run's event loop; any other is called in a thread.
Retries are not the model's business: the one retry policy (`retry.RetryPolicy`) owns them, so a model
raises at the first failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evaluator.prompts import ChatMessage

__all__ = ["AsyncJudgeModel", "JudgeModel", "ModelReply", "TokenUsage"]


@dataclass(frozen=True, kw_only=True)
class TokenUsage:
    input: int = 0
    output: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(input=self.input + other.input, output=self.output + other.output)

    @property
    def total(self) -> int:
        return self.input + self.output

    def to_json(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output}


def added(total: TokenUsage | None, more: TokenUsage | None) -> TokenUsage | None:
    """Usage summed over what was reported: None while no call reported any (not measured, not 0)."""
    if more is None:
        return total
    return more if total is None else total + more


@dataclass(frozen=True, kw_only=True)
class ModelReply:
    """The assistant's text, the tokens it cost, and the model name the endpoint reported."""

    text: str
    usage: TokenUsage | None  # None: the endpoint reported none (no `usage`, or no counts in it)
    model: str
    cut_off: bool = False  # the endpoint stopped at the token limit (finish_reason "length")
    filtered: bool = False  # the endpoint's content filter stopped it (finish_reason "content_filter")
    # The message field the text came from when `content` was empty and a reasoning field held it
    # (`reasoning_content`, `reasoning`: a reasoning parser on the judge model); None: `content`.
    elsewhere: str | None = None


class JudgeModel(Protocol):
    """An LLM the judges can ask."""

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str,
        temperature: float | None,
        response_format: Mapping[str, Any] | None,
        timeout: float,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = None,
    ) -> ModelReply:
        """One chat completion. Raises `JudgeUnavailableError` when there is no reply (its `status`
        and `retry_after` say why), `ResponseFormatRejectedError` when the endpoint refuses
        `response_format`, `ParameterRejectedError` when it refuses `temperature` or `max_tokens`.
        Only after that last is `temperature` None (send none) or `max_completion_tokens` given (the
        token limit under that name, `max_tokens` then None): a model that never raises it gets neither."""
        ...


@runtime_checkable
class AsyncJudgeModel(Protocol):
    """A judge model that can be awaited: `complete`'s contract, on the running event loop."""

    async def acomplete(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str,
        temperature: float | None,
        response_format: Mapping[str, Any] | None,
        timeout: float,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = None,
    ) -> ModelReply: ...

    async def aclose(self) -> None:
        """Close what it opened on the running loop."""
        ...
