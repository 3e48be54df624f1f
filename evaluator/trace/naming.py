"""Names and arguments as the system's author wrote them: name normalisation for matching hand-off
targets, parsed tool arguments, and warnings for names that cannot tell agents apart."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from evaluator._json import loads_or
from evaluator.trace.conventions import Role, Tree
from evaluator.trace.model import Observation

__all__ = ["ambiguity_warnings", "parse_arguments"]

# Where frameworks put a tool call's arguments when the observation has no input of its own.
_ARGUMENT_ATTRIBUTES = ("gen_ai.tool.call.arguments", "tool_arguments", "input.value")


def parse_arguments(obs: Observation) -> Mapping[str, Any] | None:
    """A tool call's arguments as an object: its input when that is one (or JSON text of one), else
    the framework's argument attribute; None when there is no object to be found."""
    for value in (obs.input, *(obs.attributes.get(key) for key in _ARGUMENT_ATTRIBUTES)):
        if isinstance(value, Mapping):
            return value
        if isinstance(value, str) and value.startswith("{"):
            decoded = loads_or(value, None)
            if isinstance(decoded, dict):
                return decoded
    return None


# Where frameworks record the id the model gave a tool call: LangChain's tool runs (metadata), the
# OpenTelemetry GenAI conventions (pydantic-ai: attributes).
_CALL_ID_METADATA = "tool_call_id"
_CALL_ID_ATTRIBUTES = ("gen_ai.tool.call.id",)


def tool_call_id(obs: Observation) -> str | None:
    """The id of the model's tool call this tool run carries out, or None when the trace has none."""
    values = (obs.metadata.get(_CALL_ID_METADATA), *(obs.attributes.get(k) for k in _CALL_ID_ATTRIBUTES))
    return next((v for v in values if isinstance(v, str) and v), None)


def offered_tools(obs: Observation) -> list[str]:
    """The names of the tools a model call was offered, from its input as Langfuse stores it: the
    LangChain handler adds each bound tool as a `{"role": "tool", "content": <definition>}` message; an
    OpenAI-style request body lists them under `tools`. A definition is `{"type": "function",
    "function": {"name": ...}}` or `{"name": ...}`; anything else names nothing."""
    value = obs.input
    if isinstance(value, Mapping):
        items = value.get("tools")
        definitions = items if isinstance(items, list) else []
    elif isinstance(value, list):
        definitions = [m.get("content") for m in value if isinstance(m, Mapping) and m.get("role") == "tool"]
    else:
        definitions = []
    return [name for d in definitions if (name := _tool_name(d)) is not None]


def _tool_name(definition: Any) -> str | None:
    if not isinstance(definition, Mapping):
        return None
    function = definition.get("function")
    name = function.get("name") if isinstance(function, Mapping) else definition.get("name")
    return name if isinstance(name, str) and name else None


def ambiguity_warnings(
    tree: Tree,
    roles: Mapping[str, Role],
    nearest: Mapping[str, str | None],
    generic: frozenset[str],
) -> list[str]:
    """One warning per method-like name (`run`, `execute`, ...) given to several agent or tool calls:
    several distinct classes decorated on the same method cannot be told apart."""
    counts: Counter[tuple[str, str]] = Counter()
    nested: set[tuple[str, str]] = set()
    for obs in tree.ordered:
        role = roles.get(obs.id)
        if role is None or role.name not in generic:
            continue
        counts[(role.kind, role.name)] += 1
        above = nearest.get(obs.id)
        if role.kind == "agent" and above is not None and roles[above].name == role.name:
            nested.add((role.kind, role.name))
    return [
        _warning(kind, name, count, (kind, name) in nested)
        for (kind, name), count in counts.items()
        if count > 1 or (kind, name) in nested
    ]


def _warning(kind: str, name: str, count: int, nested: bool) -> str:
    how = (
        'name each one: @observe(name="research_agent", as_type="agent") on the method, or name= on the agent'
        if kind == "agent"
        else 'name each one: @observe(name="web_search", as_type="tool") on the method, or name= on the tool'
    )
    detail = " (one inside another)" if nested else ""
    return (
        f'{count} {kind} calls are all named "{name}"{detail}, so scenarios cannot tell those {kind}s '
        f"apart; {how}."
    )
