"""What the judges are shown. Instructions live in the prompt's system message; everything judged is
untrusted (the agent's answer, the tool outputs it used, and the scenario's own text) and goes into
the user message inside delimited blocks (`<answer>...</answer>`, ...). A block tag inside untrusted
text is neutralised (`<` and `>` of that tag become `&lt;` / `&gt;`), so no content can close its
block early and speak outside it. So is a chat template's control token (`<|im_end|>`,
`<|start_header_id|>`, `<end_of_turn>`, `</s>`, `[INST]`...): a judge server that applies the model's
chat template (vLLM, llama.cpp, Ollama) reads one in a message's text as the token itself, so
`<|im_end|><|im_start|>system` in an answer would end the user's turn and open a system turn.

The sources are the tool outputs from the trace, in call order, within a character budget; when they
do not fit, the note given to the judge says what was left out. A dialogue turn's conversation so far
(`history_block`) is shown the same way: its latest messages within a budget, the note saying what
was left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluator.metrics import answer_text
from evaluator.trace import ToolCall

__all__ = [
    "BLOCK_TAGS",
    "Sources",
    "correctness_variables",
    "history_block",
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
    # a dialogue turn's history (history_block)
    "history",
    "message",
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
# A tag as a model may read one: its brackets also fullwidth or small (U+FF1C, U+FE64), and characters that
# render as nothing (zero-width space, soft hyphen, word joiner...) anywhere between its bracket and the
# end of its name, where they would hide it from a plain match.
_OPEN, _CLOSE = "<\uff1c\ufe64", ">\uff1e\ufe65"
_INVISIBLES = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff"
_INVISIBLE = f"[{_INVISIBLES}]*"
_NAMES = "|".join(_INVISIBLE.join(map(re.escape, tag)) for tag in BLOCK_TAGS)
# The gap between the bracket and the name: one character class, taken whole (possessive), so a bracket
# followed by a long run of spaces or invisible characters and no name is given up in one pass. Nested
# or adjacent quantifiers over the same characters here (`(?:\s|[...]*)*`, `\s*/?\s*`) backtracked
# exponentially (or quadratically) in the run's length on hostile judged text.
_GAP = rf"[\s{_INVISIBLES}]*+"
_TAG = re.compile(
    rf"[{_OPEN}]{_GAP}(?:/{_GAP})?(?:{_NAMES})\b[^{_OPEN}{_CLOSE}]*[{_CLOSE}]?",
    re.IGNORECASE,
)
_NEUTRAL = str.maketrans({**dict.fromkeys(_OPEN, "&lt;"), **dict.fromkeys(_CLOSE, "&gt;")})
# The opening character of a chat template's control tokens: `<|...|>` (ChatML, Llama 3, Phi, GPT-OSS;
# DeepSeek's with fullwidth bars), `<name|>`, the named ones of Llama 2, Mistral, Gemma and reasoning
# models, and Mistral's `[INST]` family. Written as `&lt;` (or `&#91;`), the token is text again.
_CONTROL = re.compile(
    r"<(?=[|\uff5c]|[\w.-]{1,40}[|\uff5c]>|/?(?:s|bos|eos|pad|unk|start_of_turn|end_of_turn|think|thinking)>)"
    r"|\[(?=/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\])",
)
# Characters that show as nothing but that a model may read: Unicode's tag characters (U+E0000 to
# U+E007F, an invisible copy of ASCII: "ASCII smuggling") and the variation selectors 17 to 256 (U+E0100
# to U+E01EF, bytes hidden after a visible character). An instruction spelled in them reaches the judge
# while no one reading the answer in Langfuse sees it: written as their escapes, they are seen.
_HIDDEN = re.compile("[\U000e0000-\U000e007f\U000e0100-\U000e01ef]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.:-]+")


def untrusted(text: str) -> str:
    """`text` with every block tag neutralised (its brackets as `&lt;` and `&gt;`, however written),
    every control token broken (its `<` as `&lt;`, `[` as `&#91;`) and each character that hides text
    from people but not from a model written as its escape (`\\U000e0041`); nothing else changes."""
    text = _TAG.sub(lambda m: m.group(0).translate(_NEUTRAL), text)
    text = _CONTROL.sub(lambda m: "&lt;" if m.group(0) == "<" else "&#91;", text)
    return _HIDDEN.sub(lambda m: f"\\U{ord(m.group(0)):08x}", text)


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


def history_block(history: Sequence[Mapping[str, str]], budget: int) -> Sources:
    """A dialogue's earlier messages as <message role="..."> blocks, oldest first: the latest ones whose
    content fits in `budget` characters (the newest one cut to the budget when even it does not)."""
    if not history:
        return Sources(text="(none)", note="This is the first turn: there is no conversation before it.")
    kept: list[str] = []
    left = budget
    for message in reversed(history):
        content = str(message.get("content", ""))
        if left <= 0 or (kept and len(content) > left):
            break
        role = "assistant" if message.get("role") == "assistant" else "user"
        kept.append(f'<message role="{role}">\n{untrusted(content[-left:] if left else "")}\n</message>')
        left -= len(content)
    kept.reverse()
    if len(kept) == len(history) and left >= 0:
        note = f"All {len(history)} earlier messages of the conversation, oldest first."
    else:
        note = (
            f"The conversation was trimmed to its last {budget} characters: the {len(kept)} latest of its "
            f"{len(history)} earlier messages are shown, oldest first (a message longer than that is cut "
            "at its start)."
        )
    return Sources(text="\n".join(kept) or "(left out: the history budget is 0 characters)", note=note)


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
