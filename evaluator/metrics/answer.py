"""Rule-based answer checks, before any judge (seed evaluation-and-feedback-spec.md, "Simple cases"):
every `expected.answer.contains` string must occur in the final answer (case-sensitive).

The final answer is what the system answered, not everything its target returned. For a LangGraph /
LangChain state (`{"messages": [...]}`) it is the last message an agent wrote, never the user's own input:
- a structured response (`create_agent(response_format=...)`, `create_react_agent(response_format=...)`
  put it under `structured_response`) is the answer, whatever the messages say;
- else the last message, from the end, that is an AI message with text, or a message named after an
  agent of the trace (LangGraph's hand-built supervisor tutorial: each worker node returns
  `HumanMessage(content=..., name="coder")` and the supervisor routes without writing a message);
- a message that calls tools hands on rather than answers (a routing decision, a hand-off, a
  structured-response tool call, langgraph-supervisor's "Transferring back" pair) and a tool's result is
  input to an agent, so neither is ever the answer; nor is an empty message.
A state in which no agent wrote anything answered nothing (None).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import MetricBase, MetricContext, ScoreDefinition, ScoreValue
from evaluator.trace import normalize_name

__all__ = ["AnswerCheck", "AnswerContainsMetric", "answer_text", "check_answer", "final_answer"]

_AI_ROLES = frozenset({"ai", "assistant", "AIMessage", "AIMessageChunk"})
_TOOL_ROLES = frozenset({"tool", "function", "ToolMessage", "FunctionMessage"})
STRUCTURED_RESPONSE = "structured_response"


def final_answer(output: Any, agents: Collection[str] = ()) -> Any:
    """The answer in a target's output (see the module docstring): for a graph state with `messages`,
    its structured response, else the text of the last message an agent wrote, `agents` naming the
    trace's agents (a message named after one of them counts whatever its role; names compare
    normalized, "Coder" is `coder`); anything else as it is. Messages may be LangChain message objects
    or their dict forms (as Langfuse stores them)."""
    messages = output.get("messages") if isinstance(output, Mapping) else None
    if not isinstance(messages, list | tuple):
        return output
    structured = output.get(STRUCTURED_RESPONSE)
    if structured is not None:
        return structured
    named = frozenset(normalize_name(a) for a in agents)
    for message in reversed(messages):
        text = _content_text(_field(message, "content"))
        if _written_by_agent(message, named) and text not in (None, ""):
            return text
    return None


def _written_by_agent(message: Any, agents: frozenset[str]) -> bool:
    """An AI message, or a message named after an agent; never one that calls tools or a tool's result."""
    role = _field(message, "type") or _field(message, "role")
    if role in _TOOL_ROLES or _field(message, "tool_calls"):
        return False
    name = _field(message, "name")
    return role in _AI_ROLES or (isinstance(name, str) and normalize_name(name) in agents)


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def _content_text(content: Any) -> Any:
    """A message's content: text parts of a list content joined; anything else as it is."""
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content]
        return "".join(parts)
    return content


def answer_text(answer: Any) -> str:
    """The answer as text: a string as it is, anything else as JSON (None: empty). A pydantic model or
    a dataclass (a structured response as the target returned it) is written as its fields, so the
    text is the same as that of the dict Langfuse stores for it; anything else JSON cannot write, as
    its `str`."""
    if answer is None:
        return ""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=_jsonable)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


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
        return check_answer(spec.contains, final_answer(context.answer, context.trace.agent_names))
