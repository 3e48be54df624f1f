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


def test_the_terminal_s_dialogue_table_counts_the_dialogues_of_each_row() -> None:
    """A run of two single-turn scenarios and one dialogue: its row in the scenario table counts 3
    scenarios, its row in the dialogue table 1 dialogue (with the dialogue's figures)."""
    from rich.console import Console

    from evaluator.reports import RunRecord, history_tables
    from evaluator.results import default_metrics, with_dialogues

    single = {"scenario_id": "s", "status": "passed", "prompts": {}}
    turns = [{"metrics": {"jga": 1.0}}, {"metrics": {"jga": 0.0}}]
    talk = {
        "scenario_id": "d", "status": "failed", "kind": "dialogue", "prompts": {},
        "dialogue": {"jga": 0.5, "task_completion": 1.0}, "turns": turns,
    }  # fmt: skip
    run = RunRecord(
        id="r",
        name="r",
        started_at="2026-11-28T10:00:00Z",
        results=(single, {**single, "scenario_id": "t"}, talk),
    )
    metrics = with_dialogues(default_metrics())
    console = Console(record=True, width=300)
    for table in history_tables(history([run], "run", metrics), metrics):
        console.print(table)
    text = console.export_text()
    scenarios, dialogues = text.split("Per run: dialogues")
    rows = [line for line in scenarios.splitlines() if line.startswith("│ r")]
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "3"]]
    row = next(line for line in dialogues.splitlines() if line.startswith("│ r"))
    assert [cell.strip() for cell in row.split("│")[2:6]] == ["1", "1", "100%", "50%"]


def test_a_run_changes_from_the_latest_run_before_it_with_a_scenario_in_common(tmp_path: Path) -> None:
    # r1, r2 and r4 run scenarios a and b, r3 (between them) another suite's c: r4 changed from r2, not
    # r3; r3 shares nothing with the runs before it, so it has no change at all
    store = _store(tmp_path)
    store_run(store, "r3", [result("c", workflow=False)], name="other-suite", minute=2)
    store_run(store, "r4", [result("a"), result("b")], name="third", minute=3)
    by_run = {r["key"]: r for r in history(local_runs(store), "run")}
    assert by_run["other-suite (r3)"]["change"] is None
    assert by_run["third (r4)"]["change"]["against"] == "second (r2)"
    assert by_run["third (r4)"]["change"]["workflow_pass_rate"] == 0.0  # 1.0 in both, not 1.0 - 0.0
