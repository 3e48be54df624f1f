"""What the judges are shown. Instructions live in the prompt's system message; everything judged is
untrusted (the agent's answer, the tool outputs it used, and the scenario's own text) and goes into
the user message inside delimited blocks (`<answer>...</answer>`, ...). A block tag inside untrusted
text is neutralised (`<` and `>` of that tag become `&lt;` / `&gt;`), so no content can close its
block early and speak outside it.

The sources are the tool outputs from the trace, in call order, within a character budget; when they
do not fit, the note given to the judge says what was left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evaluator.metrics import answer_text
from evaluator.trace import ToolCall

__all__ = [
    "BLOCK_TAGS",
    "Sources",
    "correctness_variables",
    "quality_variables",
    "sources_block",
    "untrusted",
]

BLOCK_TAGS = (
    "input",
    "criteria",
    "ground_truth",
    "sources",
    "source",
    "answer",
    # the per-agent judge's (judge/agent_view.py)
    "agent",
    "team",
    "received",
    "steps",
    "step",
    "output",
    "handoffs",
    "handoff",
)
_TAG = re.compile(r"<\s*/?\s*(?:" + "|".join(BLOCK_TAGS) + r")\b[^<>]*>?", re.IGNORECASE)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.:-]+")


def untrusted(text: str) -> str:
    """`text` with every block tag neutralised; nothing else changes."""
    return _TAG.sub(lambda m: m.group(0).replace("<", "&lt;").replace(">", "&gt;"), text)


@dataclass(frozen=True, kw_only=True)
class Sources:
    text: str  # the <source> blocks
    note: str  # what the judge is told about them (and about any trimming)


def sources_block(tools: Sequence[ToolCall], budget: int) -> Sources:
    """The tools' outputs as numbered <source> blocks, at most `budget` characters of output in all."""
    outputs = [(t.name, answer_text(t.output)) for t in tools if t.output is not None]
    if not outputs:
        return Sources(text="(none)", note="The agents used no tool output: there are no sources.")
    blocks: list[str] = []
    left, cut = budget, False
    for number, (name, body) in enumerate(outputs, start=1):
        if left <= 0:
            break
        shown = body[:left]
        cut, left = len(shown) < len(body), left - len(shown)
        tool = _UNSAFE_NAME.sub("_", name)
        blocks.append(f'<source n="{number}" tool="{tool}">\n{untrusted(shown)}\n</source>')
    text = "\n".join(blocks) or "(left out: the source budget is 0 characters)"
    return Sources(text=text, note=_note(outputs, len(blocks), budget, cut))


def _note(outputs: Sequence[tuple[str, str]], shown: int, budget: int, cut: bool) -> str:
    total = sum(len(body) for _, body in outputs)
    if total <= budget:
        return f"All {len(outputs)} tool outputs the agents used, in call order."
    return (
        f"The tool outputs were trimmed to {budget} of their {total} characters: {shown} of "
        f"{len(outputs)} outputs are shown{', the last of them cut short' if cut else ''}. Do not "
        "count a claim as unsupported only because its source may be in the part left out."
    )


def quality_variables(*, question: str, answer: object, criteria: str, sources: Sources) -> dict[str, str]:
    return {
        "input": untrusted(question),
        "answer": untrusted(answer_text(answer)),
        "criteria": untrusted(criteria),
        "sources": sources.text,
        "sources_note": sources.note,
    }


def correctness_variables(*, question: str, answer: object, ground_truth: str) -> dict[str, str]:
    return {
        "input": untrusted(question),
        "answer": untrusted(answer_text(answer)),
        "ground_truth": untrusted(ground_truth),
    }
