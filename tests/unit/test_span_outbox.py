"""Span batches the exporter could not deliver are kept as OTLP request bodies, not dropped."""

from collections.abc import Sequence

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from evaluator.langfuse import KeepingExporter


class Flaky(SpanExporter):
    def __init__(self, results: list[SpanExportResult | Exception]) -> None:
        self.results = results

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        outcome = self.results.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def test_failed_batches_are_kept_and_successful_ones_are_not() -> None:
    kept: list[tuple[bytes, int]] = []
    inner = Flaky([SpanExportResult.SUCCESS, SpanExportResult.FAILURE, ConnectionError("down")])
    exporter = KeepingExporter(inner, keep=lambda payload, count: kept.append((payload, count)))
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for name in ("delivered", "refused", "unreachable"):
        with tracer.start_as_current_span(name):
            pass
    assert [count for _, count in kept] == [1, 1]
    names = [
        ExportTraceServiceRequest.FromString(payload).resource_spans[0].scope_spans[0].spans[0].name
        for payload, _ in kept
    ]
    assert names == ["refused", "unreachable"]


def test_keep_can_be_re_pointed_or_turned_off() -> None:
    first: list[int] = []
    exporter = KeepingExporter(
        Flaky([SpanExportResult.FAILURE] * 2), keep=lambda _, count: first.append(count)
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("a"):
        pass
    exporter.keep_with(None)
    with provider.get_tracer("t").start_as_current_span("b"):
        pass
    assert first == [1]
