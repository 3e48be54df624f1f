"""`FakeJudgeModel`: the judges' model twin, for users' tests and ours (as httpx ships a mock transport).

    fake = FakeJudgeModel(['{"verdict": "CORRECT", "reason": "same year"}'])
    judges = Judges(model=fake, prompts=library, settings=JudgeSettings())
    ...
    fake.calls[0].messages[1].content     # what the judge was shown

Each scripted reply is used once, in order: a string is the assistant's text, an exception is raised
(e.g. `JudgeUnavailableError("down", status=503)`), a callable gets the call and returns the text,
and a `ModelReply` is returned as it is (a reply cut off at the token limit, say).
With `default`, calls past the script get that reply; without, they fail with a clear error.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.judge.model import ModelReply, TokenUsage
from evaluator.prompts import ChatMessage

__all__ = ["FakeJudgeModel", "ModelCall", "Scripted"]


@dataclass(frozen=True, kw_only=True)
class ModelCall:
    """One call the fake received, as the real endpoint would have."""

    messages: tuple[ChatMessage, ...]
    model: str
    temperature: float | None
    response_format: Mapping[str, Any] | None
    timeout: float
    max_tokens: int | None
    max_completion_tokens: int | None = None


Scripted = str | ModelReply | BaseException | Callable[[ModelCall], str]


class FakeJudgeModel:
    """Scripted replies; records every call (thread-safe)."""

    def __init__(
        self,
        replies: Iterable[Scripted] = (),
        *,
        default: Scripted | None = None,
        usage: TokenUsage | None = None,
        model_name: str | None = None,
    ) -> None:
        self._replies: deque[Scripted] = deque(replies)
        self._default = default
        self._usage = usage or TokenUsage(input=100, output=20)
        self._model_name = model_name
        self._lock = threading.Lock()
        self.calls: list[ModelCall] = []

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
        call = ModelCall(
            messages=tuple(messages),
            model=model,
            temperature=temperature,
            response_format=response_format,
            timeout=timeout,
            max_tokens=max_tokens,
            max_completion_tokens=max_completion_tokens,
        )
        with self._lock:
            self.calls.append(call)
            scripted = self._replies.popleft() if self._replies else self._default
        if scripted is None:
            raise RuntimeError(
                f"FakeJudgeModel has no reply left for call {len(self.calls)}: script more replies, "
                "or give default="
            )
        if isinstance(scripted, BaseException):
            raise scripted
        if isinstance(scripted, ModelReply):
            return scripted
        text = scripted if isinstance(scripted, str) else scripted(call)
        return ModelReply(text=text, usage=self._usage, model=self._model_name or model)
