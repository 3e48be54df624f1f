"""Text from the runs (agent and tool names, run names, a target's errors, messages read back from
Langfuse) as the terminal shows it: each control character but newline and tab written as its escape
(ESC as `\\x1b`), so that a terminal shows it instead of obeying it (colours, cursor moves, a window
title) and a CI log stays readable. Markup is a separate matter: such text goes to rich as `Text`, or
through `rich.markup.escape`, never as markup.

So is each character that moves or hides text without being seen (`unhidden`, which the HTML report
and JUnit XML use too): Unicode's format characters (category Cf: the bidirectional overrides and
isolates, U+202A to U+202E and U+2066 to U+2069, which make `abc\\u202edcba` show as `abcabcd`; the
zero-width space; the byte order mark; the tag characters that spell out hidden text), the variation
selectors 17 to 256 (bytes hidden after a visible character), the line and paragraph separators, and a
lone surrogate (JSON's `"\\ud800"` reads as one; writing it to a terminal or a UTF-8 file fails), each
written as its escape (`\\u202e`). Kept as written: the zero-width non-joiner and joiner (U+200C,
U+200D), which only join or part their neighbours (an emoji sequence such as a family, Persian and Indic
spelling), and every other character: accents, CJK, emoji."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["printable", "unhidden"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NOT_ASCII = re.compile("[^\x00-\x7f]")
_HIDING = frozenset({"Cf", "Zl", "Zp", "Cs"})  # Cs: a lone surrogate, which no terminal or file takes
_JOINERS = frozenset("\u200c\u200d")
# Variation selectors 17 to 256 (marks, not format characters): bytes hidden after a visible character
_SELECTORS_17_256 = ("\U000e0100", "\U000e01ef")


def _escaped(char: str) -> str:
    """Its Python escape (`\\x1b`, `\\u202e`; a character Python prints as it is, as the variation
    selectors, as `\\U000e0100`)."""
    written = repr(char)[1:-1]
    return written if written != char else f"\\U{ord(char):08x}"


def _unhidden(found: re.Match[str]) -> str:
    char = found.group()
    hiding = unicodedata.category(char) in _HIDING and char not in _JOINERS
    return _escaped(char) if hiding or _SELECTORS_17_256[0] <= char <= _SELECTORS_17_256[1] else char


def unhidden(text: str) -> str:
    """`text` with the characters that move or hide text written as their Python escapes."""
    return _NOT_ASCII.sub(_unhidden, text)


def printable(text: str) -> str:
    """`text` with its control characters (but newline and tab) and the characters that move or hide
    text written as their Python escapes."""
    return unhidden(_CONTROL.sub(lambda found: _escaped(found.group()), text))
