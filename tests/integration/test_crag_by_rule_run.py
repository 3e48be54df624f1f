"""CRAG's rule steps in a run without a judge model, through the command line (`evaluator run --no-judge`,
and with no endpoint): single-turn scenarios and a dialogue's turns get a miss or an exact match decided
by rule; an answer only the judge could decide is not measured; the run's CRAG figures, the dialogue's
two-errors rule and conversation score count only the decided turns (DESIGN.md, Judges and Dialogues).

The target says what the input tells it to (`say: <answer>`), so each case is worked out by hand below
from the seed (crag-llm-judge-evaluator.md: a miss phrase, then an exact match after normalisation,
then the LLM; the two-errors rule; mean(correct) - mean(hallucination))."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluator.run import TargetRequest
from tests.integration.conftest import Cli

CONFIG = """\
[targets.echo]
entry = "tests.integration.test_crag_by_rule_run:say"
[run]
timeout_seconds = 20
[store]
path = "state/evaluator.db"
"""
QUESTION = "Which approach leads Spider?"


def say(request: TargetRequest) -> str:
    """The answer the input asks for: `say: I don't know` answers "I don't know"."""
    return request.input.split("say: ", 1)[1]


def _single(sid: str, answer: str) -> str:
    return (
        f'id: {sid}\ntarget: echo\ninput: "{QUESTION} say: {answer}"\n'
        'expected:\n  answer: {ground_truth: "DIN-SQL"}\n'
    )


# The dialogue's answers, and what decides each one:
#   0 "I don't know"          miss (miss phrase)
#   1 "DIN-SQL with GPT-4"    not measured: neither a miss nor "din sql"; only a judge could decide
#   2 "din-sql"               correct, exact match
#   3 "I do not know"         miss
#   4 "I cannot answer"       miss
#   5 "DIN-SQL"               an exact match, but after 3 and 4 (two errors in a row) it counts as missed
# Decided turns: miss, correct, miss, miss, correct -> after the rule: miss, correct, miss, miss, miss.
# multi_turn_conversation_score = (1 correct - 0 hallucinations) / 5 = 0.2. Had turn 1 counted as a
# hallucination, turns 0-1 would have fired the rule and the score been (0 - 1) / 6.
DIALOGUE_ANSWERS = [
    "I don't know",
    "DIN-SQL with GPT-4",
    "din-sql",
    "I do not know",
    "I cannot answer",
    "DIN-SQL",
]


def _dialogue() -> dict[str, Any]:
    return {
        "id": "crag-dialogue",
        "target": "echo",
        "turns": [
            {"user": f"{QUESTION} say: {answer}", "expected": {"answer": {"ground_truth": "DIN-SQL"}}}
            for answer in DIALOGUE_ANSWERS
        ],
    }


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evaluator.toml").write_text(CONFIG)
    suite = tmp_path / "scenarios"
    suite.mkdir()
    (suite / "miss.yaml").write_text(_single("miss", "Sorry, I don't know."))
    (suite / "exact.yaml").write_text(_single("exact", "din-sql."))
    (suite / "semantic.yaml").write_text(_single("semantic", "It is DIN-SQL, with GPT-4."))
    (suite / "dialogue.yaml").write_text(yaml.safe_dump(_dialogue(), sort_keys=False))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    return tmp_path


def _by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["scenario_id"]: r for r in document["results"]}


def test_no_judge_decides_misses_and_exact_matches_by_rule(project: Path, cli: Cli) -> None:
    code, text = cli("run", "scenarios", "--no-judge", "--output", "results.json")
    assert code == 0, text
    document = json.loads(Path("results.json").read_text())
    results = _by_id(document)
    assert results["miss"]["correctness"]["verdict"] == "miss"
    assert results["exact"]["correctness"] == {
        "verdict": "correct",
        "exact_match": True,
        "reason": "exact match",
        "prompt": None,
        "model": None,
    }
    assert results["semantic"]["correctness"] is None
    assert results["semantic"]["judge"]["correctness"]["status"] == "skipped"
    assert "only the semantic step" in results["semantic"]["judge"]["correctness"]["reason"]
    for result in results.values():  # the LLM judges did not run, and every result says so
        assert result["judge_status"] == {"status": "skipped", "reason": "--no-judge was given"}
    # the single-turn scenarios: 2 decided (1 correct by exact match, 1 miss), 1 not judged
    crag = document["run"]["metrics"]["correctness"]
    assert (crag["total"], crag["unjudged"], crag["correct_exact"], crag["miss"]) == (2, 1, 1, 1)
    assert (crag["accuracy"], crag["missing"], crag["truthfulness_score"]) == (0.5, 0.5, 0.5)
    assert document["run"]["metrics"]["correctness_accuracy"] == 0.5
    assert document["run"]["judge"]["calls"] == 0
    assert "Correctness (2 with a verdict, 1 not judged): accuracy 0.50" in text
    assert "Judges:" not in text

    dialogue = results["crag-dialogue"]
    turns = dialogue["turns"]
    assert [t["correctness"] and t["correctness"]["verdict"] for t in turns] == [
        "miss",
        None,
        "correct",
        "miss",
        "miss",
        "correct",  # the turn's own verdict; the two-errors rule is the dialogue's
    ]
    assert turns[1]["judge"]["correctness"]["status"] == "skipped"
    assert dialogue["dialogue_details"]["crag"] == ["miss", "correct", "miss", "miss", "miss"]
    assert dialogue["dialogue"]["multi_turn_conversation_score"] == pytest.approx(0.2)
    run_crag = document["run"]["dialogue"]["crag"]
    assert run_crag == {
        "total": 5,
        "correct_exact": 1,
        "correct": 1,
        "miss": 4,
        "hallucination": 0,
        "exact_match": pytest.approx(0.2),
        "accuracy": pytest.approx(0.2),
        "missing": pytest.approx(0.8),
        "hallucination_rate": 0.0,
        "truthfulness_score": pytest.approx(0.2),  # (2 x 1 + 4) / 5 - 1
        "mean_multi_turn_conversation_score": pytest.approx(0.2),
    }
    assert document["run"]["dialogue"]["multi_turn_conversation_score"] == pytest.approx(0.2)

    with sqlite3.connect(project / "state/evaluator.db") as db:
        rows = db.execute(
            "SELECT scenario_id, trace_id, metadata FROM scores WHERE name = 'correctness'"
        ).fetchall()
        sessions = db.execute(
            "SELECT value FROM scores WHERE name = 'dialogue_multi_turn_conversation_score'"
        ).fetchall()
    decided = sorted(json.loads(metadata)["judge_decided_by"] for _, _, metadata in rows)
    # single-turn: miss, exact; the dialogue's turns 0, 2, 3, 4, 5 (their own verdicts): no score for
    # the two answers only a judge could decide
    assert decided == ["exact match", "exact match", "exact match", "miss", "miss", "miss", "miss"]
    assert {t["trace_id"] for t in turns if t["correctness"]} == {
        trace for sid, trace, _ in rows if sid == "crag-dialogue"
    }
    assert sessions == [(pytest.approx(0.2),)]


def test_with_no_endpoint_the_same_verdicts_and_how_to_enable_a_judge(project: Path, cli: Cli) -> None:
    code, text = cli(
        "run", "scenarios/miss.yaml", "scenarios/exact.yaml", "scenarios/semantic.yaml", "--output", "r.json"
    )
    assert code == 0, text
    results = _by_id(json.loads(Path("r.json").read_text()))
    assert [
        results[sid]["correctness"] and results[sid]["correctness"]["verdict"]
        for sid in ("miss", "exact", "semantic")
    ] == [
        "miss",
        "correct",
        None,
    ]
    assert "no judge endpoint is configured" in results["semantic"]["judge_status"]["reason"]
    assert "To enable them, set OPENAI_API_KEY" in text
    assert "Correctness (2 with a verdict, 1 not judged)" in text
