"""Dialogues rebuilt from their scores (reports/remote.py, `report --source langfuse`): each turn from its
trace's scores, as the local result has it, including a dialogue a turn of which raised (before any
session score exists, when it was the first). The score rows are the v3 API's shape of the very scores
the run posts (`scores_for`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluator.reports import runs_from_scores
from evaluator.results import Score, default_metrics, scores_for, with_dialogues
from evaluator.run import run_suite
from evaluator.scenarios import Scenario
from tests.integration import dialogue_targets

HOTEL = {
    "user": "A hotel for 2 people on Saturday",
    "expected": {"intent": "book_hotel", "action": "request"},
}
BOOK = {"user": "Book it", "expected": {"action": "book"}}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    prompts = Path(__file__).resolve().parents[2] / "prompts"
    (tmp_path / "evaluator.toml").write_text(
        f'[store]\npath = "state/evaluator.db"\n[prompts]\ndir = "{prompts}"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    dialogue_targets.calls.clear()
    return tmp_path


def _row(score: Score) -> dict[str, Any]:
    """A score as `GET /api/public/v3/scores?fields=details,subject` shows it."""
    subject = (
        {"kind": "session", "id": score.session_id}
        if score.session_id
        else {"kind": "observation", "id": score.observation_id}
        if score.observation_id
        else {"kind": "trace", "id": score.trace_id}
    )
    value = bool(score.value) if score.data_type == "BOOLEAN" else score.value
    return {
        "id": score.id,
        "name": score.name,
        "value": value,
        "dataType": score.data_type,
        "comment": score.comment,
        "metadata": dict(score.metadata),
        "timestamp": score.timestamp,
        "subject": subject,
    }


def _both(turns: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the local result object, the one rebuilt from its scores) of one dialogue run."""
    scenario = Scenario.model_validate({"id": "talk", "target": "plain", "turns": turns})
    suite = run_suite(scenarios=[scenario], targets={"plain": dialogue_targets.plain})
    [result] = suite.results
    rows = [_row(score) for score in scores_for(result, run_id=suite.run.id)]
    [run] = runs_from_scores(rows, with_dialogues(default_metrics()))
    [rebuilt] = run.results
    return result.to_json(), dict(rebuilt)


def test_a_dialogue_whose_second_turn_raised(project: Path) -> None:
    """Turn 0 passes (intent and action as expected), turn 1 raises: the dialogue is an error, its turn
    0 rebuilt with the local figures, turn 1 an error with its message; turn 2 never ran (no score)."""
    local, rebuilt = _both([HOTEL, {"user": "crash"}, BOOK])
    assert local["status"] == rebuilt["status"] == "error"
    assert rebuilt["error"] == local["error"] == "turn 1: RuntimeError: the concierge crashed"
    assert rebuilt["kind"] == "dialogue" and rebuilt["session_id"] == local["session_id"]
    assert rebuilt["trace_id"] == local["trace_id"] == local["turns"][0]["trace_id"]
    assert [t["status"] for t in rebuilt["turns"]] == ["passed", "error"]
    first = rebuilt["turns"][0]
    assert first["metrics"] == local["turns"][0]["metrics"]
    assert first["metrics"]["intent_accuracy"] == 1.0 and first["metrics"]["domain_accuracy"] is None
    assert first["workflow"] == {"pass": True} and first["trace_id"] == local["turns"][0]["trace_id"]
    assert rebuilt["turns"][1]["error"] == "RuntimeError: the concierge crashed"
    assert rebuilt["dialogue"] == {k: v for k, v in local["dialogue"].items() if v is not None}
    assert "input" not in first and "state" not in first  # scores carry no messages or states


def test_a_dialogue_whose_first_turn_raised_has_no_session_score_but_is_rebuilt(project: Path) -> None:
    local, rebuilt = _both([{"user": "crash"}, BOOK])
    assert local["dialogue"] is None  # no turn ran to its end: no dialogue figure, no session score
    assert (rebuilt["status"], rebuilt["kind"], rebuilt["dialogue"]) == ("error", "dialogue", None)
    assert [t["status"] for t in rebuilt["turns"]] == ["error"]
    assert rebuilt["error"] == local["error"] == "turn 0: RuntimeError: the concierge crashed"


def test_a_wrong_action_fails_the_rebuilt_turn(project: Path) -> None:
    """Turn 1 expects `book` (and its concierge agent); the plain target books only on "book it", so
    "Book now" gets `request`: the action differs while no deciding figure is 0, and only
    `turn_system_correct`'s comment names it."""
    local, rebuilt = _both(
        [HOTEL, {"user": "Book now", "expected": {"action": "book", "agents": {"include": ["concierge"]}}}]
    )
    assert [t["status"] for t in local["turns"]] == ["passed", "failed"]
    assert [t["status"] for t in rebuilt["turns"]] == ["passed", "failed"]
    assert rebuilt["turns"][1]["details"]["system_correct"] == {"reason": "action request instead of book"}
    assert rebuilt["status"] == local["status"] == "failed"


def test_a_dialogue_that_ended_an_error_gets_dialogue_pass_0_with_the_error_so_dashboards_keep_it(
    project: Path,
) -> None:
    scenario = Scenario.model_validate(
        {"id": "talk", "target": "plain", "turns": [HOTEL, {"user": "crash"}, BOOK]}
    )
    suite = run_suite(scenarios=[scenario], targets={"plain": dialogue_targets.plain})
    [result] = suite.results
    [outcome] = [s for s in scores_for(result, run_id=suite.run.id) if s.name == "dialogue_pass"]
    assert result.dialogue is not None
    assert (outcome.value, outcome.session_id) == (0.0, result.dialogue.session_id)
    assert outcome.comment == "error: turn 1: RuntimeError: the concierge crashed"
