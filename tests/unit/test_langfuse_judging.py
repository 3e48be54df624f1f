"""langfuse/judging.py: each judgement its own trace, in-process too (embedded mode: captured, not
sent): one GENERATION per model call, with model, usage, cost, and a WARNING on an unusable reply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.judge import FakeJudgeModel, Judges, RetryPolicy, TokenUsage
from evaluator.langfuse import JudgeTracing, Tracing
from evaluator.prompts import PromptLibrary
from evaluator.trace import Trace
from tests.builders import TraceBuilder, scenario

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
CORRECT = '{"verdict": "CORRECT", "reason": "same"}'


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _judge(tracing: Tracing, replies: list[str]) -> tuple[list[Trace], dict[str, object]]:
    captured: list[Trace] = []
    judges = Judges(
        model=FakeJudgeModel(replies, usage=TokenUsage(input=1000, output=100)),
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing, prices=(2.0, 8.0), on_trace=captured.append),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})
    outcome = judges.judge(sc, "It is RESDSQL", TraceBuilder().build(), run_id="run-x")
    return captured, outcome.detail["correctness"]


def test_a_judgement_is_its_own_trace_with_one_generation_per_call(tracing: Tracing) -> None:
    captured, detail = _judge(tracing, ["not json", CORRECT])
    [trace] = captured
    assert trace.id == detail["trace_id"] == JudgeTracing.trace_id_for("run-x", "s-7", "correctness")
    assert trace.name == "judge:s-7"
    assert trace.observation_count == 2  # the request and the repair
    assert detail["calls"] == 2 and detail["status"] == "scored"


def test_generations_carry_model_usage_cost_and_the_unusable_reply(tracing: Tracing) -> None:
    spans: list[object] = []
    original = tracing.collector.on_end

    def keep(span: object) -> None:
        spans.append(span)
        original(span)  # type: ignore[arg-type]

    tracing.collector.on_end = keep  # type: ignore[method-assign]
    _judge(tracing, ["not json", CORRECT])
    first, second = sorted(spans, key=lambda s: s.start_time)  # type: ignore[attr-defined]
    attributes = dict(first.attributes)  # type: ignore[attr-defined]
    assert attributes["langfuse.observation.type"] == "generation"
    assert attributes["langfuse.observation.model.name"] == "gpt-4o-mini"
    assert json.loads(attributes["langfuse.observation.usage_details"]) == {
        "input": 1000,
        "output": 100,
        "total": 1100,
    }
    cost = json.loads(attributes["langfuse.observation.cost_details"])
    assert cost == pytest.approx({"input": 0.002, "output": 0.0008, "total": 0.0028})
    assert attributes["langfuse.observation.level"] == "WARNING"
    assert "not a valid verdict" in attributes["langfuse.observation.status_message"]
    assert "langfuse.observation.level" not in dict(second.attributes)  # type: ignore[attr-defined]
    assert "langfuse.observation.prompt.name" not in attributes  # a local file is never linked


def test_embedded_and_not_captured_a_judgement_makes_no_spans_and_keeps_its_trace_id(
    tracing: Tracing,
) -> None:
    """Nobody would ever see them (never sent, not captured): they are not made."""
    spans: list[object] = []
    original = tracing.collector.on_end

    def keep(span: object) -> None:
        spans.append(span)
        original(span)  # type: ignore[arg-type]

    tracing.collector.on_end = keep  # type: ignore[method-assign]
    judges = Judges(
        model=FakeJudgeModel(["not json", CORRECT]),
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})
    outcome = judges.judge(sc, "It is RESDSQL", TraceBuilder().build(), run_id="run-x")
    detail = outcome.detail["correctness"]
    assert detail["status"] == "scored" and detail["calls"] == 2
    assert detail["trace_id"] == JudgeTracing.trace_id_for("run-x", "s-7", "correctness")
    assert spans == []
