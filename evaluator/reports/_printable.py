"""Text from the runs (agent and tool names, run names, a target's errors, messages read back from
Langfuse) as the terminal shows it: each control character but newline and tab written as its escape
(ESC as `\\x1b`), so that a terminal shows it instead of obeying it (colours, cursor moves, a window
title) and a CI log stays readable. Markup is a separate matter: such text goes to rich as `Text`, or
through `rich.markup.escape`, never as markup."""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with its control characters (but newline and tab) written as their Python escapes."""
    return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)
