"""The judges' traces (the `judge.JudgeTracer` role): each judgement its own Langfuse trace, apart from
the agent's, so judge cost and latency never mix with the system under test.

A trace is named `judge:<scenario id>`, tagged with the run id (and `judge`, `judge:<name>`), in the
run's session, and its id derives from (run id, scenario id, judge). It holds one GENERATION per model
call, named after the judge prompt: the request, and the repair request when the first reply was not
valid (each marked WARNING when its reply was unusable, ERROR when there was none). A generation has
the messages, the reply, the model and its parameters, token usage, cost (when `[judge]` prices are
set; else Langfuse prices the model itself) and, when Langfuse served the judge prompt, the link to
that prompt version.

Each generation is written as one OpenTelemetry span on the SDK's own tracer, its attributes (the
trace's among them) set directly, as the SDK would write them through `start_as_current_observation`
and `update()` (tests/unit/test_langfuse_judging.py compares the two). The SDK's path costs several
times more CPU per call: it encodes the prompt's messages with its own serializer, scans them for
media to upload and checks each attribute against the span's limits, again on each update; a judge
prompt holds no media and a handful of attributes (benchmarks/bench_judges.py).

Spans go where the client's go: to Langfuse when connected. In the embedded mode nothing would ever
see them (never sent, and the capture keeps only the traces it is asked for), so none are made: the
judgement keeps its trace id all the same. With `on_trace`, each judge trace is made and captured
in-process, embedded or not, and handed over as a normalized trace.

Connected, a run's judge traces are also captured and kept (`keep`, `take_kept`), so that the run
stores their spans with the scenario's result, as it stores the scenario's own: the SDK's exporter drops
what Langfuse does not take in time, and `sync` sends again what the store holds. Without this, the
judge scores of a run that met an outage would name (`judge_trace_id`) traces Langfuse never got.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langfuse import Langfuse
from opentelemetry import trace as otel_trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, Status, StatusCode, TraceFlags, Tracer
from opentelemetry.util.types import AttributeValue

from evaluator.judge import GenerationRecord, JudgementTrace, TokenUsage, UnrecordedJudgement
from evaluator.langfuse.span_records import to_records
from evaluator.langfuse.tracing import Tracing
from evaluator.prompts import ChatMessage, Prompt
from evaluator.storage import KeptTrace
from evaluator.trace import Trace, trace_from_spans

__all__ = ["JudgeTracing", "Prices"]

# Attributes as the SDK writes them (langfuse._client.attributes, documented in SDK_NOTES: the span
# attribute `langfuse.observation.type` and the other `langfuse.observation.*`/`langfuse.trace.*`).
TRACE_NAME = "langfuse.trace.name"
TRACE_TAGS = "langfuse.trace.tags"
TRACE_SESSION_ID = "session.id"
TRACE_METADATA = "langfuse.trace.metadata"
OBSERVATION_TYPE = "langfuse.observation.type"
OBSERVATION_INPUT = "langfuse.observation.input"
OBSERVATION_OUTPUT = "langfuse.observation.output"
OBSERVATION_LEVEL = "langfuse.observation.level"
OBSERVATION_STATUS_MESSAGE = "langfuse.observation.status_message"
OBSERVATION_MODEL = "langfuse.observation.model.name"
OBSERVATION_MODEL_PARAMETERS = "langfuse.observation.model.parameters"
OBSERVATION_USAGE_DETAILS = "langfuse.observation.usage_details"
OBSERVATION_COST_DETAILS = "langfuse.observation.cost_details"
OBSERVATION_PROMPT_NAME = "langfuse.observation.prompt.name"
OBSERVATION_PROMPT_VERSION = "langfuse.observation.prompt.version"
ENVIRONMENT = "langfuse.environment"
RELEASE = "langfuse.release"
AS_ROOT = "langfuse.internal.as_root"
_METADATA_VALUE_LIMIT = 200
Prices = tuple[float | None, float | None]  # per million input tokens, per million output tokens
Attributes = Mapping[str, AttributeValue]
Mask = Callable[..., Any]  # the SDK's mask: called as mask(data=...)
_MASK_FALLBACK = "<fully masked due to failed mask function>"  # the SDK's


class _Generation:
    def __init__(self, span: Span, prices: Prices, mask: Mask | None) -> None:
        self._span = span
        self._prices = prices
        self._mask = mask

    def succeeded(self, *, output: str, usage: TokenUsage | None, model: str) -> None:
        """The reply on the generation, with its usage and cost when the endpoint reported usage."""
        counted = {}
        if usage is not None:
            details = {"input": usage.input, "output": usage.output, "total": usage.total}
            cost = _cost(usage, self._prices)
            counted[OBSERVATION_USAGE_DETAILS] = json.dumps(details)
            if cost is not None:
                counted[OBSERVATION_COST_DETAILS] = json.dumps(cost)
        self._span.set_attributes(
            {
                OBSERVATION_OUTPUT: _serialized(_masked(self._mask, output)),
                OBSERVATION_MODEL: model,
                **counted,
            }
        )

    def failed(self, message: str) -> None:
        self._span.set_attributes({OBSERVATION_LEVEL: "ERROR", OBSERVATION_STATUS_MESSAGE: message})
        self._span.set_status(Status(StatusCode.ERROR, description=message))  # as the SDK's level ERROR

    def parameters_sent(self, parameters: Mapping[str, Any]) -> None:
        self._span.set_attribute(OBSERVATION_MODEL_PARAMETERS, json.dumps(dict(parameters)))

    def unusable(self, reason: str) -> None:
        self._span.set_attributes(
            {
                OBSERVATION_LEVEL: "WARNING",
                OBSERVATION_STATUS_MESSAGE: f"the reply is not a valid verdict: {reason}",
            }
        )


def _masked(mask: Mask | None, data: Any) -> Any:
    """`data` through the client's mask (`Langfuse(mask=...)`), as the SDK applies it to an input or
    output; a mask that fails masks it all."""
    if mask is None:
        return data
    try:
        return mask(data=data)
    except Exception:  # noqa: BLE001 - the SDK's own fallback for a failing mask
        return _MASK_FALLBACK


def _serialized(value: Any) -> str:
    """An input or output as the SDK writes it: a string as it is, anything else as JSON (what a mask
    may return that JSON does not know, as its text)."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _cost(usage: TokenUsage, prices: Prices) -> dict[str, float] | None:
    per_input, per_output = prices
    if per_input is None and per_output is None:
        return None
    cost = {
        "input": usage.input * (per_input or 0.0) / 1e6,
        "output": usage.output * (per_output or 0.0) / 1e6,
    }
    return {**cost, "total": cost["input"] + cost["output"]}


class _Judgement:
    def __init__(
        self,
        *,
        tracer: Tracer,
        trace_id: str,
        prompt: Prompt,
        prices: Prices,
        common: Attributes,
        attributes: Attributes,
        mask: Mask | None,
        exported: bool,
    ) -> None:
        self.exported = exported
        self._tracer = tracer
        self._common = common  # the client's, on each of its observations
        self._trace_id = trace_id
        self._prompt = prompt
        self._prices = prices
        self._attributes = attributes  # the trace's: set after the span started (see `generation`)
        self._mask = mask

    @property
    def trace_id(self) -> str | None:
        return self._trace_id

    @contextmanager
    def generation(
        self, *, name: str, messages: Sequence[ChatMessage], model: str, parameters: Mapping[str, Any]
    ) -> Iterator[GenerationRecord]:
        """The GENERATION of one model call: the attributes the SDK's `start_as_current_observation(
        as_type="generation", trace_context=...)` and `update()` write, written at once (see the
        module docstring), current while the call runs (a span an instrumented HTTP client makes
        meanwhile belongs to this trace)."""
        link = self._prompt.link
        sent = [{"role": m.role, "content": m.content} for m in messages]
        attributes: dict[str, AttributeValue] = {
            **self._common,
            OBSERVATION_TYPE: "generation",
            OBSERVATION_INPUT: _serialized(_masked(self._mask, sent)),
            OBSERVATION_MODEL: model,
            OBSERVATION_MODEL_PARAMETERS: json.dumps(dict(parameters)),
        }
        if link is not None and not getattr(link, "is_fallback", False):  # a Langfuse-served version
            attributes[OBSERVATION_PROMPT_NAME] = link.name
            attributes[OBSERVATION_PROMPT_VERSION] = link.version
        span = self._tracer.start_span(name, context=_root_context(self._trace_id), attributes=attributes)
        # The trace's attributes once the span has started: they win over any a caller's
        # `propagate_attributes` put in the context (the SDK's processor writes those at the start).
        span.set_attributes(self._attributes)
        with otel_trace.use_span(span, end_on_exit=True):  # an exception is recorded on it, as the SDK does
            yield _Generation(span, self._prices, self._mask)


def _root_context(trace_id: str) -> Context:
    """A context whose current span is a stand-in parent in trace `trace_id` (the span made in it is
    that trace's root: AS_ROOT), as the SDK makes for `trace_context={"trace_id": ...}`."""
    parent = SpanContext(
        trace_id=int(trace_id, 16),
        span_id=random.getrandbits(64) or 1,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        is_remote=False,
    )
    return otel_trace.set_span_in_context(NonRecordingSpan(parent))


class JudgeTracing:
    def __init__(
        self,
        tracing: Tracing,
        *,
        prices: Prices = (None, None),
        on_trace: Callable[[Trace], None] | None = None,
        keep: bool = False,
    ) -> None:
        """`keep`: keep each exported judge trace's spans for `take_kept` (a run that stores them)."""
        self._tracer = _sdk_tracer(tracing.client)
        self._common = _common_attributes(tracing.client)
        mask = getattr(tracing.client, "_mask", None)  # the key's `Langfuse(mask=...)`, as the SDK applies it
        self._mask: Mask | None = mask if callable(mask) else None
        self._collector = tracing.collector
        self._prices = prices
        self._on_trace = on_trace
        self._exported = tracing.exported
        self._recorded = tracing.exported or on_trace is not None  # else no one would see the spans
        self._keep = keep and tracing.exported
        self._lock = threading.Lock()
        # By scenario id, then trace id, until the run takes them: a judge asked twice under one name
        # (one trace id) has both judgements' spans in the one trace, kept as one.
        self._kept: dict[str, dict[str, list[ReadableSpan]]] = {}
        self._taken: set[str] = set()  # scenarios whose results went on: a later trace is not stored

    def take_kept(self, scenario_id: str) -> list[KeptTrace]:
        """The exported judge traces of this scenario's judgements since it was last asked (none when
        embedded), as the store keeps them with the scenario's result (in no session: a judge trace
        gates no session score)."""
        with self._lock:
            traces = self._kept.pop(scenario_id, {})
            self._taken.add(scenario_id)
        return [
            KeptTrace(
                trace_id=trace_id,
                spans=to_records(spans),
                span_count=len(spans),
                late_spans=False,
                session_id=None,
            )
            for trace_id, spans in traces.items()
        ]

    @staticmethod
    def trace_id_for(run_id: str, scenario_id: str, judge: str) -> str:
        return Langfuse.create_trace_id(seed=f"{run_id}/{scenario_id}/judge:{judge}")

    @contextmanager
    def judgement(
        self, *, run_id: str, scenario_id: str, judge: str, prompt: Prompt
    ) -> Iterator[JudgementTrace]:
        trace_id = self.trace_id_for(run_id, scenario_id, judge)
        if not self._recorded:
            yield UnrecordedJudgement(trace_id)
            return
        captured = self._on_trace is not None or self._keep
        if captured:
            self._collector.open(trace_id)
        judgement = _Judgement(
            tracer=self._tracer,
            trace_id=trace_id,
            prompt=prompt,
            prices=self._prices,
            common=self._common,
            attributes=_trace_attributes(run_id, scenario_id, judge, prompt),
            mask=self._mask,
            exported=self._exported,
        )
        try:
            yield judgement
        finally:
            if captured and not self._captured(scenario_id, trace_id):
                # Ended after its scenario's result went on (a judgement in a thread that Ctrl-C left
                # running): not stored, so Langfuse may never get it; the verdict cache must not link it.
                judgement.exported = False

    def _captured(self, scenario_id: str, trace_id: str) -> bool:
        """A judgement's trace, ended: kept for the store (connected), handed to `on_trace` (if set).
        False when it should have been kept and no longer can be (its scenario was taken)."""
        spans = self._collector.take(trace_id)
        kept = True
        if self._keep and spans:
            with self._lock:
                kept = scenario_id not in self._taken
                if kept:
                    self._kept.setdefault(scenario_id, {}).setdefault(trace_id, []).extend(spans)
        if self._on_trace is not None:
            self._on_trace(trace_from_spans(trace_id, spans))
        return kept


def _sdk_tracer(client: Langfuse) -> Tracer:
    """The tracer the client's own observations are made with (on its key's TracerProvider, named and
    keyed so that the SDK's span processor exports its spans to this project). Private in the SDK:
    when a later SDK moves it, a tracer of the same name and key on the global provider."""
    tracer = getattr(client, "_otel_tracer", None)
    if isinstance(tracer, Tracer):
        return tracer
    return otel_trace.get_tracer(  # pragma: no cover - SDK 5.x has the attribute
        "langfuse-sdk", attributes={"public_key": getattr(client, "_public_key", "")}
    )


def _common_attributes(client: Langfuse) -> dict[str, AttributeValue]:
    """What the SDK writes on every observation of a client (its environment and release, when set)
    and on one made under `trace_context` (the trace's root)."""
    attributes: dict[str, AttributeValue] = {AS_ROOT: True}
    for name, value in ((ENVIRONMENT, "_environment"), (RELEASE, "_release")):
        if isinstance(setting := getattr(client, value, None), str) and setting:
            attributes[name] = setting
    return attributes


def _trace_attributes(run_id: str, scenario_id: str, judge: str, prompt: Prompt) -> dict[str, Any]:
    metadata = {
        "scenario_id": scenario_id,
        "run_id": run_id,
        "judge": judge,
        "judge_prompt": f"{prompt.name}@v{prompt.version}",
    }
    return {
        TRACE_NAME: f"judge:{scenario_id}",
        TRACE_TAGS: [run_id, "judge", f"judge:{judge}"],
        TRACE_SESSION_ID: run_id,
        # Each value JSON-encoded, as SDK 5's propagate_attributes writes trace metadata.
        **{
            f"{TRACE_METADATA}.{key}": json.dumps(value[:_METADATA_VALUE_LIMIT], ensure_ascii=False)
            for key, value in metadata.items()
        },
    }
