"""Rule-based answer checks, before any judge (seed evaluation-and-feedback-spec.md, "Simple cases"):
every `expected.answer.contains` string must occur in the final answer (case-sensitive).

The final answer is what the system answered, not everything its target returned: a LangGraph target
that returns its whole state (`{"messages": [...]}`) answered with its last AI message, so a phrase of
the user's own question in that state does not count as "in the answer".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import MetricBase, MetricContext, ScoreDefinition, ScoreValue

__all__ = ["AnswerCheck", "AnswerContainsMetric", "answer_text", "check_answer", "final_answer"]

_AI_ROLES = frozenset({"ai", "assistant", "AIMessage", "AIMessageChunk"})


def final_answer(output: Any) -> Any:
    """The answer in a target's output: for a graph state with `messages`, the content of its last AI
    message (a LangChain message object or its dict form); anything else as it is. A state with no AI
    message answers nothing (None)."""
    messages = output.get("messages") if isinstance(output, Mapping) else None
    if not isinstance(messages, list | tuple):
        return output
    for message in reversed(messages):
        role = _field(message, "type") or _field(message, "role")
        if role in _AI_ROLES:
            return _content_text(_field(message, "content"))
    return None


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def _content_text(content: Any) -> Any:
    """A message's content: text parts of a list content joined; anything else as it is."""
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content]
        return "".join(parts)
    return content


def answer_text(answer: Any) -> str:
    """The answer as text: a string as it is, anything else as JSON (None: empty)."""
    if answer is None:
        return ""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class AnswerCheck:
    contains: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.missing

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.passed, "contains": list(self.contains), "missing": list(self.missing)}

    def scores(self) -> list[ScoreValue]:
        comment = f"missing: {', '.join(repr(s) for s in self.missing)}" if self.missing else None
        return [ScoreValue(name="answer_contains", value=float(self.passed), comment=comment)]

    def problems(self) -> list[str]:
        return [f"answer lacks {', '.join(repr(s) for s in self.missing)}"] if self.missing else []


def check_answer(contains: tuple[str, ...], answer: Any) -> AnswerCheck:
    text = answer_text(answer)
    return AnswerCheck(contains=contains, missing=tuple(s for s in contains if s not in text))


class AnswerContainsMetric(MetricBase):
    """`answer.contains`, for scenarios that list strings the answer must hold."""

    key = "answer"
    definitions = (
        ScoreDefinition(
            name="answer_contains",
            data_type="BOOLEAN",
            description="Every expected string occurs in the answer (comment: the missing ones)",
        ),
    )

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        score = scores.get("answer_contains")
        return None if score is None else {"pass": bool(score.get("value"))}

    def evaluate(self, context: MetricContext) -> AnswerCheck | None:
        spec = context.scenario.expected.answer
        if spec is None or not spec.contains:
            return None
        return check_answer(spec.contains, final_answer(context.answer))
