"""The judges' traces (the `judge.JudgeTracer` role): each judgement its own Langfuse trace, apart from
the agent's, so judge cost and latency never mix with the system under test.

A trace is named `judge:<scenario id>`, tagged with the run id (and `judge`, `judge:<name>`), in the
run's session, and its id derives from (run id, scenario id, judge). It holds one GENERATION per model
call, named after the judge prompt: the request, and the repair request when the first reply was not
valid (each marked WARNING when its reply was unusable, ERROR when there was none). A generation has
the messages, the reply, the model and its parameters, token usage, cost (when `[judge]` prices are
set; else Langfuse prices the model itself) and, when Langfuse served the judge prompt, the link to
that prompt version.

Trace attributes are set on each generation's span directly rather than through
`propagate_attributes`: one span per call is what keeps tracing within the stage's CPU budget
(benchmarks/bench_judge.py).

Spans go where the client's go: to Langfuse when connected. In the embedded mode nothing would ever
see them (never sent, and the capture keeps only the traces it is asked for), so none are made: the
judgement keeps its trace id all the same. With `on_trace`, each judge trace is made and captured
in-process, embedded or not, and handed over as a normalized trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langfuse import Langfuse
from opentelemetry import trace as otel_trace

from evaluator.judge import GenerationRecord, JudgementTrace, TokenUsage, UnrecordedJudgement
from evaluator.langfuse.tracing import Tracing
from evaluator.prompts import ChatMessage, Prompt
from evaluator.trace import Trace, trace_from_spans

__all__ = ["JudgeTracing", "Prices"]

# Trace attributes as the SDK writes them (langfuse._client.attributes), for spans set directly.
TRACE_NAME = "langfuse.trace.name"
TRACE_TAGS = "langfuse.trace.tags"
TRACE_SESSION_ID = "session.id"
TRACE_METADATA = "langfuse.trace.metadata"
_METADATA_VALUE_LIMIT = 200
Prices = tuple[float | None, float | None]  # per million input tokens, per million output tokens


class _Generation:
    def __init__(self, observation: Any, prices: Prices) -> None:
        self._observation = observation
        self._prices = prices

    def succeeded(self, *, output: str, usage: TokenUsage, model: str) -> None:
        self._observation.update(
            output=output,
            model=model,
            usage_details={"input": usage.input, "output": usage.output, "total": usage.total},
            cost_details=_cost(usage, self._prices),
        )

    def failed(self, message: str) -> None:
        self._observation.update(level="ERROR", status_message=message)

    def unusable(self, reason: str) -> None:
        self._observation.update(
            level="WARNING", status_message=f"the reply is not a valid verdict: {reason}"
        )


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
        self, client: Langfuse, trace_id: str, prompt: Prompt, prices: Prices, attributes: dict[str, Any]
    ) -> None:
        self._client = client
        self._trace_id = trace_id
        self._prompt = prompt
        self._prices = prices
        self._attributes = attributes

    @property
    def trace_id(self) -> str | None:
        return self._trace_id

    @contextmanager
    def generation(
        self, *, name: str, messages: Sequence[ChatMessage], model: str, parameters: Mapping[str, Any]
    ) -> Iterator[GenerationRecord]:
        with self._client.start_as_current_observation(
            name=name,
            as_type="generation",
            input=[m.model_dump() for m in messages],
            model=model,
            model_parameters=dict(parameters),
            prompt=self._prompt.link,  # a Langfuse-served prompt links; a local file (None) cannot
            trace_context={"trace_id": self._trace_id},
        ) as observation:
            otel_trace.get_current_span().set_attributes(self._attributes)
            yield _Generation(observation, self._prices)


class JudgeTracing:
    def __init__(
        self,
        tracing: Tracing,
        *,
        prices: Prices = (None, None),
        on_trace: Callable[[Trace], None] | None = None,
    ) -> None:
        self._client = tracing.client
        self._collector = tracing.collector
        self._prices = prices
        self._on_trace = on_trace
        self._recorded = tracing.exported or on_trace is not None  # else no one would see the spans

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
        if self._on_trace is not None:
            self._collector.open(trace_id)
        try:
            yield _Judgement(
                self._client,
                trace_id,
                prompt,
                self._prices,
                _trace_attributes(run_id, scenario_id, judge, prompt),
            )
        finally:
            if self._on_trace is not None:
                self._on_trace(trace_from_spans(trace_id, self._collector.take(trace_id)))


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
        **{f"{TRACE_METADATA}.{key}": value[:_METADATA_VALUE_LIMIT] for key, value in metadata.items()},
    }
