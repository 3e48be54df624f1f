"""How Langfuse's server types and names OpenTelemetry spans, applied in-process so that a verdict drawn
from captured spans equals the verdict drawn from the stored trace (DESIGN.md, Trace model).

Mirrors the server's observation type mapping (first match wins): `langfuse.observation.type`;
`openinference.span.kind`; `gen_ai.operation.name`; a `gen_ai.tool.name` or `gen_ai.tool.call.id`
makes a TOOL; a model attribute makes a GENERATION; else SPAN. The name: `gen_ai.tool.name`, then
`logfire.msg` (pydantic-ai's span title, e.g. "joke_agent run"), then the span name. Spans that did not
come from the Langfuse SDK keep their attributes in the metadata under `attributes`, every non-string
value JSON-encoded, without the input/output and metadata blobs the server lifts out. Such a span's
input and output come from its framework's attributes, in the server's order (`third_party_io`):
OpenInference's `input.value`, pydantic-ai's tool arguments and result, OpenTelemetry GenAI's
messages and tool calls, and the like.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ATTRIBUTES_KEY",
    "observation_name",
    "observation_type",
    "third_party_attributes",
    "third_party_io",
]

ATTRIBUTES_KEY = "attributes"  # the metadata key Langfuse keeps a third-party span's attributes under
LANGFUSE_SCOPE_PREFIX = "langfuse-sdk"
OBSERVATION_TYPE = "langfuse.observation.type"

_LANGFUSE_TYPES = frozenset(
    {
        "span",
        "generation",
        "event",
        "embedding",
        "agent",
        "tool",
        "chain",
        "retriever",
        "guardrail",
        "evaluator",
    }
)
_OPENINFERENCE_KINDS = {
    "CHAIN": "CHAIN",
    "RETRIEVER": "RETRIEVER",
    "LLM": "GENERATION",
    "EMBEDDING": "EMBEDDING",
    "AGENT": "AGENT",
    "TOOL": "TOOL",
    "GUARDRAIL": "GUARDRAIL",
    "EVALUATOR": "EVALUATOR",
}
_GENAI_OPERATIONS = {
    "chat": "GENERATION",
    "completion": "GENERATION",
    "text_completion": "GENERATION",
    "generate_content": "GENERATION",
    "generate": "GENERATION",
    "embeddings": "EMBEDDING",
    "invoke_agent": "AGENT",
    "create_agent": "AGENT",
    "execute_tool": "TOOL",
}
_MODEL_KEYS = (
    "langfuse.observation.model.name",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "llm.model_name",
    "model",
)
# Attributes the server moves into input/output or the metadata, so it does not keep them as attributes.
_LIFTED_PREFIXES = (
    "gen_ai.prompt",
    "gen_ai.completion",
    "llm.input_messages",
    "llm.output_messages",
    "langfuse.",
)
# Where frameworks put a span's input and output, in the order the server tries them (OTel ingestion's
# extractInputAndOutput, for attributes; its span-event sources are not read here): the first pair with
# a value wins. The pydantic-ai pair applies to that library's spans only.
_IO_PAIRS = (
    ("gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response"),
    ("prompt", "all_messages_events"),
    ("mlflow.spanInputs", "mlflow.spanOutputs"),
    ("traceloop.entity.input", "traceloop.entity.output"),
    ("input.value", "output.value"),
    ("input", "output"),
)
_PYDANTIC_AI_IO = ("pydantic_ai.all_messages", "final_result")
_LATER_IO_PAIRS = (
    ("tool_arguments", "tool_response"),
    ("gen_ai.input.messages", "gen_ai.output.messages"),
    ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
)
_LIFTED_KEYS = frozenset(
    {
        *(key for pair in (*_IO_PAIRS, _PYDANTIC_AI_IO, *_LATER_IO_PAIRS) for key in pair),
        "gcp.vertex.agent.tool_call_args",
        "gcp.vertex.agent.tool_response",
        "events",
        "gen_ai.system_instructions",
    }
)


def observation_type(attrs: Mapping[str, Any]) -> str:
    """The type Langfuse's server gives a span with these attributes (upper-case)."""
    langfuse_type = attrs.get(OBSERVATION_TYPE)
    if isinstance(langfuse_type, str) and langfuse_type in _LANGFUSE_TYPES:
        return langfuse_type.upper()
    mapped = _OPENINFERENCE_KINDS.get(str(attrs.get("openinference.span.kind")))
    if mapped is None:
        mapped = _GENAI_OPERATIONS.get(str(attrs.get("gen_ai.operation.name")))
    if mapped is not None:
        return mapped
    if attrs.get("gen_ai.tool.name") or attrs.get("gen_ai.tool.call.id"):
        return "TOOL"
    if any(attrs.get(key) for key in _MODEL_KEYS):
        return "GENERATION"
    return "SPAN"


def observation_name(span_name: str, attrs: Mapping[str, Any]) -> str:
    """The name Langfuse's server gives a span."""
    for key in ("gen_ai.tool.name", "logfire.msg"):
        value = attrs.get(key)
        if value:
            return value if isinstance(value, str) else json.dumps(value)
    return span_name


def third_party_attributes(scope_name: str | None, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The attributes Langfuse keeps in the metadata of a span not written by the Langfuse SDK
    ({} for the SDK's own spans), each value a string as the server stores it."""
    if scope_name is not None and scope_name.startswith(LANGFUSE_SCOPE_PREFIX):
        return {}
    return {
        key: value if isinstance(value, str) else json.dumps(_plain(value))
        for key, value in attrs.items()
        if key not in _LIFTED_KEYS and not key.startswith(_LIFTED_PREFIXES)
    }


def third_party_io(scope_name: str | None, attrs: Mapping[str, Any]) -> tuple[Any, Any]:
    """(input, output) the server takes from a span's framework attributes when the Langfuse SDK's
    are not set, as stored (JSON text where the attribute held a sequence); (None, None) when none
    has one."""
    pairs = [*_IO_PAIRS, *([_PYDANTIC_AI_IO] if scope_name == "pydantic-ai" else []), *_LATER_IO_PAIRS]
    for input_key, output_key in pairs:
        found_input, found_output = attrs.get(input_key), attrs.get(output_key)
        if found_input or found_output:
            return _stored(found_input), _stored(found_output)
    return None, None


def _stored(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(_plain(value))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
