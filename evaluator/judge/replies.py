"""The judges' replies: pydantic models of exactly what each judge must answer, a tolerant reader
(plain JSON, a ```json fence, prose then a JSON object), and the repair request sent back once when a
reply does not do.

The models are the contract; each judge prompt's header carries the same shape as a JSON schema for
structured output (tests/unit/test_judge_prompts.py keeps the two equal).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator._problems import validation_problems

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QualityReply(_Reply):
    """The quality judge's reply (seed workflow-and-quality-metrics.md): three scores 0-1 and why."""

    answer_quality: float = Field(ge=0.0, le=1.0, strict=True)
    factual_correctness: float = Field(ge=0.0, le=1.0, strict=True)
    completeness: float = Field(ge=0.0, le=1.0, strict=True)
    reasoning: str


class CorrectnessReply(_Reply):
    """The correctness judge's reply (seed crag-llm-judge-evaluator.md)."""

    verdict: Literal["CORRECT", "WRONG"]
    reason: str


Reply = TypeVar("Reply", bound=_Reply)


def json_objects(text: str) -> list[Any]:
    """The JSON values a reply may hold, most likely first: the whole text, each fenced block, then
    each object that starts at a `{` in the prose."""
    found: list[Any] = []
    for candidate in (text.strip(), *(m.strip() for m in _FENCE.findall(text))):
        try:
            found.append(json.loads(candidate))
        except ValueError:
            continue
    for match in re.finditer(r"\{", text):
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except ValueError:
            continue
        found.append(value)
    return found


def read_reply(text: str, model: type[Reply]) -> Reply | str:
    """The reply as `model`, or why it is not one (the first object's problems, when there is one)."""
    candidates = [value for value in json_objects(text) if isinstance(value, dict)]
    if not candidates:
        return "the reply holds no JSON object" if text.strip() else "the reply is empty"
    problems = ""
    for candidate in candidates:
        try:
            return model.model_validate(candidate)
        except ValidationError as exc:
            problems = problems or _describe(exc, model)
    return problems


def _describe(exc: ValidationError, model: type[BaseModel]) -> str:
    found = validation_problems(exc, source="reply", model=model, fix="")
    return "; ".join(f"{p.field}: {p.found}" for p in found)


def repair_request(problem: str, model: type[BaseModel]) -> str:
    """The one message sent back with a reply that did not do."""
    keys = ", ".join(model.model_fields)
    return (
        f"Your reply could not be used: {problem}. Reply again with only the JSON object, with exactly "
        f"these keys: {keys}. No other text, no code fence."
    )
