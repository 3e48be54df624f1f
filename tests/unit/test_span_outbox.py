"""The exporter wrapper reports, per trace, the spans Langfuse took; kept spans encode as OTLP bodies."""

from collections.abc import Mapping, Sequence
from typing import cast

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode, format_trace_id

from evaluator.errors import StoreError
from evaluator.langfuse import AckingExporter
from evaluator.langfuse.span_records import to_otlp, to_records


class Flaky(SpanExporter):
    def __init__(self, results: list[SpanExportResult | Exception]) -> None:
        self.results = results

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        outcome = self.results.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _provider(exporter: SpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_only_delivered_spans_are_acknowledged_per_trace() -> None:
    acks: list[Mapping[str, int]] = []
    inner = Flaky([SpanExportResult.SUCCESS, SpanExportResult.SUCCESS, SpanExportResult.FAILURE])
    tracer = _provider(AckingExporter(inner, ack=acks.append)).get_tracer("test")
    with tracer.start_as_current_span("root") as root:
        with tracer.start_as_current_span("delivered"):
            pass
        trace_id = format_trace_id(root.get_span_context().trace_id)
    with tracer.start_as_current_span("refused"):
        pass
    assert [dict(a) for a in acks] == [{trace_id: 1}, {trace_id: 1}]  # "refused" failed: no ack


def test_an_exporter_that_raises_has_failed_and_ack_can_be_turned_off() -> None:
    acks: list[Mapping[str, int]] = []
    exporter = AckingExporter(Flaky([ConnectionError("down"), SpanExportResult.SUCCESS]), ack=acks.append)
    tracer = _provider(exporter).get_tracer("t")
    with tracer.start_as_current_span("a"):
        pass
    exporter.ack_with(None)
    with tracer.start_as_current_span("b"):
        pass
    assert acks == []


def test_stored_spans_become_the_exporters_otlp_body() -> None:
    captured: list[ReadableSpan] = []

    class Keep(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            captured.extend(spans)
            return SpanExportResult.SUCCESS

    tracer = _provider(Keep()).get_tracer("t", "1.2")
    with (
        tracer.start_as_current_span("root", attributes={"langfuse.observation.type": "span"}),
        tracer.start_as_current_span("child", attributes={"tags": ["a", "b"], "n": 3}) as child,
    ):
        child.add_event("retry", {"attempt": 2})
        child.set_status(StatusCode.ERROR, "boom")
    body = ExportTraceServiceRequest.FromString(to_otlp(to_records(captured)))
    assert body == ExportTraceServiceRequest.FromString(encode_spans(captured).SerializeToString())
    assert [s.name for s in body.resource_spans[0].scope_spans[0].spans] == ["child", "root"]


def test_spans_langfuse_took_that_a_failing_store_cannot_mark_are_a_warning_not_a_failed_export(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def full(delivered: Mapping[str, int]) -> None:
        raise StoreError("cannot write to the store s.db (the disk is full). Fix: free space.")

    exporter = AckingExporter(Flaky([SpanExportResult.SUCCESS]), ack=full)
    tracer = TracerProvider().get_tracer("t")
    with tracer.start_as_current_span("a") as span:
        pass
    assert exporter.export([cast(ReadableSpan, span)]) is SpanExportResult.SUCCESS
    assert "cannot write to the store s.db" in caplog.text
    assert "Langfuse took 1 span the store could not mark; `evaluator sync` sends" in caplog.text
