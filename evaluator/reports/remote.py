"""Runs rebuilt from the scores in Langfuse (`report --source langfuse`, `compare --source langfuse`), so a
team sees runs made on other machines and in CI.

Each scenario score carries metadata `run_id`, `scenario_id`, `prompts` ({name: version}) and, for judge
scores, `judge` ({prompt, model}); its subject is the scenario's trace. From them each scenario's result
object is rebuilt with what scores can tell: `workflow.pass`, the trajectory modes, `answer.pass`, the
quality dimensions, the correctness verdict, the prompt versions (source unknown), and the status (an
`error` result has only `workflow_pass` = 0 with an "error: ..." comment; otherwise the scenario passed
when the workflow, the full-workflow trajectory and the answer check, where present, all passed). Not in
scores, so absent here: latency, cost, run names (runs are named by their id), evaluator errors (never
scored) and unscored judge counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.reports.runs import RunRecord
from evaluator.results import QUALITY_DIMENSIONS

__all__ = ["runs_from_scores"]

_TRAJECTORY_PREFIX = "trajectory_"


def runs_from_scores(scores: Iterable[Mapping[str, Any]]) -> list[RunRecord]:
    """Runs (oldest first) from v3 score rows; scores that are not scenario scores are ignored."""
    grouped: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}
    for score in {str(s.get("id")): s for s in scores}.values():
        metadata = score.get("metadata") or {}
        subject = score.get("subject") or {}
        if not isinstance(metadata, Mapping) or subject.get("kind") != "trace":
            continue
        run_id, scenario_id = metadata.get("run_id"), metadata.get("scenario_id")
        if isinstance(run_id, str) and isinstance(scenario_id, str):
            grouped.setdefault(run_id, {}).setdefault(scenario_id, {})[str(score["name"])] = score
    runs = []
    for run_id, scenarios in grouped.items():
        results = tuple(_result(sid, by_name) for sid, by_name in sorted(scenarios.items()))
        stamps = sorted(str(s.get("timestamp")) for by_name in scenarios.values() for s in by_name.values())
        runs.append(
            RunRecord(
                id=run_id,
                name=run_id,
                started_at=stamps[0],
                finished_at=stamps[-1],
                info={"source": "langfuse"},
                results=results,
            )
        )
    return sorted(runs, key=lambda run: (run.started_at, run.id))


def _flag(by_name: Mapping[str, Mapping[str, Any]], name: str) -> bool | None:
    score = by_name.get(name)
    return None if score is None else bool(score.get("value"))


def _number(by_name: Mapping[str, Mapping[str, Any]], name: str) -> float | None:
    value = by_name.get(name, {}).get("value")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _judge(score: Mapping[str, Any]) -> dict[str, Any]:
    judge = (score.get("metadata") or {}).get("judge") or {}
    return {"prompt": judge.get("prompt"), "model": judge.get("model")} if isinstance(judge, Mapping) else {}


def _status(by_name: Mapping[str, Mapping[str, Any]]) -> str:
    workflow = by_name.get("workflow_pass", {})
    if len(by_name) == 1 and str(workflow.get("comment") or "").startswith("error:"):
        return "error"
    checks = (_flag(by_name, "workflow_pass"), _number(by_name, "trajectory_full_workflow"))
    answer = _flag(by_name, "answer_contains")
    passed = checks[0] is True and checks[1] in (None, 1.0) and answer in (None, True)
    return "passed" if passed else "failed"


def _result(scenario_id: str, by_name: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    any_score = next(iter(by_name.values()))
    prompts = (any_score.get("metadata") or {}).get("prompts") or {}
    trajectory = {
        name.removeprefix(_TRAJECTORY_PREFIX): value
        for name in by_name
        if name.startswith(_TRAJECTORY_PREFIX) and (value := _number(by_name, name)) is not None
    }
    quality = {d: v for d in QUALITY_DIMENSIONS if (v := _number(by_name, f"quality_{d}")) is not None}
    correctness = by_name.get("correctness")
    status = _status(by_name)
    workflow = _flag(by_name, "workflow_pass")
    return {
        "scenario_id": scenario_id,
        "trace_id": str((any_score.get("subject") or {}).get("id", "")),
        "status": status,
        "workflow": {"pass": workflow} if workflow is not None and status != "error" else None,
        "trajectory": trajectory or None,
        "answer": {"pass": answer} if (answer := _flag(by_name, "answer_contains")) is not None else None,
        "quality": {**quality, **_judge(by_name[f"quality_{next(iter(quality))}"])} if quality else None,
        "correctness": {"verdict": str(correctness.get("value")).lower(), **_judge(correctness)}
        if correctness is not None
        else None,
        "judge_status": None,
        "prompts": {
            str(name): {"version": version, "source": "unknown"}
            for name, version in prompts.items()
            if isinstance(version, int)
        },
        "latency_ms": None,
    }
