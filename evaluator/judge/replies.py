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
    "without_reasoning",
]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
# What finding objects needs of JSON's syntax: strings (a brace inside one is text; one never closed
# runs to the end), brackets, and a backslash outside a string (which no JSON text holds).
_LEXEME = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[{}\[\]\\]', re.DOTALL)
# An object nested deeper is not read (Python's own decoder gives up near 1,000 levels, fewer on a
# deep stack, so it did not depend on this reply alone); the objects inside it are then read as the
# outermost ones, a verdict among them too (up to 1,000 levels the whole object was read, no verdict).
_MAX_DEPTH = 200
# Where a `{`'s object would end (None: it cannot be read), and the `{` it is in (None: none).
_Span = tuple[int | None, int | None]
# A reasoning model's thoughts before its answer (Qwen3, DeepSeek-R1 through Ollama or llama.cpp): not
# the answer. Only a leading block: the same tags inside the answer (quoting a judged text) are text.
# An unclosed one (a reply cut off while thinking) runs to the end.
_THINKING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
# DeepSeek-R1 and its distills under a chat template that opens the block in the prompt reply with its
# end alone: everything up to the last closing tag no opening tag comes before is reasoning too.
_THINKING_END = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_THINKING_START = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)


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
    text = without_reasoning(text)
    found: list[Any] = []
    for candidate in (whole, text.strip(), *reversed([m.strip() for m in _FENCE.findall(text)])):
        try:
            found.append(json.loads(candidate))
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to read, no verdict
            continue
    return [*found, *reversed([value for value, _ in _outermost_objects(text)])]


def _outermost_objects(text: str) -> list[tuple[Any, int]]:
    """The JSON values in the text that start with `{`, each with where it ends, first to last;
    outermost only (an object inside another is part of it).

    Linear in the text, whatever it holds (a reply from a server that ignored `max_tokens`, thousands
    of `{`): a `{` is decoded only when its object closes (`_spans`), on just that span, and not when
    the decode of an object around it broke inside it: decoding an object is the same wherever it
    starts, so it would break at the same place. Decoding at every `{` of the whole text, as before,
    gave the same objects in seconds for 100 KB."""
    spans: dict[int, _Span] = {}
    broken: dict[int, int] = {}  # a `{` whose object did not decode -> where it broke
    found: list[tuple[Any, int]] = []
    end = 0
    for match in re.finditer(r"\{", text):
        start = match.start()
        if start < end:  # inside an object already found
            continue
        if start not in spans:
            _spans(text, start, spans)
        close, parent = spans[start]
        if close is None:
            continue
        if parent in broken and start < broken[parent] < close:  # the decode around it broke in it
            broken[start] = broken[parent]
            continue
        try:
            value, length = _DECODER.raw_decode(text[start:close])
        except json.JSONDecodeError as exc:
            broken[start] = start + exc.pos
            continue
        except (ValueError, RecursionError):  # a number too long to read; a thread's deep stack
            continue
        end = start + length
        found.append((value, end))
    return found


def _spans(text: str, start: int, spans: dict[int, _Span]) -> None:
    """Follow the JSON structure from the `{` at `start` to its matching `}`, recording for it and
    each `{` met outside a string where its object would end (past its matching `}`) and the `{` it
    is in. An object that is never closed, that `]` closes, with a backslash outside a string before
    its end or more than _MAX_DEPTH levels inside it cannot be one: its end is None."""
    # The open brackets: where each is, the `{` it is in, and the innermost `{` (itself, if it is one).
    stack: list[tuple[int, int | None, int | None]] = []
    for lexeme in _LEXEME.finditer(text, start):
        at = lexeme.start()
        char = text[at]
        if char == '"':
            continue
        if char in "{[":
            parent = stack[-1][2] if stack else None
            stack.append((at, parent, at if char == "{" else parent))
            if len(stack) > _MAX_DEPTH and text[(deep := stack[-_MAX_DEPTH - 1])[0]] == "{":
                spans.setdefault(deep[0], (None, deep[1]))
        elif char == ("}" if text[stack[-1][0]] == "{" else "]"):
            opened, parent, _ = stack.pop()
            if char == "}":
                spans.setdefault(opened, (lexeme.end(), parent))
            if not stack:
                return
        else:  # a backslash outside a string, a `]` closing a `{` or a `}` closing a `[`
            break
    for opened, parent, _ in stack:
        if text[opened] == "{":
            spans.setdefault(opened, (None, parent))


def without_reasoning(text: str) -> str:
    """The reply after its reasoning: a leading `<think>` block, or everything up to the last closing
    tag that no opening tag comes before (the block's start was in the prompt). The last, not the
    first: reasoning that names its own closing tag ("then I close with </think>") goes on after it,
    and a draft verdict there is still a draft."""
    text = _THINKING.sub("", text, count=1)
    first_opened: dict[str, int] = {}  # each tag's first opening: where it ends
    for tag in _THINKING_START.finditer(text):
        first_opened.setdefault(tag.group(1).lower(), tag.end())
    orphans = [
        end
        for end in _THINKING_END.finditer(text)
        if first_opened.get(end.group(1).lower(), len(text) + 1) > end.start()
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
        if not without_reasoning(text).strip():
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
    answer = without_reasoning(text)
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
