"""The per-agent metric reads the trace's observations only when something asks for the analysis: a
trace with no tool call, of a target and scenario that declare nothing, never pays for them."""

from __future__ import annotations

import pytest

from evaluator.metrics import MetricContext
from evaluator.metrics.agents import PerAgentMetric, TargetAgents
from evaluator.scenarios import Scenario
from evaluator.trace import Observation, TraceDetail, build_trace


def _never() -> TraceDetail:
    raise AssertionError("the observations were read")


def _trace_without_tools() -> TraceDetail:
    agent = Observation(id="a", parent_id=None, type="AGENT", name="writer", start_time=1.0, end_time=2.0)
    return TraceDetail(observations=(agent,))


@pytest.mark.parametrize("target", ["plain", "other"])
def test_no_declaration_and_no_tool_call_reads_nothing(target: str) -> None:
    detail = _trace_without_tools()
    trace = build_trace("t", list(detail.observations))
    metric = PerAgentMetric({"other": TargetAgents()})
    scenario = Scenario(id="s", target=target, input="q")
    assert metric.evaluate(MetricContext(scenario=scenario, trace=trace, answer="", detail=_never)) is None


def test_a_declaration_reads_them_and_figures_each_agent() -> None:
    detail = _trace_without_tools()
    trace = build_trace("t", list(detail.observations))
    metric = PerAgentMetric({"plain": TargetAgents(agent_tools={"writer": ("search",)})})
    scenario = Scenario(id="s", target="plain", input="q")
    verdict = metric.evaluate(MetricContext(scenario=scenario, trace=trace, answer="", detail=lambda: detail))
    assert verdict is not None and verdict.passed is None  # informs, never decides
    field = verdict.to_json()
    assert (
        field["agents"]["writer"]["tool_calls"] == 0 and field["agents"]["writer"]["tool_use_score"] is None
    )
    assert field["tool_use_score"] is None and verdict.scores() == []
