"""The keys the environment gives the evaluator, kept out of what it shows, stores, traces and writes.

The evaluator itself never puts a key in a message; text from outside it can hold one all the same: a
target whose exception quotes `os.environ` (or a settings object), a module that fails on import
saying what it read. Such text goes through `redact` where the evaluator takes it in, so the key
reaches neither the summary, the store, `--output`/`--junit`, nor the trace and scores sent to Langfuse.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["REDACTED", "SECRET_VARIABLES", "failure_text", "redact"]

SECRET_VARIABLES = ("LANGFUSE_SECRET_KEY", "OPENAI_API_KEY", "EVALUATOR_JUDGE_API_KEY")
REDACTED = "***"
# A value shorter than this ("x", a local server's placeholder key) is no secret worth hiding, and
# replacing it would garble ordinary words of the text.
_SHORTEST = 8


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` with the value of each of SECRET_VARIABLES (from `env`, default the process's) replaced
    by REDACTED; nothing else changes."""
    env = os.environ if env is None else env
    for name in SECRET_VARIABLES:
        value = env.get(name, "")
        if len(value) >= _SHORTEST:
            text = text.replace(value, REDACTED)
    return text


def failure_text(exc: BaseException) -> str:
    """'Type: message' of an exception raised outside the evaluator (a target, a module it imports),
    redacted."""
    return redact(f"{type(exc).__name__}: {exc}")
