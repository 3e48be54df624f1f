"""Intent drift, the seed's weighted scores (re-normalised over what was measured), the roll-up of a
`per_agent` field and its recommendations (DESIGN.md, Per-agent analysis; seed
multi-agent-evaluation-plan.md, Score Computation and Recommendations Engine). The expected values are
worked out by hand in each test's comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluator.config import load_config
from evaluator.errors import ConfigError
from evaluator.metrics import MetricContext
from evaluator.metrics.agents import (
    AgentWeights,
    OverallWeights,
    PerAgentMetric,
    ScoreWeights,
    TargetAgents,
    agent_score,
    intent_drift,
    overall_score,
    roll_up_scores,
    weighted_average,
)
from evaluator.results import builtin_metrics
from evaluator.scenarios import Scenario
from evaluator.trace import TraceDetail
from tests.builders import TraceBuilder, expected, trace_of


def test_intent_drift_is_the_share_of_steps_outside_the_scenarios_expectation() -> None:
    # research-pdf-only under research prompt v1: the orchestrator (entry agent, exempt), research
    # (included), pdf_retrieval (included), web_search (excluded) -> 1 drifted of 3 steps
    builder = TraceBuilder()
    research = builder.agent("research", parent=builder.agent("orchestrator"))
    builder.tool("pdf_retrieval", parent=research)
    builder.tool("web_search", parent=research)
    trace = builder.build()
    scenario = expected(
        agents={"include": ["research"], "exclude": ["clarification"]},
        tools={"include": ["pdf_retrieval"], "exclude": ["web_search"]},
    )
    drift = intent_drift(trace, scenario)
    assert drift is not None and drift.steps == 3 and drift.score == pytest.approx(1 / 3)
    [step] = drift.drifted
    assert (step.kind, step.name, step.agent) == ("tool", "web_search", "research")
    # lenient (strict: false): an extra tool is not outside the expectation -> 0 of 3
    lenient = expected(
        agents={"include": ["research"]}, tools={"include": ["pdf_retrieval"], "strict": False}
    )
    assert intent_drift(trace, lenient).score == 0.0  # type: ignore[union-attr]


def test_intent_drift_measures_only_the_kinds_a_scenario_names() -> None:
    trace = trace_of(["orchestrator", "research", "clarification"], ["web_search"])
    assert intent_drift(trace, expected()) is None  # names nothing: not measured
    # agents only: research and clarification are steps, clarification is unexpected (strict) -> 1/2;
    # the tool is not a step
    drift = intent_drift(trace, expected(agents={"include": ["research"]}))
    assert drift is not None and (drift.steps, drift.score) == (2, 0.5)


def test_weighted_average_renormalises_over_the_measured_parts() -> None:
    assert weighted_average([(0.5, 0.35), (None, 0.25)]) == 0.5
    # (0.35 * 0.5 + 0.25 * 1.0) / (0.35 + 0.25) = 0.425 / 0.6
    assert weighted_average([(0.5, 0.35), (1.0, 0.25), (None, 0.2)]) == pytest.approx(0.425 / 0.6)
    assert weighted_average([(None, 0.35), (None, 0.25)]) is None
    assert weighted_average([(0.2, 0.0), (0.8, 1.0)]) == 0.8  # a weight of 0 drops its part
    assert weighted_average([(0.2, 0.0)]) is None


def test_agent_score_uses_the_seeds_weights() -> None:
    full = {"tool_use_score": 1.0, "reasoning": 0.8, "handoff": 0.6, "response_quality": 0.9}
    # 0.35 * 1.0 + 0.25 * 0.8 + 0.20 * 0.6 + 0.20 * 0.9 = 0.35 + 0.2 + 0.12 + 0.18
    assert agent_score(full, AgentWeights()) == pytest.approx(0.85)
    assert agent_score({"tool_use_score": 0.5, "reasoning": None}, AgentWeights()) == 0.5
    assert agent_score({"tool_use_score": None}, AgentWeights()) is None  # nothing measured


def test_overall_score_uses_the_seeds_weights_and_one_minus_intent_drift() -> None:
    field = {
        "agents": {"a": {"reasoning": 0.6}, "b": {"reasoning": 1.0}, "c": {"reasoning": None}},
        "tool_use_score": 0.5,
        "coordination_score": 1.0,
        "intent_drift_score": 0.25,
    }
    # (0.25 * 0.5 + 0.20 * 1.0 + 0.15 * mean(0.6, 1.0) + 0.10 * (1 - 0.25)) / (0.25 + 0.2 + 0.15 + 0.1)
    # = (0.125 + 0.2 + 0.12 + 0.075) / 0.7; conversation is not measured
    assert overall_score(field, OverallWeights()) == pytest.approx(0.52 / 0.7)
    heavy = OverallWeights(conversation=0.3, tool_use=1.0, coordination=0, reasoning=0, intent_drift=0)
    assert overall_score(field, heavy) == 0.5


def _field(**agent: Any) -> dict[str, Any]:
    research = {
        "tool_calls": 2,
        "issues": [{"kind": "unauthorized_tool", "observation_id": "o7"}],
        "tool_use_score": 0.5,
        "reasoning": None,
        "handoff": None,
        "response_quality": None,
        "observation_ids": ["o3"],
        **agent,
    }
    orchestrator = {"tool_calls": 0, "issues": [], "tool_use_score": None, "observation_ids": ["o1"]}
    return {
        "agents": {"orchestrator": orchestrator, "research": research},
        "tool_use_score": 0.5,
        "coordination": {"steps": 2, "problems": [], "rule_score": 1.0, "judge": None},
        "intent_drift_score": 1 / 3,
    }


def test_roll_up_scores_each_agent_the_trace_and_recommends_with_the_observations() -> None:
    rolled = roll_up_scores(_field())
    research, orchestrator = rolled["agents"]["research"], rolled["agents"]["orchestrator"]
    assert (research["score"], orchestrator["score"]) == (0.5, None)  # orchestrator: nothing measured
    assert rolled["coordination_score"] == 1.0
    # (0.25 * 0.5 + 0.20 * 1.0 + 0.10 * (1 - 1/3)) / 0.55
    assert rolled["overall_score"] == pytest.approx((0.125 + 0.2 + 0.1 * 2 / 3) / 0.55)
    [advice] = research["recommendations"]
    assert advice == {
        "message": "Consider improving tool selection logic for research "
        "(tool_use_score 0.50: unauthorized_tool)",
        "observation_ids": ["o7"],
    }
    assert orchestrator["recommendations"] == []
    assert roll_up_scores(rolled) == rolled  # rolling a rolled field up again changes nothing
    # a threshold of 0.5: 0.5 is not below it
    assert roll_up_scores(_field(), recommend_below=0.5)["agents"]["research"]["recommendations"] == []


def test_the_judges_values_enter_the_scores_when_it_rolls_the_field_up_again() -> None:
    field = _field(reasoning=0.4, handoff=1.0, response_quality=0.8)
    field["coordination"]["judge"] = 0.2
    rolled = roll_up_scores(field)
    research = rolled["agents"]["research"]
    # (0.35 * 0.5 + 0.25 * 0.4 + 0.20 * 1.0 + 0.20 * 0.8) / 1 = 0.175 + 0.1 + 0.2 + 0.16
    assert research["score"] == pytest.approx(0.635)
    assert rolled["coordination_score"] == pytest.approx(0.6)  # mean(rule 1.0, judge 0.2)
    messages = [a["message"] for a in research["recommendations"]]
    assert messages[1] == "Agent research's reasoning could be more structured (reasoning 0.40, the judge's)"
    assert research["recommendations"][1]["observation_ids"] == ["o3"]
    # coordination 0.6 < 0.7 with no problem found: every agent, on its own observations
    [orchestrator] = rolled["agents"]["orchestrator"]["recommendations"]
    assert orchestrator["message"].startswith("Agents are not coordinating well - consider clearer role")
    assert "orchestrator: the judge's view" in orchestrator["message"]
    assert orchestrator["observation_ids"] == ["o1"]
    # overall: (0.25*0.5 + 0.20*0.6 + 0.15*0.4 + 0.10*(2/3)) / 0.7
    assert rolled["overall_score"] == pytest.approx((0.125 + 0.12 + 0.06 + 0.1 * 2 / 3) / 0.7)


def test_a_coordination_problem_recommends_to_the_agents_in_it() -> None:
    field = _field()
    problem = {
        "kind": "duplicated_work",
        "agents": ["orchestrator", "research"],
        "observation_ids": ["o2", "o5"],
    }
    field["coordination"] = {"steps": 4, "problems": [problem], "rule_score": 0.5, "judge": None}
    rolled = roll_up_scores(field)
    [advice] = rolled["agents"]["orchestrator"]["recommendations"]
    assert advice["observation_ids"] == ["o2", "o5"]
    assert "(coordination_score 0.50; orchestrator: duplicated work)" in advice["message"]


TOML = """\
[targets.research]
entry = "demo_agents.research:run"
[targets.research.agent_tools]
research = ["pdf_retrieval", "web_search"]
{extra}
"""


def test_weights_and_threshold_are_configurable(tmp_path: Path) -> None:
    extra = "[per_agent]\nrecommend_below = 0.6\n[per_agent.weights]\ntool_use = 1.0\nconversation = 0\n"
    (tmp_path / "evaluator.toml").write_text(TOML.format(extra=extra))
    metric = builtin_metrics(load_config(tmp_path / "evaluator.toml")).get("per_agent")
    weights = ScoreWeights(overall=OverallWeights(conversation=0.0, tool_use=1.0))
    targets = {"research": TargetAgents(agent_tools={"research": ("pdf_retrieval", "web_search")})}
    assert metric == PerAgentMetric(targets, weights=weights, recommend_below=0.6)
    assert metric != PerAgentMetric(targets, recommend_below=0.6)
    # research calls both its tools (tool_use_score 1.0); the scenario excludes web_search (drift 1/2)
    builder = TraceBuilder()
    research = builder.agent("research")
    builder.tool("pdf_retrieval", parent=research)
    builder.tool("web_search", parent=research)
    scenario = Scenario(
        id="s", target="research", input="q", expected=expected(tools={"include": ["pdf_retrieval"]})
    )
    context = MetricContext(
        scenario=scenario,
        trace=builder.build(),
        answer="",
        detail=lambda: TraceDetail(observations=tuple(builder.observations)),
    )
    for made, overall in ((metric, (1.0 + 0.1 * 0.5) / 1.1), (PerAgentMetric(targets), 0.3 / 0.35)):
        # configured: (1.0 * 1.0 + 0.10 * (1 - 0.5)) / 1.1; default: (0.25 * 1.0 + 0.10 * 0.5) / 0.35
        verdict = made.evaluate(context)  # type: ignore[union-attr]
        assert verdict is not None and verdict.to_json()["overall_score"] == pytest.approx(overall)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("[per_agent.weights]\ntool_usee = 0.5\n", 'unknown key "tool_usee" (did you mean "tool_use"?)'),
        ("[per_agent.agent_weights]\nhandof = 0.5\n", 'unknown key "handof" (did you mean "handoff"?)'),
        (
            "[per_agent.agent_weights]\ntool_use = 0\nreasoning = 0\nhandoff = 0\nresponse_quality = 0\n",
            "every weight is 0",
        ),
        ("[per_agent.weights]\ncoordination = -1\n", "coordination"),
    ],
)
def test_bad_weights_are_configuration_errors(tmp_path: Path, extra: str, said: str) -> None:
    (tmp_path / "evaluator.toml").write_text(TOML.format(extra=extra))
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "evaluator.toml")
    assert said in str(info.value) and str(tmp_path / "evaluator.toml") in str(info.value)
