"""Decode the OTLP/HTTP protobuf bodies the Langfuse SDK posts to `/api/public/otel/v1/traces`.

openapi.yml documents this endpoint with a JSON request and a JSON `{}` response only; the SDK
(through OpenTelemetry's `OTLPSpanExporter`) sends binary protobuf, gzip-compressed, so the stand-in
decodes it with `opentelemetry-proto` instead of checking a schema.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

_LANGFUSE_TYPES = ("span", "generation", "event", "embedding", "agent", "tool", "chain", "retriever")
_TYPE_MAPPINGS: tuple[tuple[str, dict[str, str]], ...] = (
    ("langfuse.observation.type", {t: t.upper() for t in (*_LANGFUSE_TYPES, "guardrail", "evaluator")}),
    (
        "openinference.span.kind",
        {k: k for k in ("CHAIN", "RETRIEVER", "EMBEDDING", "AGENT", "TOOL", "GUARDRAIL", "EVALUATOR")}
        | {"LLM": "GENERATION"},
    ),
    (
        "gen_ai.operation.name",
        {"chat": "GENERATION", "text_completion": "GENERATION", "completion": "GENERATION"}
        | {"generate_content": "GENERATION", "generate": "GENERATION", "embeddings": "EMBEDDING"}
        | {"invoke_agent": "AGENT", "create_agent": "AGENT", "execute_tool": "TOOL"},
    ),
)
_MODEL_KEYS = ("langfuse.observation.model.name", "gen_ai.request.model", "gen_ai.response.model")
_SCALAR_KINDS = frozenset({"string_value", "bool_value", "int_value", "double_value", "bytes_value"})


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the stand-in received it, attributes decoded to Python values."""

    trace_id: str  # 32 hex characters
    span_id: str  # 16 hex characters; Langfuse's observation id
    parent_span_id: str | None
    name: str
    kind: str  # e.g. "SPAN_KIND_INTERNAL"
    start_time_ns: int
    end_time_ns: int
    attributes: dict[str, Any]
    status_code: str  # "UNSET", "OK" or "ERROR"
    status_message: str
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    scope_name: str = ""
    scope_attributes: dict[str, Any] = field(default_factory=dict)
    received_at: float = 0.0  # wall clock (time.time()) when the export request arrived
    visible_at: float = 0.0  # monotonic time from which the read APIs return it

    @property
    def observation_type(self) -> str:
        """Langfuse's observation type, as the server's ObservationTypeMapper derives it (first match):
        `langfuse.observation.type`, `openinference.span.kind`, `gen_ai.operation.name`, GenAI tool
        attributes, model attributes; SPAN otherwise."""
        attrs = self.attributes
        for key, mapping in _TYPE_MAPPINGS:
            mapped = mapping.get(str(attrs.get(key)))
            if mapped:
                return mapped
        if attrs.get("gen_ai.tool.name") or attrs.get("gen_ai.tool.call.id"):
            return "TOOL"
        if any(attrs.get(key) for key in _MODEL_KEYS):
            return "GENERATION"
        return "SPAN"

    @property
    def observation_name(self) -> str:
        """The server's extractName: the GenAI tool name, then Logfire's message, then the span name."""
        for key in ("gen_ai.tool.name", "logfire.msg"):
            if self.attributes.get(key):
                return str(self.attributes[key])
        return self.name

    @property
    def from_langfuse_sdk(self) -> bool:
        return self.scope_name.startswith("langfuse-sdk")


def decompress(body: bytes, content_encoding: str | None) -> bytes:
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    if encoding == "identity":
        return body
    raise ValueError(f"unsupported Content-Encoding {content_encoding!r}")


def decode_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind in _SCALAR_KINDS:
        return getattr(value, kind)
    if kind == "array_value":
        return [decode_value(item) for item in value.array_value.values]
    return decode_attributes(value.kvlist_value.values)  # kvlist_value


def decode_attributes(pairs: Any) -> dict[str, Any]:
    """Decode a repeated `KeyValue` field into a plain dict."""
    decoded: dict[str, Any] = {}
    pair: KeyValue
    for pair in pairs:
        decoded[pair.key] = decode_value(pair.value)
    return decoded


def decode_export_request(payload: bytes, *, received_at: float, visible_at: float) -> list[ReceivedSpan]:
    """Every span of one `ExportTraceServiceRequest` body (already decompressed)."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(payload)
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = decode_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    _decode_span(
                        span,
                        resource=resource,
                        scope_name=scope_spans.scope.name,
                        scope_attributes=decode_attributes(scope_spans.scope.attributes),
                        received_at=received_at,
                        visible_at=visible_at,
                    )
                )
    return spans


def _decode_span(
    span: Span,
    *,
    resource: dict[str, Any],
    scope_name: str,
    scope_attributes: dict[str, Any],
    received_at: float,
    visible_at: float,
) -> ReceivedSpan:
    return ReceivedSpan(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_span_id=span.parent_span_id.hex() or None,
        name=span.name,
        kind=Span.SpanKind.Name(span.kind),
        start_time_ns=span.start_time_unix_nano,
        end_time_ns=span.end_time_unix_nano,
        attributes=decode_attributes(span.attributes),
        status_code=Status.StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
        status_message=span.status.message,
        resource_attributes=resource,
        scope_name=scope_name,
        scope_attributes=scope_attributes,
        received_at=received_at,
        visible_at=visible_at,
    )
