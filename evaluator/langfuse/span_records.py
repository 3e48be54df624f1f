"""Captured spans as the store keeps them, and back as the OTLP request body `sync` sends.

Every span a connected run captures is stored with its scenario's result, on the hot path, so the stored
form is cheap to write: one JSON document of plain fields (the OTLP protobuf encoder costs about six
times as much per span). Only when a trace has to be sent again are the spans rebuilt and encoded,
exactly as the SDK's exporter encodes them: the same ids, times, attributes, status, events, links,
resource and instrumentation scope.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

__all__ = ["to_otlp", "to_records"]


def to_records(spans: Sequence[ReadableSpan]) -> bytes:
    """The spans as stored: a JSON list of plain fields."""
    return json.dumps([_record(span, span.context) for span in spans if span.context is not None]).encode()


def to_otlp(records: bytes) -> bytes:
    """The OTLP request body for stored spans (before gzip), as the SDK's exporter sends it."""
    body: bytes = encode_spans([_span(record) for record in json.loads(records)]).SerializeToString()
    return body


def _record(span: ReadableSpan, context: SpanContext) -> dict[str, Any]:
    scope = span.instrumentation_scope
    return {
        "name": span.name,
        "context": _context(context),
        "parent": _context(span.parent) if span.parent is not None else None,
        "kind": span.kind.value,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": dict(span.attributes or {}),
        "status": [span.status.status_code.value, span.status.description],
        "events": [[e.name, e.timestamp, dict(e.attributes or {})] for e in span.events],
        "links": [[_context(link.context), dict(link.attributes or {})] for link in span.links],
        "resource": [dict(span.resource.attributes), span.resource.schema_url],
        "scope": [scope.name, scope.version, scope.schema_url] if scope is not None else None,
    }


def _context(context: SpanContext) -> list[Any]:
    return [context.trace_id, context.span_id, context.is_remote, int(context.trace_flags)]


def _span_context(fields: Sequence[Any]) -> SpanContext:
    trace_id, span_id, is_remote, flags = fields
    return SpanContext(trace_id, span_id, is_remote=is_remote, trace_flags=TraceFlags(flags))


def _span(record: dict[str, Any]) -> ReadableSpan:
    resource_attributes, schema_url = record["resource"]
    code, description = record["status"]
    scope = record["scope"]
    return ReadableSpan(
        name=record["name"],
        context=_span_context(record["context"]),
        parent=_span_context(record["parent"]) if record["parent"] is not None else None,
        resource=Resource(resource_attributes, schema_url),
        attributes=record["attributes"],
        events=[Event(name, attributes, timestamp) for name, timestamp, attributes in record["events"]],
        links=[Link(_span_context(context), attributes) for context, attributes in record["links"]],
        kind=SpanKind(record["kind"]),
        status=Status(StatusCode(code), description),
        start_time=record["start"],
        end_time=record["end"],
        instrumentation_scope=InstrumentationScope(*scope) if scope is not None else None,
    )
