"""From a scenario and its trace to a verdict: workflow, trajectory and rule-based answer checks.

A scenario *passes* when the workflow passes, the trajectory (if the scenario gives one) scores 1.0 in
the seed's default mode, full workflow, and every `contains` string occurs in the answer. Quality
scores from the judge never decide pass or fail: the seeds set no threshold for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evaluator.results import AnswerCheck, JudgeStatus, PromptUse, ScenarioResult
from evaluator.scenario import Scenario
from evaluator.trace import Trace
from evaluator.trajectory import score_trajectory
from evaluator.workflow import WorkflowValidator


def answer_text(output: Any) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def check_answer(contains: tuple[str, ...], output: Any) -> AnswerCheck:
    text = answer_text(output)
    return AnswerCheck(contains=contains, missing=tuple(s for s in contains if s not in text))


def evaluate(
    scenario: Scenario,
    trace: Trace,
    *,
    judge_status: JudgeStatus,
    output: Any = None,
    latency_ms: float | None = None,
    prompts: Mapping[str, PromptUse] | None = None,
    finished_at: str = "",
) -> ScenarioResult:
    """The result of a completed run. `output` defaults to the trace's final output."""
    expected = scenario.expected
    workflow = WorkflowValidator().validate(expected, trace)
    trajectory = score_trajectory(expected.trajectory, trace) if expected.trajectory else None
    final = output if output is not None else trace.output
    answer = (
        check_answer(expected.answer.contains, final)
        if expected.answer and expected.answer.contains
        else None
    )
    passed = (
        workflow.passed and (trajectory is None or trajectory.passed) and (answer is None or answer.passed)
    )
    return ScenarioResult(
        scenario_id=scenario.id,
        trace_id=trace.id,
        status="passed" if passed else "failed",
        workflow=workflow,
        trajectory=trajectory,
        answer=answer,
        judge_status=judge_status,
        output=final,
        latency_ms=latency_ms,
        prompts=dict(prompts or {}),
        finished_at=finished_at,
        observation_count=trace.observation_count,
    )


def error_result(
    scenario: Scenario,
    trace_id: str,
    message: str,
    *,
    judge_status: JudgeStatus,
    latency_ms: float | None,
    prompts: Mapping[str, PromptUse] | None = None,
    finished_at: str = "",
) -> ScenarioResult:
    """A run that raised or timed out: no verdict is drawn from a run that did not finish."""
    return ScenarioResult(
        scenario_id=scenario.id,
        trace_id=trace_id,
        status="error",
        workflow=None,
        trajectory=None,
        answer=None,
        judge_status=judge_status,
        latency_ms=latency_ms,
        error=message,
        prompts=dict(prompts or {}),
        finished_at=finished_at,
    )
