"""Whether a reply says something: an entity's name, a value the customer asked for.

A phrase is mentioned when it occurs in the text as whole words, case folded, every run of punctuation
or whitespace counting as one space: "01223-356555" mentions "01223 356555", "Acorn Guest House."
mentions "acorn guest house", but "likely" does not mention "Ely".
"""

from __future__ import annotations

import re

__all__ = ["mentions"]

_NOT_WORD = re.compile(r"[\W_]+")


def _words(text: str) -> str:
    return _NOT_WORD.sub(" ", text.casefold()).strip()


def mentions(text: str, phrase: str) -> bool:
    """True when `phrase` occurs in `text` as whole words; an empty phrase is never mentioned."""
    wanted = _words(phrase)
    return bool(wanted) and f" {wanted} " in f" {_words(text)} "
