"""The keys the environment gives the evaluator, kept out of what it shows, stores, traces and writes.

The evaluator itself never puts a key in a message; text from outside it can hold one all the same: a
target whose exception quotes `os.environ` (or a settings object), a module that fails on import
saying what it read, a server (the judge endpoint, Langfuse, a proxy in front of either) whose error
echoes the request's Authorization header. Such text goes through `redact` where the evaluator takes
it in, so the key reaches neither the summary, the store, `--output`/`--junit`, nor the trace and
scores sent to Langfuse.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping

__all__ = ["REDACTED", "SECRET_VARIABLES", "failure_text", "redact"]

SECRET_VARIABLES = ("LANGFUSE_SECRET_KEY", "OPENAI_API_KEY", "EVALUATOR_JUDGE_API_KEY")
REDACTED = "***"
# A value shorter than this ("x", a local server's placeholder key) is no secret worth hiding, and
# replacing it would garble ordinary words of the text.
_SHORTEST = 8


def redact(text: str, env: Mapping[str, str] | None = None, *, also: Iterable[str] = ()) -> str:
    """`text` with the value of each of SECRET_VARIABLES (from `env`, default the process's), the
    Langfuse keys' Basic credentials and the keys in `also` (one given in code, not the environment)
    replaced by REDACTED; nothing else changes."""
    env = os.environ if env is None else env
    for value in _secret_values(env, also):
        text = text.replace(value, REDACTED)
    return text


def _secret_values(env: Mapping[str, str], also: Iterable[str]) -> list[str]:
    """The keys' values, and Langfuse's Basic credentials (`public:secret` in base64, as its
    Authorization header carries them: the secret key decodes from them)."""
    values = [*(env.get(name, "") for name in SECRET_VARIABLES), *also]
    public, secret = env.get("LANGFUSE_PUBLIC_KEY", ""), env.get("LANGFUSE_SECRET_KEY", "")
    if public and secret:
        values.append(base64.b64encode(f"{public}:{secret}".encode()).decode("ascii"))
    return [value for value in values if len(value) >= _SHORTEST]


def failure_text(exc: BaseException) -> str:
    """'Type: message' of an exception raised outside the evaluator (a target, a module it imports),
    redacted."""
    return redact(f"{type(exc).__name__}: {exc}")
