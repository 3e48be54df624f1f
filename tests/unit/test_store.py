"""The SQLite store: results and scores survive, re-recording never duplicates, the outbox works."""

from pathlib import Path

from evaluator.evaluation import evaluate
from evaluator.results import JudgeStatus, RunInfo
from evaluator.scores import scores_for
from evaluator.store import Store
from tests.builders import scenario, trace_of


def test_record_is_durable_idempotent_and_tracks_unsent(tmp_path: Path) -> None:
    path = tmp_path / "db" / "evaluator.db"
    store = Store(path)
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00Z")
    store.start_run(run)
    result = evaluate(
        scenario(expected={"tools": {"include": ["a"]}}),
        trace_of(["o"], ["a"]),
        judge_status=JudgeStatus(status="skipped", reason="t"),
        finished_at="2026-11-22T10:00:01Z",
    )
    scores = scores_for(result, run_id=run.id)
    store.record(run.id, result, scores, outbox=True)
    store.record(run.id, result, scores, outbox=True)  # a retry replaces, never duplicates
    store.mark_sent([scores[0].id], "2026-11-22T10:00:02Z")
    store.record(run.id, result, scores, outbox=True)  # re-recording keeps what was already sent
    store.close()

    reopened = Store(path)
    assert [r["scenario_id"] for r in reopened.results("run-1")] == ["s1"]
    assert reopened.count_scores() == len(scores) == 3
    assert reopened.count_scores(unsent_only=True) == 2
    assert {s.id for s in reopened.unsent_scores()} == {s.id for s in scores[1:]}
    assert reopened.unsent_scores()[0].metadata["run_id"] == "run-1"


def test_in_memory_store() -> None:
    store = Store(None)
    assert store.count_scores() == 0


def test_embedded_scores_are_never_in_the_outbox() -> None:
    store = Store(None)
    result = evaluate(
        scenario(),
        trace_of(["o"], []),
        judge_status=JudgeStatus(status="skipped", reason="t"),
        finished_at="2026-11-22T10:00:01Z",
    )
    store.record("embedded-run", result, scores_for(result, run_id="embedded-run"), outbox=False)
    assert store.count_scores() == 3
    assert store.count_scores(unsent_only=True) == 0
    assert store.unsent_scores() == []
