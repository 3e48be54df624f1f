"""Text from traces that may hold JSON (Langfuse keeps every attribute and metadata value as a string):
`loads_or` reads it, or gives the caller's fallback. Not JSON, or nested too deeply for the decoder (which
is recursive: a value of thousands of `[` raises RecursionError), is the same to such a reader: no value.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

__all__ = ["loads_or"]

T = TypeVar("T")


def loads_or(text: str, fallback: T) -> Any | T:
    """`text` decoded, or `fallback` when it is not JSON or nested too deeply to read."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return fallback
