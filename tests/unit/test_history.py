"""History aggregates: per run, per scenario, per prompt version."""

from typing import Any

from evaluator.reports import aggregate


def _result(scenario: str, status: str, version: int, full_workflow: float | None = None) -> dict[str, Any]:
    return {
        "scenario_id": scenario,
        "status": status,
        "trajectory": {"full_workflow": full_workflow} if full_workflow is not None else None,
        "prompts": {"agents/research": {"version": version, "source": "local"}},
    }


ROWS = [
    ("r1", "baseline", "2026-11-22T10:00:01Z", _result("a", "failed", 1, 0.0)),
    ("r1", "baseline", "2026-11-22T10:00:02Z", _result("b", "passed", 1)),
    ("r2", "r2", "2026-11-22T11:00:01Z", _result("a", "passed", 2, 1.0)),
    ("r2", "r2", "2026-11-22T11:00:02Z", _result("b", "error", 2)),
]


def test_per_prompt_version_shows_the_trend() -> None:
    rows = {row.key: row.to_json() for row in aggregate(ROWS, "prompt")}
    assert rows["agents/research@v1 (local)"] == {
        "key": "agents/research@v1 (local)",
        "results": 2,
        "passed": 1,
        "errors": 0,
        "pass_rate": 0.5,
        "full_workflow": 0.0,
        "last_status": "passed",
    }
    assert rows["agents/research@v2 (local)"]["full_workflow"] == 1.0
    assert rows["agents/research@v2 (local)"]["errors"] == 1


def test_per_run_and_per_scenario() -> None:
    runs = [row.to_json() for row in aggregate(ROWS, "run")]
    assert [r["key"] for r in runs] == ["baseline (r1)", "r2"]
    scenarios = {row.key: row.to_json() for row in aggregate(ROWS, "scenario")}
    assert scenarios["a"]["pass_rate"] == 0.5 and scenarios["a"]["full_workflow"] == 0.5
    assert scenarios["b"]["full_workflow"] is None and scenarios["b"]["last_status"] == "error"
