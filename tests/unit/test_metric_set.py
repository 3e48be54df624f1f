"""metrics/metric_set.py and metrics/base.py: one shape for rule checks and judges, the run's MetricSet,
session metrics from their traces' verdicts, and what a metric declares reaching scores and the gate."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluator.config import CompareConfig
from evaluator.errors import ConfigError
from evaluator.judge import (
    CorrectnessReply,
    FakeJudgeModel,
    Judgement,
    JudgeRuntime,
    Judges,
    PromptRef,
    RetryPolicy,
)
from evaluator.langfuse.scores import _score_body
from evaluator.metrics import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
    SessionContext,
    Verdict,
    number_at,
)
from evaluator.prompts import PromptLibrary
from evaluator.reports.compare import checks
from evaluator.results import JudgeStatus, builtin_metrics, default_metrics, evaluate, score_id, scores_for
from tests.builders import scenario, trace_of

SKIPPED = JudgeStatus(status="skipped", reason="test")
PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


@dataclass(frozen=True, kw_only=True)
class _Flag:
    name: str
    value: bool

    @property
    def passed(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.value}

    def scores(self) -> list[ScoreValue]:
        return [ScoreValue(name=self.name, value=float(self.value))]

    def problems(self) -> list[str]:
        return []


class _AllPassed(MetricBase):
    """A session metric: whether every trace of the session passed its workflow."""

    key = "all_passed"
    level = "session"
    definitions = (ScoreDefinition(name="all_passed", data_type="BOOLEAN", description="-"),)
    figures = (
        Figure(name="all_passed_rate", value=number_at("all_passed", "rate"), rate=True, level="session"),
    )

    def evaluate_session(self, context: SessionContext) -> _Flag:
        passed = [t["workflow"].passed for t in context.traces if "workflow" in t]
        return _Flag(name="all_passed", value=all(passed))


class _Gated(MetricBase):
    key = "gated"
    figures = (Figure(name="gated_rate", rate=True, gate=Gate(label="gated rate", threshold=5.0)),)


def test_the_built_in_figures_keep_their_names_order_and_kinds() -> None:
    metrics = default_metrics()
    assert metrics.keys == ("workflow", "trajectory", "answer", "quality", "correctness")
    assert metrics.figure_names == (
        "pass_rate",
        "workflow_pass_rate",
        "trajectory_partial_path",
        "trajectory_full_path",
        "trajectory_path_nodes",
        "trajectory_full_workflow",
        "quality_answer_quality",
        "quality_factual_correctness",
        "quality_completeness",
        "quality_mean",
        "correctness_accuracy",
        "correctness_hallucination_rate",
        "correctness_missing_rate",
        "correctness_truthfulness",
        "latency_ms",
        "cost",
    )
    assert metrics.rates == {
        "pass_rate",
        "workflow_pass_rate",
        "trajectory_partial_path",
        "trajectory_full_path",
        "trajectory_path_nodes",
        "trajectory_full_workflow",
        "correctness_accuracy",
        "correctness_hallucination_rate",
        "correctness_missing_rate",
    }
    assert [(c.figure, c.threshold) for c in checks(CompareConfig(), metrics)] == [
        ("workflow_pass_rate", 2.0),
        ("trajectory_full_workflow", 3.0),
        ("quality_mean", 0.1),
        ("correctness_accuracy", 2.0),
        ("latency_ms", 20.0),
    ]


def test_two_metrics_cannot_share_a_key_a_score_or_a_figure() -> None:
    with pytest.raises(ConfigError, match="metric key 'gated'"):
        builtin_metrics(extra=[_Gated(), _Gated()])

    class _Clash(MetricBase):
        key = "clash"
        definitions = (ScoreDefinition(name="workflow_pass", data_type="BOOLEAN", description="-"),)

    with pytest.raises(ConfigError, match="score name 'workflow_pass'"):
        builtin_metrics(extra=[_Clash()])


def test_a_session_metric_is_drawn_from_its_traces_verdicts_and_scored_on_the_session() -> None:
    metrics = builtin_metrics(extra=[_AllPassed()])
    sc = scenario(expected={"agents": {"include": ["research"]}})
    ok = evaluate(sc, trace_of(["research"], []), judge_status=SKIPPED, metrics=metrics)
    bad = evaluate(sc, trace_of([], []), judge_status=SKIPPED, metrics=metrics)
    assert ok.to_json()["all_passed"] == {"ok": True} and bad.to_json()["all_passed"] == {"ok": False}
    [session] = [s for s in scores_for(bad, run_id="r") if s.name == "all_passed"]
    assert session.session_id == "r:s1" and session.trace_id == bad.trace_id
    assert session.id == score_id("r", "r:s1", "all_passed")
    body = _score_body(session)
    assert body["sessionId"] == "r:s1" and "traceId" not in body
    [trace_score] = [s for s in scores_for(bad, run_id="r") if s.name == "workflow_pass"]
    assert trace_score.session_id is None and _score_body(trace_score)["traceId"] == bad.trace_id


def test_a_gate_takes_its_threshold_from_compare_thresholds_else_its_own() -> None:
    metrics = builtin_metrics(extra=[_Gated()])
    own = {c.figure: c.threshold for c in checks(CompareConfig(), metrics)}
    configured = {c.figure: c.threshold for c in checks(CompareConfig(thresholds={"gated_rate": 9}), metrics)}
    assert own["gated_rate"] == 5.0 and configured["gated_rate"] == 9.0
    assert list(own)[-2:] == ["gated_rate", "latency_ms"]  # in the figures' order


def test_a_built_in_gate_takes_its_compare_setting_else_compare_thresholds_else_its_metrics_own() -> None:
    # the [compare] keys default to unset: the metric's gate holds the default (spelled once)
    def threshold(config: CompareConfig) -> float:
        [check] = [c for c in checks(config) if c.figure == "workflow_pass_rate"]
        return check.threshold

    assert CompareConfig().workflow_pass_rate_drop is None
    assert threshold(CompareConfig()) == 2.0
    assert threshold(CompareConfig(thresholds={"workflow_pass_rate": 4})) == 4.0
    assert threshold(CompareConfig(workflow_pass_rate_drop=1, thresholds={"workflow_pass_rate": 4})) == 1.0


class _Agrees(MetricBase):
    """A judge of its own: asks the correctness prompt whether the answer agrees with `criteria`."""

    key = "agrees"
    stage = "judge"
    prompt_name = "evaluation/correctness"
    definitions = (ScoreDefinition(name="agrees", data_type="BOOLEAN", description="-"),)

    def applies(self, scenario: Any) -> bool:
        return scenario.expected.answer is not None and bool(scenario.expected.answer.criteria)

    def prompt(self, scenario: Any) -> PromptRef:
        return PromptRef(name=self.prompt_name)

    def judge(
        self, context: MetricContext, runtime: JudgeRuntime, run_id: str
    ) -> tuple[Verdict | None, Judgement]:
        variables = {"input": "q", "answer": str(context.answer), "ground_truth": "x"}
        reply, judgement = runtime.ask(
            self.key,
            context,
            run_id=run_id,
            prompt=self.prompt(context.scenario),
            variables=variables,
            reply_type=CorrectnessReply,
        )
        if not isinstance(reply, CorrectnessReply):
            return None, judgement
        return _Flag(name="agrees", value=reply.verdict == "CORRECT"), judgement


def test_a_judge_of_its_own_runs_through_the_shared_runtime() -> None:
    fake = FakeJudgeModel([json.dumps({"verdict": "CORRECT", "reason": "r"})])
    judges = Judges(
        model=fake,
        prompts=PromptLibrary(PROMPTS),
        retry=RetryPolicy(sleep=lambda _: None),
        metrics=[_Agrees()],
    )
    sc = scenario(expected={"answer": {"criteria": "c"}})
    outcome = judges.judge(sc, "an answer", trace_of([], []), run_id="r")
    assert outcome.judged["agrees"].to_json() == {"ok": True}
    assert outcome.judgements["agrees"].prompt is not None and len(fake.calls) == 1
    assert outcome.status.status == "scored"


class _Weighed(MetricBase):
    """A figure whose results weigh what their `w` says."""

    key = "weighed"
    figures = (
        Figure(
            name="weighed_rate",
            value=number_at("weighed", "v"),
            weight=lambda document: float(document["weighed"]["w"]),
            rate=True,
            gate=Gate(label="weighed rate", threshold=5.0),
        ),
    )


def test_a_weighted_figure_is_the_weighted_mean_and_no_weight_is_not_measured() -> None:
    """Summary and compare alike: (1 x 3 + 0 x 1) / 4 = 0.75, not the plain mean 0.5; when every
    weight is 0 the figure is not measured (None), not a division by zero."""
    from evaluator.metrics import MetricSet, weighted_mean
    from evaluator.reports import RunRecord
    from evaluator.reports.compare import compare_runs

    metrics = MetricSet((_Weighed(),))

    def results(*pairs: tuple[float, float]) -> tuple[dict[str, Any], ...]:
        return tuple(
            {"scenario_id": f"s{n}", "status": "passed", "weighed": {"v": v, "w": w}}
            for n, (v, w) in enumerate(pairs)
        )

    assert weighted_mean([1.0, 0.0], [3.0, 1.0]) == 0.75 and weighted_mean([1.0], [0.0]) is None
    assert weighted_mean([]) is None and weighted_mean([1.0, 0.0]) == 0.5
    assert metrics.summarize(results((1.0, 3.0), (0.0, 1.0)))["weighed_rate"] == 0.75
    base = RunRecord(id="a", name="a", started_at="x", results=results((1.0, 3.0), (0.0, 1.0)))

    def weighed(candidate: RunRecord) -> dict[str, Any]:
        document = compare_runs(base, candidate, CompareConfig(), metrics=metrics)
        return next(c for c in document["checks"] if c["figure"] == "weighed_rate")

    check = weighed(RunRecord(id="b", name="b", started_at="y", results=results((1.0, 1.0), (0.0, 3.0))))
    assert (check["baseline"], check["candidate"], check["status"]) == (0.75, 0.25, "regression")
    check = weighed(RunRecord(id="c", name="c", started_at="z", results=results((1.0, 0.0), (0.0, 0.0))))
    assert (check["candidate"], check["status"]) == (None, "not measured")
