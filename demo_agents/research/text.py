"""Word-level text handling shared by the tools' keyword search and the scripted model's rules.

One tokenizer for both, so "the request has no content words" means the same thing to the
orchestrator's routing rule as "the query matched nothing" means to the search tools.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?%?")


def word_set(words: str) -> frozenset[str]:
    """Space-separated words as a set: word lists read better as text than as long literals."""
    return frozenset(words.split())


# Words that carry no topic: function words, pronouns and the verbs people wrap a request in.
# "help", "tell" and "know" are here on purpose: "Can you help?" names nothing to research.
STOP_WORDS = word_set(
    """
    a about after all also am an and any anything are as at be been being but by can could did do
    does doing for from had has have how i if in into is it its just let like me more most my no not
    of on or our out please s shall should so some something stuff t than that the their them then
    there these they thing things this those to too us was we were what whats when where which who
    why will with would you your help tell know explain show give want need look
    """
)


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens; hyphens split ("text-to-SQL" -> text, to, sql)."""
    return _TOKEN.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Tokens that are not stop words, in order, without duplicates."""
    return list(dict.fromkeys(t for t in tokens(text) if t not in STOP_WORDS))


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace, so a sentence wrapped across lines still matches."""
    return " ".join(text.split())
