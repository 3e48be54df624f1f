"""Tracing through the real Langfuse SDK, captured in-process (the tracer the run pipeline uses).

Two modes, one code path:

- Embedded (no Langfuse keys): the real SDK instrumentation runs on an isolated TracerProvider, its span
  exporter discards (nothing leaves the process), and the `SpanCollector` beside it captures every span.
  The client gets a unique throwaway key because the SDK keeps one resource manager per public key for
  the whole process: a reused key would silently reuse another client's exporter.
- Connected: the SDK's own OTLP exporter sends the spans to Langfuse (wrapped so that batches it cannot
  deliver are kept for `sync`) and the collector still captures them, so validation never waits for
  ingestion.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langfuse import Langfuse, propagate_attributes
from langfuse.langchain import CallbackHandler
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from evaluator.langfuse._http import bounded, otlp_endpoint, otlp_headers
from evaluator.langfuse.settings import LangfuseSettings
from evaluator.langfuse.span_outbox import Keep, KeepingExporter
from evaluator.trace import Trace
from evaluator.trace.capture import SpanCollector, trace_from_spans

_EMBEDDED_BASE_URL = "http://127.0.0.1:9"  # never contacted: spans go to the discarding exporter
_METADATA_VALUE_LIMIT = 200  # Langfuse keeps trace metadata values up to 200 characters


@dataclass(frozen=True)
class _Capture:
    provider: TracerProvider
    collector: SpanCollector
    exporter: KeepingExporter


_capture_lock = threading.Lock()
_capture_by_key: dict[str, _Capture] = {}


def _capture_for(settings: LangfuseSettings) -> _Capture:
    """The TracerProvider, span collector and span exporter for a public key, made once per process.

    The SDK keeps one resource manager per public key for the whole process, and a second client with
    the same key silently keeps the first one's TracerProvider and exporter; capture has to follow it,
    or a second adapter (e.g. `prompts push` then `run` in one process) would capture nothing.
    """
    with _capture_lock:
        if settings.public_key not in _capture_by_key:
            provider, collector = TracerProvider(shutdown_on_exit=False), SpanCollector()
            provider.add_span_processor(collector)
            _capture_by_key[settings.public_key] = _Capture(
                provider,
                collector,
                KeepingExporter(
                    OTLPSpanExporter(
                        endpoint=otlp_endpoint(settings),
                        headers=otlp_headers(settings),
                        timeout=settings.timeout_seconds,
                        compression=Compression.Gzip,
                    )
                ),
            )
        return _capture_by_key[settings.public_key]


class _DiscardingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


class ScenarioSpan:
    """The evaluator's root observation (a SPAN) for one scenario run. It is ended exactly once, by
    `end()`, from whichever thread gets there first: the run when its target returns, or the timeout."""

    def __init__(self, span: Any, trace_id: str) -> None:
        self.span = span
        self.trace_id = trace_id
        self._lock = threading.Lock()
        self._ended = False

    def set_output(self, output: object) -> None:
        self.span.update(output=output)

    def set_error(self, message: str) -> None:
        self.span.update(level="ERROR", status_message=message)

    def end(self) -> bool:
        """End the span; False when it had been ended already."""
        with self._lock:
            if self._ended:
                return False
            self._ended = True
        self.span.end()
        return True


class Tracing:
    """The injected Langfuse client, the capture beside it, and one trace per scenario run."""

    def __init__(self, *, client: Langfuse, public_key: str, collector: SpanCollector) -> None:
        self.client = client
        self._public_key = public_key
        self._collector = collector
        self._exporter: KeepingExporter | None = None

    @classmethod
    def embedded(cls) -> Tracing:
        """Real SDK instrumentation, spans captured in-process, no network."""
        public_key = f"pk-lf-embedded-{uuid.uuid4().hex}"
        provider, collector = TracerProvider(shutdown_on_exit=False), SpanCollector()
        provider.add_span_processor(collector)
        client = Langfuse(
            public_key=public_key,
            secret_key="sk-lf-embedded",  # noqa: S106 - placeholder
            base_url=_EMBEDDED_BASE_URL,
            tracer_provider=provider,
            span_exporter=_DiscardingExporter(),
            tracing_enabled=True,
        )
        return cls(client=client, public_key=public_key, collector=collector)

    @classmethod
    def connected(cls, settings: LangfuseSettings) -> Tracing:
        """Spans exported to Langfuse and captured in-process."""
        capture = _capture_for(settings)
        client = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key.get_secret_value(),
            base_url=settings.base_url,
            tracer_provider=capture.provider,
            span_exporter=capture.exporter,  # the OTLP exporter, keeping what it cannot deliver
            timeout=settings.timeout_seconds,
            tracing_enabled=True,
        )
        tracing = cls(client=client, public_key=settings.public_key, collector=capture.collector)
        tracing._exporter = capture.exporter
        return tracing

    @property
    def collector(self) -> SpanCollector:
        """The in-process capture (judge traces are captured through it too)."""
        return self._collector

    @staticmethod
    def trace_id_for(run_id: str, scenario_id: str) -> str:
        """Deterministic: the same (run id, scenario id) always names the same trace."""
        return Langfuse.create_trace_id(seed=f"{run_id}/{scenario_id}")

    def callbacks(self) -> list[Any]:
        """LangChain callback handlers recording runs (tools as TOOL observations) in this client."""
        return [CallbackHandler(public_key=self._public_key)]

    @contextmanager
    def scenario_run(
        self, *, trace_id: str, scenario_id: str, run_id: str, tags: Sequence[str], input: object
    ) -> Iterator[ScenarioSpan]:
        """The root SPAN of one scenario's trace, current in this thread, with its trace attributes;
        spans are captured. The span is NOT ended on exit: call `ScenarioSpan.end()`."""
        self._collector.open(trace_id)
        with (
            self.client.start_as_current_observation(
                name=scenario_id,
                as_type="span",
                input=input,
                trace_context={"trace_id": trace_id},
                end_on_exit=False,
            ) as span,
            propagate_attributes(
                trace_name=scenario_id,
                session_id=run_id,
                tags=[*tags, run_id],
                metadata={
                    "scenario_id": scenario_id[:_METADATA_VALUE_LIMIT],
                    "run_id": run_id[:_METADATA_VALUE_LIMIT],
                },
            ),
        ):
            yield ScenarioSpan(span, trace_id)

    def take_trace(self, trace_id: str) -> Trace:
        """The normalized trace of a finished scenario run, from the captured spans (the trace is
        closed: later spans of it are not kept)."""
        return trace_from_spans(trace_id, self._collector.take(trace_id))

    def keep_undelivered_spans(self, keep: Keep | None) -> None:
        """Where span batches the exporter could not deliver go (the store), instead of being dropped."""
        if self._exporter is not None:
            self._exporter.keep_with(keep)

    def flush(self, timeout_seconds: float) -> bool:
        """Push out queued spans, waiting at most `timeout_seconds` (the SDK's flush has no bound).
        False when it did not finish in time."""
        return bounded(self.client.flush, timeout_seconds)

    def shutdown(self, timeout_seconds: float = 10.0) -> bool:
        """Flush and stop the SDK's threads, waiting at most `timeout_seconds`."""
        return bounded(self.client.shutdown, timeout_seconds)
