"""The judges' traces (the `judge.JudgeTracer` role): each judgement its own Langfuse trace, apart from
the agent's, so judge cost and latency never mix with the system under test.

A trace is named `judge:<scenario id>`, tagged with the run id (session = the run), and its id derives
from (run id, scenario id, judge). Its root is an EVALUATOR observation (input: what the judge was
shown; output: the verdict, or why there is none); below it one GENERATION per model call, with the
model, its parameters, token usage, cost (when `[judge]` prices are set; else Langfuse prices the
model itself) and, when Langfuse served the judge prompt, the link to that prompt version.

Spans go where the client's go: to Langfuse when connected; in the embedded mode they are made
in-process the same way and never sent. With `on_trace`, each judge trace is also captured in-process
and handed over as a normalized trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langfuse import Langfuse, propagate_attributes

from evaluator.judge import GenerationRecord, JudgementTrace, TokenUsage
from evaluator.langfuse.tracing import Tracing
from evaluator.prompts import ChatMessage, Prompt
from evaluator.trace import Trace
from evaluator.trace.capture import trace_from_spans

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
    def __init__(self, client: Langfuse, root: Any, trace_id: str, prompt: Prompt, prices: Prices) -> None:
        self._client = client
        self._root = root
        self._trace_id = trace_id
        self._prompt = prompt
        self._prices = prices

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
        ) as observation:
            yield _Generation(observation, self._prices)

    def finish(self, *, output: object, error: str | None = None) -> None:
        if error is None:
            self._root.update(output=output)
        else:
            self._root.update(output=output, level="WARNING", status_message=error)


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

    @staticmethod
    def trace_id_for(run_id: str, scenario_id: str, judge: str) -> str:
        return Langfuse.create_trace_id(seed=f"{run_id}/{scenario_id}/judge:{judge}")

    @contextmanager
    def judgement(
        self, *, run_id: str, scenario_id: str, judge: str, prompt: Prompt, input: Mapping[str, Any]
    ) -> Iterator[JudgementTrace]:
        trace_id = self.trace_id_for(run_id, scenario_id, judge)
        name = f"judge:{scenario_id}"
        if self._on_trace is not None:
            self._collector.open(trace_id)
        try:
            with (
                self._client.start_as_current_observation(
                    name=name, as_type="evaluator", input=dict(input), trace_context={"trace_id": trace_id}
                ) as root,
                propagate_attributes(
                    trace_name=name,
                    session_id=run_id,
                    tags=[run_id, "judge", f"judge:{judge}"],
                    metadata={
                        "scenario_id": scenario_id[:_METADATA_VALUE_LIMIT],
                        "run_id": run_id[:_METADATA_VALUE_LIMIT],
                        "judge": judge,
                        "judge_prompt": f"{prompt.name}@v{prompt.version}"[:_METADATA_VALUE_LIMIT],
                    },
                ),
            ):
                yield _Judgement(self._client, root, trace_id, prompt, self._prices)
        finally:
            if self._on_trace is not None:
                self._on_trace(trace_from_spans(trace_id, self._collector.take(trace_id)))
