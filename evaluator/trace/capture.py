"""In-process capture of the spans the Langfuse SDK writes, so validation never waits for Langfuse.

`SpanCollector` is an OpenTelemetry span processor added to the evaluator's own TracerProvider beside
Langfuse's processor: it sees every finished span synchronously, keeps only traces that were opened
with `open()`, and hands them back with `take()`. With Langfuse configured the same spans are also
exported; without it this is the only place they go.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode, format_span_id, format_trace_id

from evaluator.trace.build import build_trace
from evaluator.trace.conventions import DEFAULT_RULES, TraceRules
from evaluator.trace.detail import TraceDetail
from evaluator.trace.model import ERROR_LEVEL, GENERATION, TOOL, Observation, Trace
from evaluator.trace.otel_mapping import (
    observation_name,
    observation_type,
    third_party_attributes,
    third_party_io,
)
from evaluator.trace.sources import decode_io, decode_metadata_value
from evaluator.trace.usage import COST_DETAILS, USAGE_DETAILS, Usage, usage_from_langfuse

__all__ = ["SpanCollector", "observation_from_span", "trace_from_spans"]

# Attribute names written by the Langfuse SDK (langfuse._client.attributes), kept here as constants so
# that only the adapter module imports langfuse.
OBSERVATION_INPUT = "langfuse.observation.input"
OBSERVATION_OUTPUT = "langfuse.observation.output"
OBSERVATION_LEVEL = "langfuse.observation.level"
OBSERVATION_STATUS_MESSAGE = "langfuse.observation.status_message"
OBSERVATION_METADATA = "langfuse.observation.metadata"
TRACE_METADATA = "langfuse.trace.metadata"
METADATA_BLOB = "langfuse.metadata"  # the SDK's older spelling, read for both
# Metadata keys the server also reads into both an observation's and a trace's metadata (OTel-native
# libraries: Vercel's AI SDK, and the SDK's older spelling); a few of them it takes for other fields.
_SHARED_METADATA = (METADATA_BLOB + ".", "ai.telemetry.metadata.")
_OBSERVATION_PREFIX, _TRACE_PREFIX = OBSERVATION_METADATA + ".", TRACE_METADATA + "."
_METADATA_PREFIXES = (_OBSERVATION_PREFIX, _TRACE_PREFIX, *_SHARED_METADATA)
_NOT_METADATA = frozenset(
    f"ai.telemetry.metadata.{key}" for key in ("userId", "sessionId", "tags", "langfusePrompt")
)
OBSERVATION_PROMPT_NAME = "langfuse.observation.prompt.name"
OBSERVATION_PROMPT_VERSION = "langfuse.observation.prompt.version"
TRACE_NAME = "langfuse.trace.name"


class SpanCollector(SpanProcessor):
    """Keeps finished spans of opened traces in memory, per trace id (32 hex characters). `keep`
    filters spans (what Langfuse would export). One collector may sit on several providers: a span
    ends on one provider only, so it is captured once. Shutting a provider down leaves it running."""

    def __init__(self, keep: Callable[[ReadableSpan], bool] | None = None) -> None:
        self._lock = threading.Lock()
        self._spans: dict[str, list[ReadableSpan]] = {}
        self._keep = keep

    def open(self, trace_id: str) -> None:
        with self._lock:
            self._spans.setdefault(trace_id, [])

    def take(self, trace_id: str) -> list[ReadableSpan]:
        """The trace's spans so far; the trace is closed, later spans of it are dropped."""
        with self._lock:
            return self._spans.pop(trace_id, [])

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None:
            return
        trace_id = format_trace_id(span.context.trace_id)
        with self._lock:
            bucket = self._spans.get(trace_id)
        if bucket is not None and (self._keep is None or self._keep(span)):
            with self._lock:
                bucket.append(span)

    def shutdown(self) -> None:
        return None  # shared by providers and runs: what is open stays until taken

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def trace_from_spans(trace_id: str, spans: list[ReadableSpan], rules: TraceRules = DEFAULT_RULES) -> Trace:
    """Normalize captured spans into a Trace (named by the first span that carries a trace name)."""
    observations = []
    name = None
    for span in spans:
        attrs = dict(span.attributes or {})  # one copy: the span's own mapping looks up in Python
        if name is None and TRACE_NAME in attrs:
            name = str(attrs[TRACE_NAME])
        observations.append(_observation(span, attrs))
    return build_trace(trace_id, observations, name=name, rules=rules)


def detail_from_spans(spans: Sequence[ReadableSpan]) -> TraceDetail:
    """The observations of captured spans, and the usage the Langfuse SDK's generations keep in span
    attributes the observation does not hold (`usage_from_langfuse`)."""
    observations = []
    usage: dict[str, Usage] = {}
    for span in spans:
        attrs = dict(span.attributes or {})
        obs = _observation(span, attrs)
        observations.append(obs)
        if USAGE_DETAILS in attrs or COST_DETAILS in attrs:
            usage[obs.id] = usage_from_langfuse(attrs)
    return TraceDetail(observations=tuple(observations), usage=usage)


def observation_from_span(span: ReadableSpan) -> Observation:
    return _observation(span, dict(span.attributes or {}))


def _observation(span: ReadableSpan, attrs: dict[str, Any]) -> Observation:
    level = str(attrs.get(OBSERVATION_LEVEL, "DEFAULT")).upper()
    status_message = attrs.get(OBSERVATION_STATUS_MESSAGE)
    status = span.status
    if status.status_code == StatusCode.ERROR and level != ERROR_LEVEL:
        level, status_message = ERROR_LEVEL, status_message or status.description
    version = attrs.get(OBSERVATION_PROMPT_VERSION)
    scope = span.instrumentation_scope
    scope_name = scope.name if scope is not None else None
    context, parent = span.context, span.parent
    kind = observation_type(attrs)
    linked = kind == GENERATION  # the server links a prompt version to generations only
    raw_input, raw_output = attrs.get(OBSERVATION_INPUT), attrs.get(OBSERVATION_OUTPUT)
    if raw_input is None and raw_output is None and kind == TOOL:
        # The server then reads the framework's attributes. Only a tool's are read here: its output is
        # what the judges see (a model span's would be a whole message history decoded for nothing).
        raw_input, raw_output = third_party_io(scope_name, attrs)
    return Observation(
        id=format_span_id(context.span_id) if context else "",
        parent_id=format_span_id(parent.span_id) if parent else None,
        type=kind,
        name=observation_name(span.name, attrs),
        start_time=span.start_time / 1e9 if span.start_time is not None else None,
        end_time=span.end_time / 1e9 if span.end_time is not None else None,
        level=level,
        status_message=str(status_message) if status_message is not None else None,
        input=decode_io(raw_input),
        output=decode_io(raw_output),
        metadata=_metadata(attrs),
        prompt_name=attrs.get(OBSERVATION_PROMPT_NAME) if linked else None,
        prompt_version=int(version) if linked and isinstance(version, int) else None,
        attributes=third_party_attributes(scope_name, attrs),
    )


def _metadata(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata Langfuse's server stores for the span (v2 observations): the observation's, then
    the trace's (`propagate_attributes(metadata=...)`), which wins on a clash; each from its JSON blob
    attribute, then its `<prefix>.<key>` attributes (one pass over the attributes)."""
    observation, trace = _blob(attrs, OBSERVATION_METADATA), _blob(attrs, TRACE_METADATA)
    for key, value in attrs.items():
        if not key.startswith(_METADATA_PREFIXES) or key in _NOT_METADATA:
            continue
        if key.startswith(_OBSERVATION_PREFIX):
            observation[key[len(_OBSERVATION_PREFIX) :]] = decode_metadata_value(value)
        elif key.startswith(_TRACE_PREFIX):
            trace[key[len(_TRACE_PREFIX) :]] = decode_metadata_value(value)
        else:  # read into both by the server: the trace's copy wins anyway
            shared = next(p for p in _SHARED_METADATA if key.startswith(p))
            trace[key[len(shared) :]] = decode_metadata_value(value)
    return {**observation, **trace}


def _blob(attrs: Mapping[str, Any], key: str) -> dict[str, Any]:
    blob = attrs.get(key) or attrs.get(METADATA_BLOB)
    decoded = decode_metadata_value(blob) if blob else None
    return dict(decoded) if isinstance(decoded, dict) else {}
