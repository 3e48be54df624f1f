"""One translator from pydantic validation errors to `Problem`s, for every file the user writes
(scenarios, configuration, prompt headers) and for replies parsed into models (judge replies).

An unknown key names the keys allowed at that place, with a "did you mean"; a missing key says what to
add; a value that is not a list, a text, or a mapping, or that none of a field's alternatives takes,
says so in those words; anything else keeps pydantic's message with the value that was found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evaluator.errors import Problem, did_you_mean

_LIST_TYPES = ("list_type", "tuple_type", "set_type", "frozen_set_type")  # pydantic's "not a list" errors
_MAPPING_ERRORS = ("dict_type", "model_type", "model_attributes_type")  # ... "not a mapping" errors
_TEXT_ERRORS = ("string_type", "string_too_short")


def validation_problems(
    exc: ValidationError,
    *,
    source: str,
    model: type[BaseModel],
    fix: str,
    patterns: Mapping[str, tuple[str, str]] | None = None,
) -> list[Problem]:
    """Every error of `exc` as a Problem in `source`. `fix` is the default advice; `patterns` says,
    for a field (dotted name) whose value did not match its pattern, what it should be and the fix.
    A value that fits none of a field's alternatives (`str | tuple[str, ...]`) is one problem of
    that field, naming them, not one per alternative."""
    ordered: list[Problem | tuple[str, ...]] = []  # a problem, or the field of a value none took
    alternatives: dict[tuple[str, ...], list[ErrorDetails]] = {}
    for err in exc.errors():
        loc = tuple(str(part) for part in err["loc"])
        tag = next((i for i, part in enumerate(loc) if _ALTERNATIVE.fullmatch(part)), None)
        if tag is None:
            ordered.append(_problem(err, source, model, fix, patterns or {}))
            continue
        if loc[:tag] not in alternatives:
            ordered.append(loc[:tag])
        alternatives.setdefault(loc[:tag], []).append(err)
    return [
        item if isinstance(item, Problem) else _none_of(source, item, alternatives[item]) for item in ordered
    ]


# How pydantic names the alternatives of a union in an error's location, and what each is to a user.
_ALTERNATIVE = re.compile(r"(str|int|float|bool|dict|list|tuple|set|frozenset)(\[.*\])?")
_KINDS = {"str": "text", "int": "whole number", "float": "number", "dict": "mapping"}


def _none_of(source: str, field: tuple[str, ...], errors: list[ErrorDetails]) -> Problem:
    """One field's value that none of its alternatives took: "3 is neither a text nor a list of texts"."""
    kinds: list[str] = []
    for err in errors:
        base, _, inner = next(str(p) for p in err["loc"] if _ALTERNATIVE.fullmatch(str(p))).partition("[")
        item = inner.split(",")[0].strip(" ]")
        kind = "true or false" if base == "bool" else f"a {_KINDS.get(base, 'list')}"
        if base in ("list", "tuple", "set", "frozenset") and item in _KINDS:
            kind = f"a list of {_KINDS[item]}s"
        if kind not in kinds:
            kinds.append(kind)
    value = next((e["input"] for e in errors if len(e["loc"]) == len(field) + 1), errors[0]["input"])
    found = f"{value!r} is " + (f"neither {' nor '.join(kinds)}" if len(kinds) > 1 else f"not {kinds[0]}")
    return Problem(source=source, field=".".join(field), found=found, fix=f"give {' or '.join(kinds)}")


def _problem(
    err: ErrorDetails, source: str, model: type[BaseModel], fix: str, patterns: Mapping[str, tuple[str, str]]
) -> Problem:
    loc = [str(part) for part in err["loc"]]
    field = ".".join(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = allowed_keys(model, loc[:-1])
        return Problem(
            source=source,
            field=field,
            found=f'unknown key "{loc[-1]}"' + did_you_mean(loc[-1], allowed),
            fix=f"use one of: {', '.join(allowed)}",
        )
    if kind == "missing":
        return Problem(
            source=source, field=field, found="required field is missing", fix=f"add {loc[-1]}: ..."
        )
    if kind in _LIST_TYPES:
        value = err.get("input")
        example = f"[{json.dumps(value)}]" if isinstance(value, str | int | float) else "[...]"
        return Problem(
            source=source, field=field, found=f"{value!r} is not a list", fix=f"give a list: {example}"
        )
    if kind in _TEXT_ERRORS or kind in _MAPPING_ERRORS:
        value = err.get("input")
        if kind in _MAPPING_ERRORS:
            found, advice = "is not a mapping", "give a mapping (name: value, one per line)"
        elif kind == "string_too_short" and value == "":
            found, advice = "is empty", "write it out (it cannot be empty)"
        else:
            found, advice = (
                "is not a text",
                "give one value" if isinstance(value, list | dict) else "quote it",
            )
        return Problem(source=source, field=field, found=f"{value!r} {found}", fix=advice)
    if kind == "string_pattern_mismatch" and field in patterns:
        what, pattern_fix = patterns[field]
        return Problem(source=source, field=field, found=f"{err['input']!r} is not {what}", fix=pattern_fix)
    found = err["msg"].removeprefix("Value error, ")
    if field and "input" in err and not isinstance(err["input"], dict | list):
        found = f"{err['input']!r}: {found}"
    return Problem(source=source, field=field or "(file)", found=found, fix=fix)


def allowed_keys(model: type[BaseModel], loc: Sequence[str]) -> list[str]:
    """The keys allowed at `loc` inside `model`, following nested models (`M`, `M | None`, and the value
    model of `dict[str, M]`, whose own keys are names, not fields)."""
    current: type[BaseModel] = model
    for part in loc:
        if part.isdigit():  # an item of a list of models (turns.0): its keys are the item model's
            continue
        info = current.model_fields.get(part)
        nested = _nested_model(info.annotation) if info is not None else None
        if nested is None:
            break  # e.g. the name in targets.<name>: `current` is already the value model
        current = nested
    return list(current.model_fields)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside an annotation: `M`, `M | None`, `dict[str, M]`, `tuple[M, ...] | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for candidate in getattr(annotation, "__args__", ()):
        nested = _nested_model(candidate)
        if nested is not None:
            return nested
    return None
