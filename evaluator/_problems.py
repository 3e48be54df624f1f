"""One translator from pydantic validation errors to `Problem`s, for every file the user writes
(scenarios, configuration, prompt headers) and for replies parsed into models (judge replies).

An unknown key names the keys allowed at that place, with a "did you mean"; a missing key says what to
add; a value that is not a list, a text, or a mapping, or that none of a field's alternatives takes,
says so in those words; anything else keeps pydantic's message with the value that was found.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

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
    that field, naming them, not one per alternative; a list one of them took in part (`[book, 3]`)
    is a problem per bad item."""
    ordered: list[Problem | tuple[str, ...]] = []  # a problem, or the field of a value none took
    alternatives: dict[tuple[str, ...], list[ErrorDetails]] = {}
    for err in exc.errors():
        loc = tuple(str(part) for part in err["loc"])
        tag = _alternative_at(model, err["loc"])
        if tag is None:
            ordered.append(_problem(err, source, model, fix, patterns or {}))
            continue
        if loc[:tag] not in alternatives:
            ordered.append(loc[:tag])
        alternatives.setdefault(loc[:tag], []).append(err)
    problems: list[Problem] = []
    for item in ordered:
        if isinstance(item, Problem):
            problems.append(item)
            continue
        items = _bad_items(item, alternatives[item])
        problems += [_problem(e, source, model, fix, patterns or {}) for e in items] or [
            _none_of(source, item, alternatives[item])
        ]
    return problems


# How pydantic names the alternatives of a union in an error's location, and what each is to a user.
_ALTERNATIVE = re.compile(r"(str|int|float|bool|dict|list|tuple|set|frozenset)(\[.*\])?")
_KINDS = {"str": "text", "int": "whole number", "float": "number", "dict": "mapping"}


def _none_of(source: str, field: tuple[str, ...], errors: list[ErrorDetails]) -> Problem:
    """One field's value that none of its alternatives took: "3 is neither a text nor a list of texts"."""
    kinds: list[str] = []
    for err in errors:
        base, _, inner = str(err["loc"][len(field)]).partition("[")
        item = inner.split(",")[0].strip(" ]")
        kind = "true or false" if base == "bool" else f"a {_KINDS.get(base, 'list')}"
        if base in ("list", "tuple", "set", "frozenset") and item in _KINDS:
            kind = f"a list of {_KINDS[item]}s"
        if kind not in kinds:
            kinds.append(kind)
    value = next((e["input"] for e in errors if len(e["loc"]) == len(field) + 1), errors[0]["input"])
    found = f"{value!r} is " + (f"neither {' nor '.join(kinds)}" if len(kinds) > 1 else f"not {kinds[0]}")
    return Problem(source=source, field=".".join(field), found=found, fix=f"give {' or '.join(kinds)}")


def _bad_items(field: tuple[str, ...], errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """The errors of a list's items, at the items (`intent.1`), when one alternative (a list of texts)
    took some of its items: `[book, 3]` is a list of texts with a bad item, not a value of the wrong kind
    (`[3]` is). Empty when no alternative took any item."""
    at = len(field)
    value = next((e["input"] for e in errors if len(e["loc"]) == at + 1), None)
    inner = [e for e in errors if len(e["loc"]) > at + 1 and isinstance(e["loc"][at + 1], int)]
    inner = [e for e in inner if e["loc"][at] == inner[0]["loc"][at]]  # one alternative's
    if (
        not isinstance(value, list | tuple)
        or not inner
        or len({e["loc"][at + 1] for e in inner}) >= len(value)
    ):
        return []
    return [{**e, "loc": (*e["loc"][:at], *e["loc"][at + 1 :])} for e in inner]


def _alternative_at(model: type[BaseModel], loc: Sequence[int | str]) -> int | None:
    """Where `loc` names the alternative of a union field that took the value (`intent.str`,
    `intent.tuple[str, ...]`), found by following `model`'s annotations, so that a name the user chose (a
    policy's action `list`, a target `[targets.str]`) is never taken for one; by its spelling past a
    shape the walk cannot follow. None: no alternative `_none_of` can describe."""
    annotation: Any = model
    for at, part in enumerate(loc):
        annotation = _unwrapped(annotation)
        if get_origin(annotation) in (Union, types.UnionType):  # two or more alternatives
            return at if _ALTERNATIVE.fullmatch(str(part)) else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(str(part))
            if info is None:  # an unknown key: the user's, never an alternative
                return None
            annotation = info.annotation
        elif get_origin(annotation) in (dict, Mapping) and len(get_args(annotation)) == 2:
            annotation = get_args(annotation)[1]  # `part` is a name the user chose
        elif get_origin(annotation) in (list, tuple, set, frozenset, Sequence) and isinstance(part, int):
            args = [a for a in get_args(annotation) if a is not Ellipsis] or [Any]
            annotation = args[min(part, len(args) - 1)]  # `tuple[A, B]`: a type per place
        else:
            return next((i for i in range(at, len(loc)) if _ALTERNATIVE.fullmatch(str(loc[i]))), None)
    return None


def _unwrapped(annotation: Any) -> Any:
    """The type an annotation checks: `X` of `Annotated[X, ...]` and of `X | None`."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) > 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


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
        found, advice = _not_a_text_or_mapping(kind, err.get("input"), source)
        return Problem(source=source, field=field, found=found, fix=advice)
    if kind == "string_pattern_mismatch" and field in patterns:
        what, pattern_fix = patterns[field]
        return Problem(source=source, field=field, found=f"{err['input']!r} is not {what}", fix=pattern_fix)
    found, _, own_fix = err["msg"].removeprefix("Value error, ").partition(". Fix: ")  # a validator's own
    if field and "input" in err and not isinstance(err["input"], dict | list):
        found = f"{err['input']!r}: {found}"
    return Problem(source=source, field=field or "(file)", found=found, fix=own_fix.rstrip(".") or fix)


def _not_a_text_or_mapping(kind: str, value: Any, source: str) -> tuple[str, str]:
    """What was found where a text or a mapping belongs, and what to write instead."""
    if value is None:  # `key:` with nothing after it in YAML, null in JSON
        what = "a mapping (name: value, one per line)" if kind in _MAPPING_ERRORS else "a text"
        return "has no value", f"write {what} there"
    if kind in _MAPPING_ERRORS and source.endswith(".toml"):  # evaluator.toml: TOML's words
        found, advice = (
            "is not a table",
            "give a table ([name] and key = value lines below it, or {key = value})",
        )
    elif kind in _MAPPING_ERRORS:
        found, advice = "is not a mapping", "give a mapping (name: value, one per line)"
    elif kind == "string_too_short" and value == "":
        found, advice = "is empty", "write it out (it cannot be empty)"
    else:
        found, advice = "is not a text", "give one value" if isinstance(value, list | dict) else "quote it"
    return f"{value!r} {found}", advice


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
