"""Whether a reply says something: an entity's name, a value the customer asked for.

A phrase is mentioned when it occurs in the text as whole words, case folded, every run of punctuation
or whitespace counting as one space: "01223-356555" mentions "01223 356555", "Acorn Guest House."
mentions "acorn guest house", but "likely" does not mention "Ely".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["mentioned"]

_NOT_WORD = re.compile(r"[\W_]+")


def _words(text: str) -> str:
    return _NOT_WORD.sub(" ", text.casefold()).strip()


@lru_cache(maxsize=16_384)
def _padded(phrase: str) -> str | None:
    """A phrase as whole words between spaces (None: it has no word); cached, as the same catalog is
    looked for every turn."""
    words = _words(phrase)
    return f" {words} " if words else None


def mentioned(texts: Iterable[str], phrases: Iterable[str]) -> list[str]:
    """The phrases (as given, in their order) that any of the texts mentions; an empty phrase never is.
    The texts are normalised once and searched as one, however many phrases are looked for (a catalog
    may be long): "|" joins them, which no normalised phrase holds, so no phrase spans two texts. With
    no phrase to look for (a goal with nothing to inform, a reply that named no entity), the texts are
    not read at all."""
    wanted = [(phrase, padded) for phrase in phrases if (padded := _padded(phrase)) is not None]
    if not wanted:
        return []
    said = f" {' | '.join(_words(text) for text in texts)} "
    return [phrase for phrase, padded in wanted if padded in said]
