"""The rule steps of the correctness judge, before any LLM call (seed crag-llm-judge-evaluator.md):
a miss ("I don't know" and its variants) first, then an exact match after normalisation.

Normalisation: Unicode compatibility form, lower case, typographic apostrophes made plain, every run of
punctuation or whitespace one space. A miss phrase counts when it occurs in the answer as whole words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["exact_match", "miss_phrase", "normalise"]

_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    return _NOT_WORD.sub(" ", text).strip()


def miss_phrase(answer: str, phrases: Iterable[str]) -> str | None:
    """The first miss phrase the answer holds (case-insensitive, whole words), else None."""
    padded = f" {normalise(answer)} "
    for phrase in phrases:
        wanted = normalise(phrase)
        if wanted and f" {wanted} " in padded:
            return phrase
    return None


def exact_match(answer: str, ground_truth: str) -> bool:
    return normalise(answer) == normalise(ground_truth) != ""
