"""The deterministic checks of one tool call (DESIGN.md, Per-agent analysis):

- unauthorized tool (high): the calling agent has a declared list of tools and the tool is not in it.
  Agents without a declared list, and calls no agent encloses, are not checked. Names compare
  normalized ("Math agent" and `math_agent` are one agent).
- hallucinated parameter (medium): an argument the schema's `properties` do not name, unless the
  schema lets extra arguments in (`additionalProperties` present and not false, or a
  `patternProperties` pattern that matches). An absent `additionalProperties` does not let them in:
  tool definitions for models leave it out, and a model that passes an argument the tool never
  declared made it up.
- missing parameter (medium): a `required` parameter the call did not pass.
- invalid value (medium): an argument the schema names whose value fails its property's schema
  (type, enum, range, pattern, nested objects...), checked by a JSON Schema validator with the
  schema's `$defs` in reach. Only arguments that are present and declared are validated, so an absent
  or extra argument is reported once, as missing or hallucinated.
- tool error (medium): the tool observation's level is ERROR.
The parameter checks need both the call's arguments as an object and a schema; without either they do
not run. A property schema that is itself broken is not used (no issue from it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evaluator.metrics.agents._attribution import AttributedCall
from evaluator.metrics.agents._issues import IssueKind, ToolIssue
from evaluator.trace import ToolDefinition, normalize_name

if TYPE_CHECKING:  # jsonschema is imported when a schema is first checked: most runs never do
    from jsonschema.protocols import Validator

_DEFINITION_KEYS = ("$defs", "definitions")
_OBSERVE_INPUT = frozenset({"args", "kwargs"})
_SHOWN = 60  # characters of a value or schema a message shows


@dataclass(frozen=True, kw_only=True)
class CompiledSchema:
    """A tool's parameter schema ready to check calls: its properties' validators (None for a
    property whose schema is broken), the required names and what extra arguments may be."""

    properties: Mapping[str, Validator | None]
    required: tuple[str, ...]
    extras_allowed: bool
    patterns: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, definition: ToolDefinition) -> CompiledSchema:
        """Compiled once per distinct schema in the process: traces repeat their tools' schemas (each
        agent's model calls record the same list), and checking a schema against its meta-schema
        costs more than validating many values with it. The key keeps the schema's key order: its
        properties' order names an `@observe` call's positional arguments (`call_arguments`)."""
        return _compiled(json.dumps(definition.parameters, default=str))

    @classmethod
    def _build(cls, schema: Mapping[str, Any]) -> CompiledSchema:
        raw = schema.get("properties")
        properties = raw if isinstance(raw, Mapping) else {}
        defs = {k: schema[k] for k in _DEFINITION_KEYS if k in schema}
        required = schema.get("required")
        extra = schema.get("additionalProperties")
        return cls(
            properties={str(name): _validator(sub, defs) for name, sub in properties.items()},
            required=tuple(str(r) for r in required) if isinstance(required, list) else (),
            extras_allowed="additionalProperties" in schema and extra is not False,
            patterns=_patterns(schema.get("patternProperties")),
        )

    def allows_extra(self, name: str) -> bool:
        return self.extras_allowed or any(p.search(name) for p in self.patterns)


@dataclass(frozen=True, kw_only=True)
class DeclaredTools:
    """The tools one agent may use, as declared (for messages) and normalized (for matching)."""

    names: tuple[str, ...]
    normalized: frozenset[str]

    @classmethod
    def of(cls, names: Collection[str]) -> DeclaredTools:
        return cls(names=tuple(names), normalized=frozenset(normalize_name(n) for n in names))


@lru_cache(maxsize=1024)
def _compiled(text: str) -> CompiledSchema:
    decoded = json.loads(text)
    return CompiledSchema._build(decoded if isinstance(decoded, dict) else {})


def check_call(
    call: AttributedCall,
    *,
    allowed: DeclaredTools | None,
    schema: CompiledSchema | None,
) -> list[ToolIssue]:
    """Every issue of one call, in the order unauthorized, parameters (in argument order, then the
    missing ones), tool error. `allowed`: the calling agent's declared tools (None: not declared);
    `schema`: the tool's compiled schema (None: no definition)."""
    issues = []
    if allowed is not None and normalize_name(call.tool) not in allowed.normalized:
        issues.append(_issue(call, "unauthorized_tool", None, _unauthorized(call, allowed)))
    arguments = call_arguments(call.arguments, schema)
    if schema is not None and arguments is not None:
        issues.extend(
            _issue(call, kind, name, message)
            for kind, name, message in _parameter_issues(call, arguments, schema)
        )
    if call.error is not None:
        issues.append(
            _issue(call, "tool_error", None, f"{call.tool} failed ({call.error}); expected it to succeed")
        )
    return issues


def call_arguments(
    arguments: Mapping[str, Any] | None, schema: CompiledSchema | None
) -> Mapping[str, Any] | None:
    """The call's arguments by parameter name. Langfuse's `@observe` records a function's input as
    `{"args": [...], "kwargs": {...}}`: its keyword arguments are named, its positional ones take the
    schema's property names in order (a function definition lists them in the signature's order).
    None when they cannot be named: positional arguments and no schema, or more of them than
    properties. A schema that itself names `args` or `kwargs` is read as it is."""
    if (
        arguments is None
        or set(arguments) != _OBSERVE_INPUT
        or (schema is not None and _OBSERVE_INPUT & set(schema.properties))
    ):
        return arguments
    positional, keywords = arguments["args"], arguments["kwargs"]
    if not isinstance(positional, list) or not isinstance(keywords, Mapping):
        return arguments
    names = list(schema.properties) if schema is not None else []
    if len(positional) > len(names):
        return None
    return {**dict(zip(names, positional, strict=False)), **keywords}


def _parameter_issues(
    call: AttributedCall, arguments: Mapping[str, Any], schema: CompiledSchema
) -> Iterator[tuple[IssueKind, str, str]]:
    declared = ", ".join(schema.properties) or "none"
    for name, value in arguments.items():
        if name not in schema.properties:
            if not schema.allows_extra(name):
                yield (
                    "hallucinated_parameter",
                    name,
                    f"{call.tool} has no parameter '{name}'; its parameters: {declared}",
                )
            continue
        failure = _failure(schema.properties[name], value)
        if failure is not None:
            yield "invalid_value", name, f"{call.tool}'s '{name}' = {_shown(value)}: {failure}"
    for name in schema.required:
        if name not in arguments:
            yield "missing_parameter", name, f"{call.tool} requires '{name}', which the call did not pass"


def _failure(validator: Validator | None, value: Any) -> str | None:
    """Why the value fails its property's schema (the first error, with the schema it expected)."""
    if validator is None:
        return None
    from jsonschema.exceptions import SchemaError
    from referencing.exceptions import Unresolvable

    try:
        error = next(iter(validator.iter_errors(value)), None)
    except (Unresolvable, SchemaError, re.error):
        return None  # a schema that cannot be used says nothing about the call
    if error is None:
        return None
    return f"{error.message}; expected {_shown(error.schema)}"


def _validator(schema: object, defs: Mapping[str, Any]) -> Validator | None:
    """A validator for one property's schema, with the root's definitions beside it so `$ref`s into
    them resolve; None when the schema is not a valid JSON Schema."""
    if isinstance(schema, bool):
        schema_with_defs: Mapping[str, Any] | bool = schema
    elif isinstance(schema, Mapping):
        schema_with_defs = {**defs, **schema}
    else:
        return None
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    cls = validator_for(schema_with_defs)
    try:
        cls.check_schema(schema_with_defs)
    except SchemaError:
        return None
    return cls(schema_with_defs)


def _patterns(value: object) -> tuple[re.Pattern[str], ...]:
    if not isinstance(value, Mapping):
        return ()
    compiled = []
    for pattern in value:
        try:
            compiled.append(re.compile(str(pattern)))
        except re.error:
            continue
    return tuple(compiled)


def _unauthorized(call: AttributedCall, allowed: DeclaredTools) -> str:
    tools = ", ".join(allowed.names) or "none"
    return f"{call.agent} called {call.tool}, which is not among its tools ({tools})"


def _issue(call: AttributedCall, kind: IssueKind, parameter: str | None, message: str) -> ToolIssue:
    return ToolIssue(
        kind=kind,
        agent=call.agent,
        tool=call.tool,
        parameter=parameter,
        message=message,
        observation_id=call.observation_id,
    )


def _shown(value: object) -> str:
    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
