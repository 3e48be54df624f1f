"""History rows per agent prompt version and, apart, per judge prompt version, from stored results that
carry the judges' fields (quality, correctness), written through the store as a run writes them."""

from pathlib import Path

from evaluator.reports import history, local_runs
from evaluator.storage import Store
from tests.stored_runs import result, store_run


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "evaluator.db")
    store_run(
        store,
        "r1",
        [
            result("a", quality=0.6, verdict="correct", agent_version=1, judge_version=1),
            result(
                "b", workflow=False, quality=0.4, verdict="hallucination", agent_version=1, judge_version=1
            ),
        ],
        name="first",
        minute=0,
    )
    store_run(
        store,
        "r2",
        [
            result("a", quality=0.9, verdict="correct", agent_version=2, judge_version=2),
            result("b", quality=0.7, verdict="miss", agent_version=2, judge_version=2, unscored=False),
        ],
        name="second",
        minute=1,
    )
    return store


def test_agent_and_judge_prompt_versions_are_separate_rows(tmp_path: Path) -> None:
    rows = history(local_runs(_store(tmp_path)), "prompt")
    assert [(r["group"], r["key"]) for r in rows] == [
        ("agent_prompt", "agents/research@v1"),
        ("agent_prompt", "agents/research@v2"),
        ("judge_prompt", "evaluation/correctness@v1"),
        ("judge_prompt", "evaluation/correctness@v2"),
        ("judge_prompt", "evaluation/quality@v1"),
        ("judge_prompt", "evaluation/quality@v2"),
    ]
    v1, v2 = rows[0], rows[1]
    assert (v1["runs"], v1["scenarios"], v1["pass_rate"], v1["quality_mean"]) == (1, 2, 0.5, 0.5)
    assert (v1["correctness_accuracy"], v1["correctness_hallucination_rate"]) == (0.5, 0.5)
    assert v1["correctness_truthfulness"] == 0.0  # (2*1 + 0)/2 - 1
    assert v2["correctness_truthfulness"] == 0.5  # (2*1 + 1)/2 - 1
    assert v2["change"]["against"] == "agents/research@v1"
    assert v2["change"]["quality_mean"] == 0.3 and v2["change"]["pass_rate"] == 0.5
    assert v1["change"] is None
    assert v2["first_run"]["name"] == v2["last_run"]["name"] == "second"
    assert v1["sources"] == ["local"]
    judge = rows[4]
    assert (
        judge["quality_mean"] == 0.5 and judge["correctness_accuracy"] == 0.5
    )  # the judged results' figures


def test_per_run_and_per_scenario(tmp_path: Path) -> None:
    runs = local_runs(_store(tmp_path))
    by_run = history(runs, "run")
    assert [r["key"] for r in by_run] == ["first (r1)", "second (r2)"]
    assert by_run[1]["change"]["workflow_pass_rate"] == 0.5
    by_scenario = {r["key"]: r for r in history(runs, "scenario")}
    assert by_scenario["b"]["runs"] == 2 and by_scenario["b"]["pass_rate"] == 0.5
    assert by_scenario["b"]["change"] is None
