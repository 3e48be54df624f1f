"""The one module that imports `langfuse`: the client, built from configuration and injected.

Embedded mode (no Langfuse keys): the real SDK instrumentation runs on an isolated TracerProvider, its
span exporter discards (nothing leaves the process), and the `SpanCollector` beside it captures every
span for validation. The client gets a unique throwaway key because the SDK keeps one resource manager
per public key for the whole process: a reused key would silently reuse another client's exporter.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langfuse import Langfuse, propagate_attributes
from langfuse.langchain import CallbackHandler
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from evaluator.capture import SpanCollector, trace_from_spans
from evaluator.trace import Trace

_EMBEDDED_BASE_URL = "http://127.0.0.1:9"  # never contacted: spans go to the discarding exporter
_METADATA_VALUE_LIMIT = 200  # Langfuse keeps trace metadata values up to 200 characters


class _DiscardingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


@dataclass
class ScenarioSpan:
    """The evaluator's root observation (a SPAN) for one scenario run."""

    span: Any
    trace_id: str

    def set_output(self, output: object) -> None:
        self.span.update(output=output)

    def set_error(self, message: str) -> None:
        self.span.update(level="ERROR", status_message=message)


class LangfuseAdapter:
    """Tracing for scenario runs through one injected Langfuse client."""

    def __init__(
        self,
        *,
        client: Langfuse,
        public_key: str,
        provider: TracerProvider,
        collector: SpanCollector,
        mode: str,
    ) -> None:
        self.client = client
        self.mode = mode
        self._public_key = public_key
        self._provider = provider
        self._collector = collector

    @classmethod
    def embedded(cls) -> LangfuseAdapter:
        """Real SDK instrumentation, spans captured in-process, no network."""
        public_key = f"pk-lf-embedded-{uuid.uuid4().hex}"
        provider, collector = TracerProvider(), SpanCollector()
        provider.add_span_processor(collector)
        client = Langfuse(
            public_key=public_key,
            secret_key="sk-lf-embedded",  # noqa: S106 - a placeholder, never sent
            base_url=_EMBEDDED_BASE_URL,
            tracer_provider=provider,
            span_exporter=_DiscardingExporter(),
            tracing_enabled=True,
        )
        return cls(
            client=client,
            public_key=public_key,
            provider=provider,
            collector=collector,
            mode="embedded",
        )

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
        """The root SPAN of one scenario's trace, with its trace attributes; spans are captured."""
        self._collector.open(trace_id)
        with (
            self.client.start_as_current_observation(
                name=scenario_id, as_type="span", input=input, trace_context={"trace_id": trace_id}
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
            yield ScenarioSpan(span=span, trace_id=trace_id)

    def take_trace(self, trace_id: str) -> Trace:
        """The normalized trace of a finished scenario run, from the captured spans."""
        return trace_from_spans(trace_id, self._collector.take(trace_id))

    def shutdown(self) -> None:
        self.client.shutdown()
