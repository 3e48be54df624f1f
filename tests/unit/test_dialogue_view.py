"""The HTML report's dialogue view (reports/dialogues.py) on result objects written by hand: what failed
on a turn, in words, for each kind of failure DESIGN.md's turn has; and a page of many dialogues."""

from __future__ import annotations

from typing import Any

from evaluator.reports import RunRecord
from evaluator.reports.dialogues import dialogues_html, turn_problems
from tests.dialogue_page import dialogue_sections

MEASURED_NOTHING = dict.fromkeys(
    ("domain_accuracy", "intent_accuracy", "act_accuracy", "slot_accuracy", "jga", "slot_hallucination_rate",
     "entity_hallucination_rate", "policy_compliant", "system_correct"),
)  # fmt: skip


def turn(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "turn": 0, "trace_id": "t0", "input": "hi", "output": "hello", "state": {}, "expected": {},
        "status": "failed", "metrics": dict(MEASURED_NOTHING), "details": {}, "workflow": None,
        "trajectory": None, "answer": None, "quality": None, "correctness": None, "error": None,
    }  # fmt: skip
    return base | fields


def test_each_failure_of_a_turn_is_named_with_its_reason() -> None:
    failing = turn(
        workflow={
            "pass": False,
            "agents": {"missing": ["policy"], "unexpected": []},
            "tools": {"missing": [], "unexpected": ["book_hotel"]},
        },
        trajectory={"expected": ["search", "book"], "actual": ["book"], "full_workflow": 0.0,
                    "flow": {"expected": "booking", "actual": "triage"}},
        answer={"pass": False, "missing": ["Acorn"]},
        correctness={"verdict": "hallucination", "reason": "names a closed hotel"},
        metrics=MEASURED_NOTHING | {"intent_accuracy": 0.0, "policy_compliant": 0.0, "jga": 1.0,
                                    "slot_hallucination_rate": 0.5, "entity_hallucination_rate": 1.0,
                                    "system_correct": 0.0},
        details={
            "intent_accuracy": {"reason": ""},
            "policy_compliant": {"reason": "book_hotel without bookstay"},
            "slot_hallucination_rate": {"hallucinated": ["hotel-area=north"], "checked": 2},
            "entity_hallucination_rate": {"hallucinated": ["Grand Palace"], "checked": 1},
            "system_correct": {"reason": "hallucinated Grand Palace; book_hotel without bookstay"},
        },
    )  # fmt: skip
    assert turn_problems(failing) == [
        "workflow: missing agents policy; unexpected tools book_hotel",
        "trajectory: path book, expected search > book; flow triage (expected booking)",
        "answer lacks 'Acorn'",
        "correctness: hallucination (names a closed hotel)",
        "intent differs",
        "policy violated: book_hotel without bookstay",
        "hallucinated slots: hotel-area=north",
        "hallucinated entities: Grand Palace",
        "not system-correct: hallucinated Grand Palace; book_hotel without bookstay",
    ]
    assert turn_problems(turn(status="error", error="RuntimeError: down")) == ["error: RuntimeError: down"]
    assert turn_problems(turn(status="passed", metrics=MEASURED_NOTHING | {"jga": 1.0})) == []


def dialogue(sid: str, status: str) -> dict[str, Any]:
    return {"scenario_id": sid, "status": status, "kind": "dialogue", "session_id": f"r:{sid}",
            "dialogue": {"task_completion": None}, "dialogue_details": {},
            "turns": [turn(status=status), turn(turn=1, status="not run")]}  # fmt: skip


def test_a_run_of_many_dialogues_shows_the_failed_ones_first_and_at_most_a_hundred() -> None:
    results = tuple(dialogue(f"d{n:03}", "failed" if n % 50 == 7 else "passed") for n in range(150))
    run = RunRecord(id="r", name="r", started_at="2026-11-25T10:00:00Z", results=results)
    page = dialogues_html([run])
    shown = dialogue_sections(page)
    assert len(shown) == 100 and "The first 100 are shown, failed ones first" in page
    assert [d["scenario"] for d in shown[:3]] == ["d007", "d057", "d107"]
    assert all(d["status"] == "passed" for d in shown[3:])
    assert [t["status"] for t in shown[0]["turns"]] == ["failed", "not run"]
    assert "3 of 150 dialogues" not in page and "147 of 150 dialogues passed" in page


def test_no_dialogue_no_section() -> None:
    run = RunRecord(id="r", name="r", started_at="x", results=({"scenario_id": "s", "status": "passed"},))
    assert dialogues_html([run]) == ""


def test_an_expected_domain_given_by_the_intent_is_shown_as_such() -> None:
    """The domain a turn is compared on defaults to its intent's (`book_hotel` -> hotel): the expected
    column says so instead of "-" beside a verdict; the reported column never derives one."""
    asked = turn(
        state={"intent": "book_restaurant"},
        expected={"intent": "book_hotel"},
        metrics=MEASURED_NOTHING | {"domain_accuracy": None},
    )
    run = RunRecord(
        id="r", name="r", started_at="x", results=({**dialogue("d", "failed"), "turns": [asked]},)
    )
    row = dialogues_html([run]).split('<tr data-key="domain">', 1)[1].split("</tr>", 1)[0]
    reported, expected = row.split("<td>")[2:4]
    assert expected.startswith('hotel <span class="note">(from the intent)</span>')
    assert reported.startswith('<span class="missing">-</span>')
