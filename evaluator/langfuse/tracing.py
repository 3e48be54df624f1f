"""Tracing through the real Langfuse SDK, captured in-process (the tracer the run pipeline uses).

Two modes, one code path:

- Embedded (no Langfuse keys): the real SDK instrumentation runs on the evaluator's own TracerProvider,
  its span exporter discards (nothing leaves the process), under one process-wide embedded key.
- Connected: the SDK's own OTLP exporter sends the spans to Langfuse (wrapped so that batches it cannot
  deliver are sent again by `sync` from the store), so validation never waits for ingestion.

Capture follows the spans wherever the team's setup sends them. One `SpanCollector` per process (it
keys spans by trace id, so scenarios and runs never mix) is attached, once each, to the provider the
SDK's resource manager really uses for the key (a team's `Langfuse()` or `CallbackHandler()` created
first owns it: the SDK keeps one resource manager per public key, process-wide) and to the global
provider, where OpenTelemetry-native frameworks (pydantic-ai, OpenInference) write. When no global
provider is set, the evaluator's becomes it, as Langfuse's own client does. Spans are exported by the
one Langfuse processor already on their provider, never twice. The collector keeps what the SDK would
export (its default span filter), so the capture holds what Langfuse would store. While a suite runs,
clients created without explicit keys (`get_client()`, `@observe`, a `CallbackHandler()` or
`Langfuse()` at import time) resolve to the evaluator's key (`process_default`, `scenario_run`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import httpx
from langfuse import Langfuse, propagate_attributes

__all__ = ["Captured", "ScenarioSpan", "Tracing"]

try:  # what get_client() and @observe use to find their client (private in the SDK: guarded)
    from langfuse._client.get_client import _set_current_public_key
except ImportError:  # pragma: no cover - a later SDK moved it: keyless clients then resolve as usual

    def _set_current_public_key(public_key: str | None) -> AbstractContextManager[None]:  # type: ignore[misc]
        return nullcontext()


from langfuse.span_filter import is_default_export_span
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from evaluator._time import bounded
from evaluator.langfuse._http import bounded_client
from evaluator.langfuse.experiments import ExperimentLink, linked
from evaluator.langfuse.lifetime import in_command, shut_down_at_exit, shut_down_now
from evaluator.langfuse.log_lines import redact_sdk_lines
from evaluator.langfuse.otlp_transport import span_exporter
from evaluator.langfuse.settings import EMBEDDED_PUBLIC_KEY, LangfuseSettings, check_sdk_environment
from evaluator.langfuse.span_outbox import Ack, AckingExporter
from evaluator.langfuse.span_records import to_records
from evaluator.trace import (
    DEFAULT_RULES,
    SpanCollector,
    Trace,
    TraceDetail,
    TraceRules,
    detail_from_spans,
    trace_from_spans,
)

_EMBEDDED_BASE_URL = "http://127.0.0.1:9"  # never contacted: spans go to the discarding exporter
_EMBEDDED_SECRET_KEY = "sk-lf-evaluator-embedded"  # noqa: S105 - a placeholder, never a secret
# The SDK drops a propagated trace name, or trace metadata value in its JSON form (a string's quotes
# included), of more than 200 characters whole: metadata values are cut to fit (`_fitting`), a longer
# trace name is not given (the trace is then named after its root span).
_METADATA_VALUE_LIMIT = 200
_MEDIA_UPLOAD = "LANGFUSE_MEDIA_UPLOAD_ENABLED"  # langfuse._client.environment_variables
_FLUSH_AT = "LANGFUSE_FLUSH_AT"  # spans per export batch; the SDK's default is 512
# Connected runs export in batches of 64 spans (unless LANGFUSE_FLUSH_AT says otherwise): spans waiting
# for a batch are memory the process keeps for good (freed into fragments its later allocations do not
# fill). At 1,000 scenarios with their judges, the SDK's 512-span batches held some 4 MB more at the peak
# than 128, and 128 about 1.5 MB more than 64 (100.0 against 98.6 MB: issue 22's bound is 100), for no
# CPU measurable. The exporter sends one batch at a time, so smaller batches cut the spans a second a
# Langfuse far away takes: against one 200 ms away, 500 scenarios took 6.1 s at 64, 5.4 s at 128 and
# 10.3 s at 32 (README: LANGFUSE_FLUSH_AT=128 for such a Langfuse). Exporting every 50 ms
# (LANGFUSE_FLUSH_INTERVAL) kept as little waiting, for 0.2-1.5 ms more CPU per scenario
# (benchmarks/bench_judges.py; issue 22's notes).
_DEFAULT_FLUSH_AT = 64


@dataclass(frozen=True)
class _Capture:
    provider: TracerProvider
    exporter: AckingExporter


_capture_lock = threading.Lock()
_capture_by_key: dict[str, _Capture] = {}
_collector = SpanCollector(keep=is_default_export_span)  # one per process: keyed by trace id
_attached: list[TracerProvider] = []  # providers the collector is on (each once: no double capture)


def _attach(provider: object) -> None:
    """Put the collector on an SDK TracerProvider, once (a proxy or no-op provider is skipped)."""
    if not isinstance(provider, TracerProvider):
        return
    with _capture_lock:
        if any(p is provider for p in _attached):
            return
        _attached.append(provider)
    provider.add_span_processor(_collector)


def _follow_spans(client: Langfuse, own: TracerProvider) -> None:
    """Capture where the spans really go: the provider of the key's resource manager (which a client
    created earlier with the same key may own), and the global provider (made `own` if none is set)."""
    resources = getattr(client, "_resources", None)
    _attach(getattr(resources, "tracer_provider", None) or own)
    if isinstance(otel_trace.get_tracer_provider(), otel_trace.ProxyTracerProvider):
        otel_trace.set_tracer_provider(getattr(resources, "tracer_provider", None) or own)
    _attach(otel_trace.get_tracer_provider())


def _capture_for(settings: LangfuseSettings) -> _Capture:
    """The TracerProvider, span collector and span exporter for a public key, made once per process.

    The SDK keeps one resource manager per public key for the whole process, and a second client with
    the same key silently keeps the first one's TracerProvider and exporter; capture has to follow it,
    or a second adapter (e.g. `prompts push` then `run` in one process) would capture nothing.
    """
    with _capture_lock:
        if settings.public_key not in _capture_by_key:
            _capture_by_key[settings.public_key] = _Capture(
                TracerProvider(shutdown_on_exit=False),
                AckingExporter(span_exporter(settings)),
            )
        return _capture_by_key[settings.public_key]


class _DiscardingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


@dataclass(frozen=True)
class Captured:
    """What was captured of one scenario run."""

    trace: Trace
    spans: Sequence[ReadableSpan]

    @property
    def span_count(self) -> int:
        return len(self.spans)

    def detail(self) -> TraceDetail:
        """The observations and usage the trace leaves out (built anew on each call: ask once)."""
        return detail_from_spans(self.spans)

    def payload(self) -> bytes:
        """The spans as the store keeps them for `sync` (span_records)."""
        return to_records(self.spans)


def _never(span: ReadableSpan) -> bool:
    return False


@contextmanager
def _no_media_upload() -> Iterator[None]:
    """While the embedded key's SDK resources are made (on its first client): no media upload. The SDK
    would otherwise swap a base64 data URI in an input or output for a media reference in the captured
    span, and try to upload it to the embedded key's address, which nothing serves. The SDK reads this
    setting from the environment only, once per key."""
    with _capture_lock:
        saved = os.environ.get(_MEDIA_UPLOAD)
        os.environ[_MEDIA_UPLOAD] = "false"
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop(_MEDIA_UPLOAD, None)
            else:
                os.environ[_MEDIA_UPLOAD] = saved


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

    def set_metadata(self, metadata: Mapping[str, object]) -> None:
        self.span.update(metadata=dict(metadata))

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
        self._exporter: AckingExporter | None = None
        self._handler: list[Any] = []
        self._handler_lock = threading.Lock()
        self._embedded = False

    @classmethod
    def embedded(cls) -> Tracing:
        """Real SDK instrumentation, spans captured in-process, no network. Every embedded Tracing of
        the process shares one key (so clients the team creates resolve to it) and one provider.
        ConfigError when a setting the SDK reads from the environment is bad (`check_sdk_environment`)."""
        check_sdk_environment()
        with _capture_lock:
            if EMBEDDED_PUBLIC_KEY not in _capture_by_key:
                _capture_by_key[EMBEDDED_PUBLIC_KEY] = _Capture(
                    TracerProvider(shutdown_on_exit=False), AckingExporter(_DiscardingExporter())
                )
            capture = _capture_by_key[EMBEDDED_PUBLIC_KEY]
        with _no_media_upload():
            client = Langfuse(
                public_key=EMBEDDED_PUBLIC_KEY,
                secret_key=_EMBEDDED_SECRET_KEY,
                base_url=_EMBEDDED_BASE_URL,
                tracer_provider=capture.provider,
                # Nothing leaves the process: the SDK still writes every attribute (its processor's
                # on_start propagates trace attributes to each span), but skips queueing, cloning and
                # media-scanning spans for an exporter that would discard them.
                should_export_span=_never,
                span_exporter=_DiscardingExporter(),
                tracing_enabled=True,
                # Its API is never contacted (the address is a closed local port, over plain HTTP): a
                # client without TLS settings spares loading the CA bundle (about 1.5 MB).
                httpx_client=httpx.Client(timeout=5.0, verify=False),  # noqa: S501
            )
        _follow_spans(client, capture.provider)
        tracing = cls(client=client, public_key=EMBEDDED_PUBLIC_KEY, collector=_collector)
        tracing._embedded = True
        return tracing

    @classmethod
    def connected(cls, settings: LangfuseSettings) -> Tracing:
        """Spans exported to Langfuse and captured in-process. ConfigError when a setting the SDK reads
        from the environment is bad (`check_sdk_environment`). The SDK's log lines lose the keys
        (`redact_sdk_lines`): its errors quote what the server answered."""
        check_sdk_environment()
        redact_sdk_lines()
        capture = _capture_for(settings)
        client = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key.get_secret_value(),
            base_url=settings.base_url,
            tracer_provider=capture.provider,
            span_exporter=capture.exporter,  # the OTLP exporter, keeping what it cannot deliver
            timeout=settings.timeout_seconds,
            flush_at=None if os.environ.get(_FLUSH_AT) else _DEFAULT_FLUSH_AT,
            tracing_enabled=True,
            httpx_client=_sdk_http(settings.timeout_seconds),
        )
        _follow_spans(client, capture.provider)
        tracing = cls(client=client, public_key=settings.public_key, collector=_collector)
        tracing._exporter = capture.exporter
        return tracing

    @property
    def exported(self) -> bool:
        """Whether its spans leave the process (connected); embedded, they are only ever captured."""
        return not self._embedded

    @property
    def collector(self) -> SpanCollector:
        """The in-process capture (judge traces are captured through it too)."""
        return self._collector

    @contextmanager
    def process_default(self) -> Iterator[None]:
        """While open, Langfuse clients created without keys use this tracing's: a team's module that
        builds `Langfuse()` or `CallbackHandler()` at import time, imported inside, records into the
        capture. Embedded, that means the LANGFUSE_* variables name the embedded key (restored on
        exit); connected, the environment names the keys already."""
        if not self._embedded:
            yield
            return
        names = {
            "LANGFUSE_PUBLIC_KEY": EMBEDDED_PUBLIC_KEY,
            "LANGFUSE_SECRET_KEY": _EMBEDDED_SECRET_KEY,
            "LANGFUSE_BASE_URL": _EMBEDDED_BASE_URL,
        }
        saved = {name: os.environ.get(name) for name in names}
        os.environ.update(names)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    @staticmethod
    def trace_id_for(run_id: str, scenario_id: str) -> str:
        """Deterministic: the same (run id, scenario id) always names the same trace."""
        return Langfuse.create_trace_id(seed=f"{run_id}/{scenario_id}")

    def callbacks(self) -> list[Any]:
        """LangChain callback handlers recording runs (tools as TOOL observations) in this client: one
        handler, shared by every scenario (its state is keyed by LangChain run ids, and each run's
        parent span comes from the OpenTelemetry context of the thread it runs in)."""
        with self._handler_lock:
            if not self._handler:
                # Imported on first use: it loads LangChain's tracers (and LangGraph, when installed),
                # about 25 MB that a target which never asks for callbacks does not need.
                from langfuse.langchain import CallbackHandler

                self._handler.append(CallbackHandler(public_key=self._public_key))
            return list(self._handler)

    @contextmanager
    def scenario_run(
        self,
        *,
        trace_id: str,
        scenario_id: str,
        run_id: str,
        tags: Sequence[str],
        input: object,
        experiment: ExperimentLink | None = None,
        session_id: str | None = None,
    ) -> Iterator[ScenarioSpan]:
        """The root SPAN of one scenario's trace, current in this thread, with its trace attributes
        (and, given `experiment`, the link to its experiment item: experiments.linked); spans are
        captured. The span is NOT ended on exit: call `ScenarioSpan.end()`. The trace's Langfuse
        session is `session_id` (a dialogue's turns share theirs), by default the run id."""
        self._collector.open(trace_id)
        with (
            _set_current_public_key(self._public_key),  # get_client() and @observe inside: this key
            self.client.start_as_current_observation(
                name=scenario_id,
                as_type="span",
                input=input,
                trace_context={"trace_id": trace_id},
                end_on_exit=False,
            ) as span,
            propagate_attributes(
                # longer than the SDK takes: none, and Langfuse names the trace after its root span,
                # which holds the whole id (a cut one could be another scenario's)
                trace_name=scenario_id if len(scenario_id) <= _METADATA_VALUE_LIMIT else None,
                session_id=session_id or run_id,
                tags=[*tags, run_id],
                metadata={"scenario_id": _fitting(scenario_id), "run_id": _fitting(run_id)},
            ),
            linked(experiment, span.id) if experiment is not None else nullcontext(),
        ):
            yield ScenarioSpan(span, trace_id)

    def take_trace(self, trace_id: str, rules: TraceRules = DEFAULT_RULES) -> Trace:
        """The normalized trace of a finished scenario run, from the captured spans (the trace is
        closed: later spans of it are not kept), read with the target's rules."""
        return self.take(trace_id, rules).trace

    def take(self, trace_id: str, rules: TraceRules = DEFAULT_RULES) -> Captured:
        """The captured spans of a finished scenario run and their trace (closed, as above)."""
        spans = self._collector.take(trace_id)
        return Captured(trace=trace_from_spans(trace_id, spans, rules), spans=spans)

    def acknowledge_with(self, ack: Ack | None) -> None:
        """Where the exporter reports the spans Langfuse took, per trace (the store)."""
        if self._exporter is not None:
            self._exporter.ack_with(ack)

    def flush(self, timeout_seconds: float) -> bool:
        """Push out queued spans, waiting at most `timeout_seconds` (the SDK's flush has no bound).
        False when it did not finish in time."""
        return bounded(self.client.flush, timeout_seconds)

    def shutdown(self, timeout_seconds: float = 10.0) -> bool:
        """Flush and stop the SDK's threads, waiting at most `timeout_seconds`. Embedded, only flush:
        the process-wide embedded client serves later runs in this process too."""
        if self._embedded:
            return self.flush(timeout_seconds)
        return shut_down_now(self._public_key, self.client, timeout_seconds)

    def end_of_run(self, timeout_seconds: float, *, at_exit_seconds: float) -> bool:
        """A run is over: flush, waiting at most `timeout_seconds`. Connected, in a process that ends
        with the run (`one_command()`) the SDK is shut down too; elsewhere it keeps running for the
        team's own client with the key (the SDK's one per key, which stays shut down once it is) and
        is shut down at the process's exit, waiting at most `at_exit_seconds` (see `lifetime`)."""
        if self._embedded or in_command():
            return self.shutdown(timeout_seconds)
        done = self.flush(timeout_seconds)
        shut_down_at_exit(self._public_key, self.client, at_exit_seconds)
        return done


def _fitting(value: str) -> str:
    """`value`, cut so that the SDK keeps it as trace metadata: its JSON form (SDK 5 encodes every
    value, a string's quotes and escapes included) at most 200 characters."""
    cut = value[: _METADATA_VALUE_LIMIT - 2]
    while len(json.dumps(cut, ensure_ascii=False)) > _METADATA_VALUE_LIMIT:
        cut = cut[:-1]
    return cut


def _sdk_http(timeout: float) -> httpx.Client:
    """The SDK's API client as it would make it (`httpx.Client(timeout=...)`), but with the process's
    one TLS context (`tls_context`): each context loads the CA bundle again, about 1.5 MB and 50 ms;
    and each request's timeout bounds its whole reply (`bounded_client`). The SDK uses it for its API
    calls (prompts, media) and leaves it open at shutdown, as a client it was given; the SDK keeps one
    per public key for the process, so it lives as long anyway."""
    return bounded_client(timeout=timeout)
