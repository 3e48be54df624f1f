"""From a scenario and its trace to a result: every inline metric of the run's `MetricSet`, then the pass
rule; then what the judges decide by rule, with no model (`judge.RuleJudge`: CRAG's miss and exact
match), so those verdicts exist whether or not the judges run (a judge that runs decides again).

A scenario *passes* when no verdict says it failed: the workflow passes, the trajectory (if the
scenario gives one) scores 1.0 in the seed's default mode, full workflow, and every `contains` string
occurs in the answer. Quality scores from the judge never decide pass or fail: the seeds set no
threshold for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.judge import RuleJudge
from evaluator.metrics import MetricContext, MetricSet, Verdict
from evaluator.results.builtin import default_metrics
from evaluator.results.model import EvaluatorFailure, JudgeStatus, PromptUse, ScenarioResult
from evaluator.scenarios import Scenario
from evaluator.trace import DetailSource, Trace

__all__ = ["as_evaluator_error", "error_result", "evaluate", "evaluator_error_result"]


def evaluate(
    scenario: Scenario,
    trace: Trace,
    *,
    judge_status: JudgeStatus,
    output: Any = None,
    latency_ms: float | None = None,
    prompts: Mapping[str, PromptUse] | None = None,
    finished_at: str = "",
    metrics: MetricSet | None = None,
    detail: DetailSource | None = None,
) -> ScenarioResult:
    """The result of a completed run. `output` defaults to the trace's final output; `metrics` to the
    built-in ones; `detail`: the trace's observations and usage, on demand (None: not at hand, and
    the checks that need them do not apply). A verdict's `warnings` (the workflow's) join the trace's."""
    metrics = metrics or default_metrics()
    final = output if output is not None else trace.output
    context = MetricContext(scenario=scenario, trace=trace, answer=final, detail=detail)
    verdicts = metrics.evaluate(context)
    passed = all(verdict.passed is not False for verdict in verdicts.values())
    said = (w for verdict in verdicts.values() for w in getattr(verdict, "warnings", ()))
    warnings = (*trace.warnings, *said)
    judged, judge_detail = _ruled(metrics, context)
    return ScenarioResult(
        scenario_id=scenario.id,
        trace_id=trace.id,
        status="passed" if passed else "failed",
        verdicts=verdicts,
        judge_status=judge_status,
        judged=judged,
        judge_detail=judge_detail,
        output=final,
        latency_ms=latency_ms,
        prompts=dict(prompts or {}),
        finished_at=finished_at,
        observation_count=trace.observation_count,
        handoffs=tuple(h.to_json() for h in trace.handoffs),
        warnings=tuple(dict.fromkeys(warnings)),
        metrics=metrics,
    )


def _ruled(
    metrics: MetricSet, context: MetricContext
) -> tuple[dict[str, Verdict], dict[str, dict[str, Any]]]:
    """The judges' verdicts by rule (by key) and how each judgement went (the result's `judge` field):
    a judge that applies but whose rules do not decide has a *skipped* judgement and no verdict."""
    judged: dict[str, Verdict] = {}
    detail: dict[str, dict[str, Any]] = {}
    for metric in metrics.judges:
        if not isinstance(metric, RuleJudge):
            continue
        ruled = metric.decide_by_rule(context)
        if ruled is None:
            continue
        verdict, judgement = ruled
        if verdict is not None:
            judged[metric.key] = verdict
        detail[metric.key] = judgement.to_json()
    return judged, detail


def error_result(
    scenario: Scenario,
    trace_id: str,
    message: str,
    *,
    judge_status: JudgeStatus,
    latency_ms: float | None,
    prompts: Mapping[str, PromptUse] | None = None,
    finished_at: str = "",
    metrics: MetricSet | None = None,
) -> ScenarioResult:
    """A run that raised or timed out: no verdict is drawn from a run that did not finish."""
    return ScenarioResult(
        metrics=metrics or default_metrics(),
        scenario_id=scenario.id,
        trace_id=trace_id,
        status="error",
        judge_status=judge_status,
        latency_ms=latency_ms,
        error=message,
        prompts=dict(prompts or {}),
        finished_at=finished_at,
    )


def evaluator_error_result(
    scenario: Scenario,
    trace_id: str,
    exc: BaseException,
    *,
    judge_status: JudgeStatus,
    latency_ms: float | None = None,
    prompts: Mapping[str, PromptUse] | None = None,
    finished_at: str = "",
    metrics: MetricSet | None = None,
) -> ScenarioResult:
    """The evaluator failed around this scenario: kept with its traceback, scored against nobody."""
    run = ScenarioResult(
        metrics=metrics or default_metrics(),
        scenario_id=scenario.id,
        trace_id=trace_id,
        status="error",
        judge_status=judge_status,
        latency_ms=latency_ms,
        prompts=dict(prompts or {}),
        finished_at=finished_at,
    )
    return as_evaluator_error(run, exc)


def as_evaluator_error(result: ScenarioResult, exc: BaseException) -> ScenarioResult:
    """`result` as an evaluator error: the evaluator failed around it (after drawing it, scoring it
    say), so its verdicts are dropped and only the run's facts (trace, output, latency, prompts) are
    kept. Verdicts the judges gave are dropped too, and `judge_status` says so."""
    failure = EvaluatorFailure.of(exc)
    error = f"evaluator error: {failure.type}: {failure.message}"
    judged = result.judge_status.status == "scored"
    return ScenarioResult(
        scenario_id=result.scenario_id,
        trace_id=result.trace_id,
        status="error",
        judge_status=JudgeStatus(status="unscored", reason=error) if judged else result.judge_status,
        output=result.output,
        latency_ms=result.latency_ms,
        error=error,
        prompts=dict(result.prompts),
        finished_at=result.finished_at,
        evaluator_error=failure,
        metrics=result.metrics,
    )
