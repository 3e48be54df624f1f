"""JSON text from traces that may not be JSON (evaluator/_json.py): read, or the caller's fallback."""

from __future__ import annotations

import pytest

from evaluator._json import loads_or

FALLBACK = object()


@pytest.mark.parametrize(
    ("text", "value"),
    [('{"a": [1, 2.5, null]}', {"a": [1, 2.5, None]}), ('"text"', "text"), ("null", None), ("[]", [])],
)
def test_json_text_is_read(text: str, value: object) -> None:
    assert loads_or(text, FALLBACK) == value


@pytest.mark.parametrize(
    "text",
    ["", "not json", "{'a': 1}", '{"a": 1', "NaNa", "[" * 100_000],  # the last: too deep to read
)
def test_text_that_cannot_be_read_gives_the_fallback(text: str) -> None:
    assert loads_or(text, FALLBACK) is FALLBACK
