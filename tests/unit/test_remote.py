"""Runs rebuilt from Langfuse's scores (reports/remote.py) in a project other tools score too: only the
evaluator's own scenario scores make runs."""

from __future__ import annotations

from typing import Any

from evaluator.reports import runs_from_scores


def _score(name: str, value: Any, *, at: str = "2026-11-22T10:00:00.000Z", **changes: Any) -> dict[str, Any]:
    """A score as `GET /api/public/v3/scores?fields=details,subject` shows it (BOOLEAN as a boolean)."""
    return {
        "id": f"{name}-{at}",
        "name": name,
        "value": value,
        "dataType": "BOOLEAN" if isinstance(value, bool) else "NUMERIC",
        "timestamp": at,
        "comment": None,
        "metadata": {"run_id": "run-1", "scenario_id": "s1", "prompts": {"agents/research": 1}},
        "subject": {"kind": "trace", "id": "trace-1"},
        **changes,
    }


def test_other_tools_scores_make_no_run_even_with_run_and_scenario_metadata() -> None:
    early = "2026-11-21T09:00:00.000Z"
    foreign = [
        # another evaluator that also keys its scores on run_id / scenario_id (a run of its own before)
        _score("helpfulness", 0.3, at=early, id="x", metadata={"run_id": "exp-7", "scenario_id": "q1"}),
        _score("helpfulness", 0.3, at=early, id="y"),  # ... even in one of our runs: no figure, no timestamp
        _score("user-feedback", True, at=early, metadata=None),  # an annotation in the UI
    ]
    runs = runs_from_scores([_score("workflow_pass", True), *foreign])

    assert [run.id for run in runs] == ["run-1"]
    (run,) = runs
    assert run.started_at == "2026-11-22T10:00:00.000Z"
    assert [(r["scenario_id"], r["status"]) for r in run.results] == [("s1", "passed")]


def test_scores_of_odd_shapes_are_skipped_or_read_without_a_crash() -> None:
    odd = [
        _score("workflow_pass", True, subject="trace-2", id="a"),  # a subject that is no object
        _score("workflow_pass", True, metadata="run-1", id="b"),  # metadata that is no object
        _score(
            "workflow_pass", True, id="c", metadata={"run_id": "run-2", "scenario_id": "s1", "prompts": ["p"]}
        ),
    ]
    runs = runs_from_scores([_score("workflow_pass", True), *odd])

    assert [run.id for run in runs] == ["run-1", "run-2"]
    assert runs[1].results[0]["prompts"] == {}  # prompt versions that are no object: none known
    assert runs[1].results[0]["status"] == "passed"
