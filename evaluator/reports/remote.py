"""Runs rebuilt from the scores in Langfuse (`report --source langfuse`, `compare --source langfuse`), so a
team sees runs made on other machines and in CI.

Each scenario score carries metadata `run_id`, `scenario_id`, `prompts` ({name: version}) and, for judge
scores, `judge` ({prompt, model}); its subject is the scenario's trace, an observation in it (the
per-agent scores, several of one name: a metric with `from_score_rows` reads them all), or for a
session metric's score the scenario's session. From them each scenario's result object is rebuilt
with what scores can tell: each metric of the `MetricSet` rebuilds its own field
(`Metric.from_scores`: `workflow.pass`, the trajectory modes, `answer.pass`, the quality dimensions,
the correctness verdict...), the prompt versions (source unknown), and the status: an `error` result
has only its metrics' error scores (each with an "error: ..." comment); otherwise the scenario passed
when no rebuilt field says it failed and one says it passed (the workflow, the full-workflow trajectory
and the answer check, where present). Not in scores, so absent here: latency, cost, run names (runs
are named by their id), evaluator errors (never scored) and unscored judge counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaluator.metrics import Metric, MetricSet
from evaluator.reports.runs import RunRecord
from evaluator.results import default_metrics

__all__ = ["runs_from_scores"]

_TURN = "#"  # in a dialogue turn's scenario id (`<scenario id>#<turn>`): never in a scenario's own
# a scenario's trace, an observation in it (per-agent scores), or its session (session metrics)
_SUBJECTS = frozenset({"trace", "observation", "session"})


def runs_from_scores(
    scores: Iterable[Mapping[str, Any]], metrics: MetricSet | None = None
) -> list[RunRecord]:
    """Runs (oldest first) from v3 score rows, their results rebuilt by the metrics of `metrics` (the
    built-in ones by default); scores that are not scenario scores are ignored."""
    metrics = metrics or default_metrics()
    grouped: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}
    rows: dict[tuple[str, str], list[Mapping[str, Any]]] = {}  # every score, several of a name too
    for score in {str(s.get("id")): s for s in scores}.values():
        metadata = score.get("metadata") or {}
        subject = score.get("subject") or {}
        if not isinstance(metadata, Mapping) or subject.get("kind") not in _SUBJECTS:
            continue
        run_id, scenario_id = metadata.get("run_id"), metadata.get("scenario_id")
        if isinstance(scenario_id, str) and _TURN in scenario_id:
            continue  # a dialogue turn's own scores: the dialogue is rebuilt from its session's
        if isinstance(run_id, str) and isinstance(scenario_id, str):
            rows.setdefault((run_id, scenario_id), []).append(score)
            if subject.get("kind") != "observation":  # one of a name: per agent, the metric reads rows
                grouped.setdefault(run_id, {}).setdefault(scenario_id, {})[str(score["name"])] = score
    runs = []
    for run_id, scenarios in grouped.items():
        results = tuple(
            _result(sid, by_name, metrics, rows[(run_id, sid)]) for sid, by_name in sorted(scenarios.items())
        )
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


def _errored(by_name: Mapping[str, Mapping[str, Any]], metrics: MetricSet) -> bool:
    """Whether these are the scores of a run that raised or timed out: its metrics' error scores only
    (each with an "error: ..." comment)."""
    names = {value.name for metric in metrics for value in metric.error_scores("")}
    return (
        bool(by_name)
        and set(by_name) <= names
        and all(str(score.get("comment") or "").startswith("error:") for score in by_name.values())
    )


def _status(fields: Mapping[str, Any], metrics: MetricSet) -> str:
    said = [
        metric.passed_in(field) for metric in metrics if isinstance(field := fields.get(metric.key), Mapping)
    ]
    return "passed" if True in said and False not in said else "failed"


def _trace_id(by_name: Mapping[str, Mapping[str, Any]]) -> str:
    """The trace of a scenario's scores (a session score's subject is its session, not the trace)."""
    subjects = [score.get("subject") or {} for score in by_name.values()]
    return next((str(s.get("id", "")) for s in subjects if s.get("kind") == "trace"), "")


def _field(
    metric: Metric, by_name: Mapping[str, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> Any:
    """A metric's field: from every score when it reads them all (`from_score_rows`), else by name."""
    from_rows = getattr(metric, "from_score_rows", None)  # optional: a project's metric may lack it
    return from_rows(rows) if callable(from_rows) else metric.from_scores(by_name)


def _result(
    scenario_id: str,
    by_name: Mapping[str, Mapping[str, Any]],
    metrics: MetricSet,
    rows: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    any_score = next(iter(by_name.values()))
    prompts = (any_score.get("metadata") or {}).get("prompts") or {}
    errored = _errored(by_name, metrics)
    fields = {m.key: None if errored else _field(m, by_name, rows) for m in metrics}
    status = "error" if errored else _status(fields, metrics)
    document: dict[str, Any] = {"scenario_id": scenario_id, "trace_id": _trace_id(by_name), "status": status}
    return {
        **document,
        **fields,
        "judge_status": None,
        "prompts": {
            str(name): {"version": version, "source": "unknown"}
            for name, version in prompts.items()
            if isinstance(version, int)
        },
        "latency_ms": None,
    }
