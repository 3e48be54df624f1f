"""Every bundled prompt's reply schema (`config.json_schema`) as OpenAI's strict structured outputs
take it: a schema OpenAI rejects would silently turn every judgement into a plain-JSON request through
the structured-output fallback (judges.py), with one warning per run."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from evaluator.prompts.files import parse_prompt_file

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
# The keywords strict mode takes: structure, composition by anyOf, and the constraints OpenAI lists
# as supported (numbers: minimum, maximum, their exclusive forms, multipleOf; strings: pattern, format;
# arrays: minItems, maxItems).
_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "description", "title", "$ref", "$defs",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "pattern", "format", "minItems", "maxItems",
}  # fmt: skip
_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
_MAX_DEPTH = 10  # nesting levels of objects OpenAI takes


def _schemas() -> list[tuple[str, Mapping[str, Any]]]:
    found = []
    for path in sorted(PROMPTS.rglob("*.prompt")):
        schema = parse_prompt_file(path, PROMPTS).config.get("json_schema")
        if schema is not None:
            found.append((str(path.relative_to(PROMPTS)), schema))
    return found


def _strict_problems(schema: Mapping[str, Any], where: str = "schema", depth: int = 1) -> Iterator[str]:
    """What OpenAI's strict mode would reject in `schema` (one subschema and all below it)."""
    for key in sorted(schema.keys() - _KEYWORDS):
        yield f"{where}: the keyword {key!r} is not supported in strict mode"
    types = schema.get("type")
    listed = types if isinstance(types, list) else [types] if types is not None else []
    if any(t not in _TYPES for t in listed):
        yield f"{where}: type {types!r}"
    if not listed and not any(k in schema for k in ("anyOf", "$ref", "enum", "const")):
        yield f"{where}: no type"
    if "object" in listed:
        yield from _object_problems(schema, where, depth)
    below = [(f"{where}.items", schema["items"])] if isinstance(schema.get("items"), Mapping) else []
    below += [(f"{where}.anyOf[{i}]", sub) for i, sub in enumerate(schema.get("anyOf", []))]
    below += [(f"{where}.$defs.{name}", sub) for name, sub in schema.get("$defs", {}).items()]
    for place, sub in below:
        yield from _strict_problems(sub, place, depth)


def _object_problems(schema: Mapping[str, Any], where: str, depth: int) -> Iterator[str]:
    """An object's: additionalProperties false, every property required, not nested too deep."""
    properties = schema.get("properties", {})
    if depth > _MAX_DEPTH:
        yield f"{where}: nested deeper than {_MAX_DEPTH} levels"
    if schema.get("additionalProperties") is not False:
        yield f"{where}: an object without additionalProperties: false"
    required = schema.get("required")
    if sorted(required or []) != sorted(properties):
        yield f"{where}: required {required} does not list every property {sorted(properties)}"
    for name, sub in properties.items():
        yield from _strict_problems(sub, f"{where}.properties.{name}", depth + 1)


def test_the_bundled_judge_prompts_have_reply_schemas() -> None:
    assert {path.split("/")[1] for path, _ in _schemas()} >= {
        "quality",
        "correctness",
        "agent",
        "turn_quality",
    }


@pytest.mark.parametrize(("path", "json_schema"), _schemas(), ids=lambda value: str(value)[:40])
def test_a_bundled_reply_schema_is_one_openai_strict_mode_takes(
    path: str, json_schema: Mapping[str, Any]
) -> None:
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", str(json_schema.get("name"))), f"{path}: json_schema.name"
    assert json_schema.get("strict") is True, f"{path}: json_schema.strict is not true"
    schema = json_schema["schema"]
    assert schema.get("type") == "object" and "anyOf" not in schema, f"{path}: the root is not an object"
    assert list(_strict_problems(schema)) == [], path


def test_the_strict_mode_check_finds_what_openai_rejects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0},
            "note": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}}},
        },
        "required": ["score"],
    }
    assert sorted(_strict_problems(schema)) == [
        "schema.properties.note.properties.text: the keyword 'minLength' is not supported in strict mode",
        "schema.properties.note: an object without additionalProperties: false",
        "schema.properties.note: required None does not list every property ['text']",
        "schema: an object without additionalProperties: false",
        "schema: required ['score'] does not list every property ['note', 'score']",
    ]
