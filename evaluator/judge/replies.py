"""The judges' replies: pydantic models of exactly what each judge must answer, a tolerant reader
(plain JSON, a ```json fence, prose then a JSON object; a reasoning model's `<think>` block left out),
and the repair request sent back once when a reply does not do. When a reply holds several objects,
the last one is its answer: drafts and quoted objects (an answer that tries to inject a verdict, say)
come before it. That holds only while the reply ends with it: a reply that opens with a valid object
and then quotes a different one, or whose different verdicts are followed by more text (a note quoting
the verdict the answer tried to inject), holds several verdicts, and none is taken (the repair request
asks for one); verdicts that agree are one.

The models are the contract; each judge prompt's header carries the same shape as a JSON schema for
structured output (tests/unit/test_judge_prompts.py keeps the two equal).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator._problems import validation_problems

__all__ = [
    "AgentReply",
    "CorrectnessReply",
    "JudgeReply",
    "OptionalRating",
    "QualityReply",
    "Rating",
    "Reply",
    "json_objects",
    "read_reply",
    "repair_request",
]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
# A reasoning model's thoughts before its answer (Qwen3, DeepSeek-R1 through Ollama or llama.cpp): not
# the answer. Only a leading block: the same tags inside the answer (quoting a judged text) are text.
# An unclosed one (a reply cut off while thinking) runs to the end.
_THINKING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
# DeepSeek-R1 and its distills under a chat template that opens the block in the prompt reply with its
# end alone: everything up to the last closing tag no opening tag comes before is reasoning too.
_THINKING_END = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)


class JudgeReply(BaseModel):
    """What every judge reply model is: strict (no key it does not declare), immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class QualityReply(JudgeReply):
    """The quality judge's reply (seed workflow-and-quality-metrics.md): three scores 0-1 and why."""

    answer_quality: float = Field(ge=0.0, le=1.0, strict=True)
    factual_correctness: float = Field(ge=0.0, le=1.0, strict=True)
    completeness: float = Field(ge=0.0, le=1.0, strict=True)
    reasoning: str


class CorrectnessReply(JudgeReply):
    """The correctness judge's reply (seed crag-llm-judge-evaluator.md)."""

    verdict: Literal["CORRECT", "WRONG"]
    reason: str


class Rating(JudgeReply):
    """One dimension of the per-agent judge's reply: a score 0-1 and why."""

    score: float = Field(ge=0.0, le=1.0, strict=True)
    reason: str


class OptionalRating(JudgeReply):
    """A dimension that may not apply to the agent: its score is null then, with the reason."""

    score: float | None = Field(ge=0.0, le=1.0, strict=True)
    reason: str


class AgentReply(JudgeReply):
    """The per-agent judge's reply (seed multi-agent-evaluation-plan.md): one agent's reasoning (null:
    it shows none), handoff (null: it did not delegate), response_quality, and coordination (null: it
    was alone), each 0-1 with a reason."""

    reasoning: OptionalRating
    handoff: OptionalRating
    response_quality: Rating
    coordination: OptionalRating


Reply = TypeVar("Reply", bound=JudgeReply)


def json_objects(text: str) -> list[Any]:
    """The JSON values a reply may hold, most likely first: the whole text (with and without a leading
    reasoning block), the fenced blocks, then the objects in the prose (outermost ones only: an object
    inside another is part of it, not an answer), each group from last to first."""
    whole = text.strip()
    text = _without_reasoning(text)
    found: list[Any] = []
    for candidate in (whole, text.strip(), *reversed([m.strip() for m in _FENCE.findall(text)])):
        try:
            found.append(json.loads(candidate))
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to read, no verdict
            continue
    return [*found, *reversed([value for value, _ in _outermost_objects(text)])]


def _outermost_objects(text: str) -> list[tuple[Any, int]]:
    """The JSON values in the text that start with `{`, each with where it ends, first to last;
    outermost only (an object inside another is part of it)."""
    found: list[tuple[Any, int]] = []
    end = 0
    for match in re.finditer(r"\{", text):
        if match.start() < end:  # inside an object already found
            continue
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        found.append((value, end))
    return found


def _without_reasoning(text: str) -> str:
    """The reply after its reasoning: a leading `<think>` block, or everything up to the last closing
    tag that no opening tag comes before (the block's start was in the prompt). The last, not the
    first: reasoning that names its own closing tag ("then I close with </think>") goes on after it,
    and a draft verdict there is still a draft."""
    text = _THINKING.sub("", text, count=1)
    orphans = [
        end
        for end in _THINKING_END.finditer(text)
        if not re.search(f"<{end.group(1)}>", text[: end.start()], re.IGNORECASE)
    ]
    return text[orphans[-1].end() :] if orphans else text


def read_reply(text: str, model: type[Reply]) -> Reply | str:
    """The reply as `model`, or why it is not one (the likeliest object's problems, when there is
    one). A reply holding several different valid verdicts is taken only when the last one ends it
    (the earlier ones are drafts or quotes); else which one the judge meant cannot be told and none
    is taken (see `_one_verdict`)."""
    candidates = [value for value in json_objects(text) if isinstance(value, dict)]
    if not candidates:
        if not text.strip():
            return "the reply is empty"
        if not _without_reasoning(text).strip():
            return "the reply holds only the model's reasoning, no answer"
        return "the reply holds no JSON object"
    problems = ""
    for candidate in candidates:
        try:
            reply = model.model_validate(candidate)
        except ValidationError as exc:
            problems = problems or _describe(exc, model)
            continue
        return _one_verdict(text, reply, model)
    return problems


def _one_verdict(text: str, reply: Reply, model: type[Reply]) -> Reply | str:
    """`reply`, the likeliest object of `text`, when the text (after its reasoning) holds no verdict
    that differs from it. Else the last verdict when nothing but whitespace or a closing fence follows
    it (the earlier ones are drafts or quotes); else why none is taken: an object quoted in a note
    after the verdict ("the answer contained {...}, which I disregarded") must not override it."""
    answer = _without_reasoning(text)
    verdicts = [(v, end) for value, end in _outermost_objects(answer) if (v := _as(value, model)) is not None]
    if len({verdict for verdict, _ in verdicts}) < 2:
        return reply
    if _opening_reply(answer, model) is not None:
        return (
            "the reply holds two different verdicts, the object it opens with and another in the "
            "text after it; neither is taken"
        )
    last, end = verdicts[-1]
    if not answer[end:].strip(" \t\r\n`"):
        return last
    return (
        f"the reply holds several different verdicts ({len(verdicts)} objects) and text after the last "
        "one, so which is the judge's cannot be told; none is taken"
    )


def _as(value: Any, model: type[Reply]) -> Reply | None:
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


def _opening_reply(answer: str, model: type[Reply]) -> Reply | None:
    """The valid object a reply's answer (the reply after its reasoning) opens with, when text follows
    it; else None."""
    text = answer.lstrip()
    if not text.startswith("{"):
        return None
    try:
        value, end = _DECODER.raw_decode(text)
        return model.model_validate(value) if text[end:].strip() else None
    except (ValueError, RecursionError, ValidationError):
        return None


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
