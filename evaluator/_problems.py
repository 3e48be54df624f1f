"""One translator from pydantic validation errors to `Problem`s, for every file the user writes
(scenarios, configuration, prompt headers) and for replies parsed into models (judge replies).

An unknown key names the keys allowed at that place, with a "did you mean"; a missing key says what to
add; anything else keeps pydantic's message with the value that was found.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evaluator.errors import Problem, did_you_mean

_LIST_TYPES = ("list_type", "tuple_type", "set_type", "frozen_set_type")  # pydantic's "not a list" errors


def validation_problems(
    exc: ValidationError,
    *,
    source: str,
    model: type[BaseModel],
    fix: str,
    patterns: Mapping[str, tuple[str, str]] | None = None,
) -> list[Problem]:
    """Every error of `exc` as a Problem in `source`. `fix` is the default advice; `patterns` says,
    for a field (dotted name) whose value did not match its pattern, what it should be and the fix."""
    return [_problem(err, source, model, fix, patterns or {}) for err in exc.errors()]


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
