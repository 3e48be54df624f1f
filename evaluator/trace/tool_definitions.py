"""Tool definitions (name, description, JSON schema of the parameters) as frameworks record them in a
trace, and as a team declares them in a `tool_schemas` file (DESIGN.md, Per-agent analysis).

Where each framework records them (read from the observation as `capture` and `sources` keep it):
- OpenTelemetry GenAI (pydantic-ai): the model request span (a GENERATION) carries
  `gen_ai.tool.definitions`, JSON text of a list of `{"type": "function", "name", "description",
  "parameters"}` (the output tools, such as `final_result`, among them).
- OpenInference (OpenAI Agents SDK): a model span (GENERATION) carries one attribute per tool,
  `llm.tools.<i>.tool.json_schema`, JSON text of an OpenAI function definition; each TOOL span carries
  the schema of the tool it ran, `tool.parameters` (JSON text) and `tool.description`.
- Langfuse's LangChain `CallbackHandler` (LangChain, LangGraph): the GENERATION's input is the message
  list, with one `{"role": "tool", "content": <OpenAI function definition>}` per tool bound to the model.
- Langfuse's OpenAI integration and hand-written generations: an input object with a `tools` list
  (or OpenAI's legacy `functions`).
- pydantic-ai before `gen_ai.tool.definitions`: the `function_tools` of its `model_request_parameters`
  attribute (JSON text), each with a `parameters_json_schema`.
Both shapes of a definition are read: OpenAI's `{"type": "function", "function": {...}}` and the flat
`{"name", "description", "parameters"}` of OpenTelemetry GenAI and OpenAI's Responses API (the schema
also under `parameters_json_schema`, pydantic-ai's, or `input_schema`, Anthropic's). Anything else is
skipped, never an error: a trace is evidence, not a contract.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluator._json import loads_or
from evaluator.errors import InputError
from evaluator.trace.model import GENERATION, TOOL, Observation

__all__ = [
    "DEFINING_TYPES",
    "ToolDefinition",
    "load_tool_schemas",
    "parse_definition",
    "recorded_definitions",
    "tool_schemas_from_document",
]

GENAI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"
OPENINFERENCE_TOOLS_PREFIX = "llm.tools."
OPENINFERENCE_TOOL_SCHEMA_SUFFIX = ".tool.json_schema"
OPENINFERENCE_TOOL_PARAMETERS = "tool.parameters"
OPENINFERENCE_TOOL_DESCRIPTION = "tool.description"
OPENINFERENCE_TOOL_NAME = "tool.name"
PYDANTIC_AI_REQUEST_PARAMETERS = "model_request_parameters"
_TOOL_ROLE = "tool"
# Where a definition keeps its parameters' schema: OpenAI and OpenTelemetry GenAI, pydantic-ai's own
# tool definitions (in `model_request_parameters`), Anthropic's tools.
_PARAMETER_KEYS = ("parameters", "parameters_json_schema", "input_schema")
_INPUT_TOOL_KEYS = ("tools", "functions")  # OpenAI's tools, and its legacy functions


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDefinition:
    """One tool as the model was told about it. `parameters` is the JSON schema of its arguments
    (an object schema; {} when the definition gave none)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


DEFINING_TYPES = frozenset({GENERATION, TOOL})  # the observation types that can record definitions


def recorded_definitions(obs: Observation) -> tuple[ToolDefinition, ...]:
    """The tool definitions this observation records: a generation's (what its model was offered)
    or a tool span's own schema; () for every other observation and when none is recorded."""
    if obs.type == GENERATION:
        return (*_genai_definitions(obs), *_openinference_definitions(obs), *_input_definitions(obs.input))
    if obs.type == TOOL:
        own = _tool_span_definition(obs)
        return (own,) if own is not None else ()
    return ()


def parse_definition(item: object) -> ToolDefinition | None:
    """A definition in OpenAI's nested shape or the flat one; None when `item` is neither (no name,
    or parameters that are not an object)."""
    if not isinstance(item, dict):  # decoded JSON: dicts (a Mapping check costs 10 x more)
        return None
    inner = item.get("function")
    body = inner if isinstance(inner, dict) else item
    name = body.get("name")
    parameters: object = next((body[k] for k in _PARAMETER_KEYS if k in body), {})
    if not isinstance(name, str) or not name or not isinstance(parameters, dict):
        return None
    description = body.get("description")
    return ToolDefinition(
        name=name, description=description if isinstance(description, str) else "", parameters=parameters
    )


def _genai_definitions(obs: Observation) -> tuple[ToolDefinition, ...]:
    """`gen_ai.tool.definitions`; else, from pydantic-ai releases before it, the function tools of
    `model_request_parameters`."""
    value = obs.attributes.get(GENAI_TOOL_DEFINITIONS)
    if isinstance(value, str):
        return _definitions_in_text(value)
    older = obs.attributes.get(PYDANTIC_AI_REQUEST_PARAMETERS)
    return _request_parameter_definitions(older) if isinstance(older, str) else ()


@lru_cache(maxsize=256)
def _request_parameter_definitions(text: str) -> tuple[ToolDefinition, ...]:
    decoded = _json(text)
    return tuple(_parsed_items(decoded.get("function_tools"))) if isinstance(decoded, dict) else ()


def _openinference_definitions(obs: Observation) -> Iterator[ToolDefinition]:
    for key, value in obs.attributes.items():
        if key.startswith(OPENINFERENCE_TOOLS_PREFIX) and key.endswith(OPENINFERENCE_TOOL_SCHEMA_SUFFIX):
            yield from _definitions_in_text(value) if isinstance(value, str) else ()


@lru_cache(maxsize=256)  # every model call of an agent records the same text: decoded once
def _definitions_in_text(text: str) -> tuple[ToolDefinition, ...]:
    """The definitions JSON text holds: a list of them, or one."""
    decoded = _json(text)
    if isinstance(decoded, list):
        return tuple(_parsed_items(decoded))
    definition = parse_definition(decoded)
    return (definition,) if definition is not None else ()


def _input_definitions(value: object) -> Iterator[ToolDefinition]:
    """A generation input's `tools` list, or the tool messages LangChain's handler appends."""
    if isinstance(value, dict):
        return (d for key in _INPUT_TOOL_KEYS for d in _parsed_items(value.get(key)))
    if isinstance(value, list):
        return _parsed_items(_appended_tool_messages(value))
    return iter(())


def _appended_tool_messages(messages: list[Any]) -> list[Any]:
    """The definitions LangChain's handler appends after the conversation, one `{"role": "tool",
    "content": {...}}` each: read from the end back to the last message that is not one, so a long
    history is not walked (a tool's result is a tool message too, but its content is text)."""
    found = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != _TOOL_ROLE:
            break
        content = message.get("content")
        if not isinstance(content, dict):
            break
        found.append(content)
    found.reverse()
    return found


def _tool_span_definition(obs: Observation) -> ToolDefinition | None:
    parameters = _json(obs.attributes.get(OPENINFERENCE_TOOL_PARAMETERS))
    if not isinstance(parameters, dict):
        return None
    name = obs.attributes.get(OPENINFERENCE_TOOL_NAME) or obs.name
    description = obs.attributes.get(OPENINFERENCE_TOOL_DESCRIPTION)
    return ToolDefinition(
        name=str(name), description=description if isinstance(description, str) else "", parameters=parameters
    )


def _parsed_items(items: object) -> Iterator[ToolDefinition]:
    if not isinstance(items, list):
        return
    for item in items:
        definition = parse_definition(item)
        if definition is not None:
            yield definition


def _json(value: object) -> object:
    """Attributes hold JSON text (Langfuse stores every attribute value as a string)."""
    if not isinstance(value, str):
        return value
    return loads_or(value, None)


_FILE_FIX = (
    'write a JSON list of OpenAI function definitions: [{"type": "function", "function": {"name": '
    '"add", "description": "...", "parameters": {"type": "object", "properties": {...}, "required": '
    "[...]}}}]"
)


def load_tool_schemas(path: Path) -> dict[str, ToolDefinition]:
    """The definitions of a `tool_schemas` file, by tool name. InputError names the file, the entry and
    the fix when it cannot be read, is not JSON, or an entry is not an OpenAI function definition."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError.one(
            source=str(path), field="", found=f"cannot read it ({exc})", fix="check the tool_schemas path"
        ) from None
    except ValueError as exc:
        raise InputError.one(source=str(path), field="", found=f"not JSON ({exc})", fix=_FILE_FIX) from None
    return tool_schemas_from_document(document, source=str(path))


def tool_schemas_from_document(document: object, *, source: str) -> dict[str, ToolDefinition]:
    """A `tool_schemas` document (already decoded) by tool name; the last definition of a name wins."""
    if not isinstance(document, list):
        found = f"a JSON {type(document).__name__}, not a list"
        raise InputError.one(source=source, field="", found=found, fix=_FILE_FIX)
    definitions: dict[str, ToolDefinition] = {}
    for index, item in enumerate(document):
        definition = parse_definition(item)
        if definition is None:
            raise InputError.one(
                source=source,
                field=f"[{index}]",
                found=f"not a function definition with a name and object parameters: {_short(item)}",
                fix=_FILE_FIX,
            )
        definitions[definition.name] = definition
    return definitions


def _short(item: object) -> str:
    text = json.dumps(item, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
