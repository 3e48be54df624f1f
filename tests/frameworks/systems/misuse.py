"""The tool misuse each scripted model commits, chosen by a word of the question: the faulty agent's
one tool call in each mode (the other agents' calls are always right)."""

from __future__ import annotations

from typing import Any

MODES = ("clean", "unauthorized", "invented", "omitted", "wrong_type")


def mode_of(text: str) -> str:
    return next((mode for mode in MODES if mode in text), "clean")


def faulty_call(text: str) -> tuple[str, dict[str, Any]]:
    """The (tool, arguments) the faulty agent's model calls for the mode the text names."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "clean": ("add", {"a": 2, "b": 3}),
        "unauthorized": ("web_search", {"query": "2 + 3"}),  # registered, but not among its declared tools
        "invented": ("add", {"a": 2, "b": 3, "precision": 2}),  # the tool has no `precision`
        "omitted": ("add", {"a": 2}),  # `b` is required
        "wrong_type": ("add", {"a": 2, "b": "three"}),  # `b` is an integer
    }
    return calls[mode_of(text)]
