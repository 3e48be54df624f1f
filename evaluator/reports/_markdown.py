"""Text from the runs (names of runs, agents, scenarios and prompts, and the lines that hold them) as one
line of GitHub-flavoured Markdown that renders as written: a pull request's comment shows it, never takes
it for Markdown, HTML or a GitHub reference. A name comes from a scenario file or a trace, and a trace
from agents that echo a model's output: `[click](https://evil)`, `![x](https://tracker/x.png)`,
`<img src=x onerror=...>`, `@someone` (a mention notifies them) or `#12` (a reference lands in that
issue's timeline) must reach the reader as those characters.

Only what could start markup is changed, so ordinary text (`booking_flow-2`, `agents/research`,
`p < 0.05`) is left as it is:

- a backslash escape (GFM allows one before any ASCII punctuation) for `\\`, a backtick (code), `*` and
  `~` (emphasis, strike-through), `$` (GitHub's maths), `|` (a table's cell border), `]` before `(`
  (the end of a link's or an image's text) and `_` unless it is inside a word (where it is no emphasis);
- `&lt;` for `<` before what can make it a tag, a comment or an autolink (a letter, `/`, `!`, `?`),
  `&amp;` for `&` that starts an entity (`&amp;`, `&#64;`);
- `@`, `#` or `GH-` before a digit, and the `:` that opens an emoji code (`:white_check_mark:`, which
  would show as the verdict's own mark) as code (`` `@`someone ``): GitHub finds mentions, issue
  references and emoji codes in the rendered text, where a backslash-escaped `\\@` is a plain `@` again,
  but never in code; a time (`10:30:00`) is no emoji code and stays as written;
- at the start of the line, where a list item's text begins, a backslash before a list, quote,
  heading or task-box marker (`-`, `+`, `>`, `#`, `[`, `1.`), and spaces or tabs before it as entities
  (four would start a code block).

A URL in the text is left as it is: GitHub links it, but shows it as written.
"""

from __future__ import annotations

import re

__all__ = ["markdown_text"]

_INLINE = re.compile(
    r"(?P<escaped>[\\`*~$|]|\](?=\()|(?<![^\W_])_|_(?![^\W_]))"
    r"|(?P<tag><(?=[A-Za-z/!?]))"
    r"|(?P<entity>&(?=#?[0-9A-Za-z]+;))"
    r"|(?P<reference>@|#(?=[0-9])|G(?=H-[0-9]))"
    r"|(?P<colon>:(?=(?P<code>[\w+-]*):))"  # one run of name characters: linear, whatever follows
)
_EMOJI_DIGITS = frozenset({"100", "1234", "+1", "-1"})  # GitHub's emoji codes without a letter
_BLOCK_MARKER = re.compile(r"[-+>#\[]|[0-9]{1,9}[.)]")
_WHITESPACE = {" ": "&#32;", "\t": "&#9;"}


def _literal(found: re.Match[str]) -> str:
    char = found.group()
    if found.lastgroup == "escaped":
        return "\\" + char
    if found.lastgroup == "tag":
        return "&lt;"
    if found.lastgroup == "entity":
        return "&amp;"
    if found.lastgroup == "colon" and not _is_emoji_code(found["code"]):
        return char  # a time (10:30:00), a port: no emoji code
    return f"`{char}`"


def _is_emoji_code(name: str) -> bool:
    return name in _EMOJI_DIGITS or any("a" <= c.lower() <= "z" for c in name)


def markdown_text(line: str) -> str:
    """`line` (no line break in it) written so that GitHub-flavoured Markdown shows it as it is."""
    text = _INLINE.sub(_literal, line)
    body = text.lstrip(" \t")
    # Leading whitespace as entities: four spaces would start a code block in a list item.
    lead = "".join(_WHITESPACE[char] for char in text[: len(text) - len(body)])
    marker = _BLOCK_MARKER.match(body)
    if marker is not None:
        at = marker.end() - 1
        body = body[:at] + "\\" + body[at:]
    return lead + body
