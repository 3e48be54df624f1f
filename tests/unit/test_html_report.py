"""The HTML report (reports/html.py) on runs written by hand: text from the runs that would reorder or
hide what the page shows (a right-to-left override, a zero-width space) is shown as its escape, as the
terminal shows it (tests/integration/test_report_page.py has the page in a browser)."""

from __future__ import annotations

import unicodedata
from typing import Any

from evaluator.config import CompareConfig
from evaluator.reports import RunRecord, html_report

RLO, ZWSP = "\u202e", "\u200b"
AGENT = f"research {RLO}exe.txt"  # reads "research txt.exe" where the override is obeyed
SCENARIO = f"refund{ZWSP}-policy"  # looks like "refund-policy", a different id


def _result(scenario_id: str, status: str, score: float) -> dict[str, Any]:
    entry = {"tool_calls": 2, "issues": [], "tool_use_score": score, "score": score}
    return {
        "scenario_id": scenario_id,
        "trace_id": f"trace-{scenario_id}",
        "status": status,
        "workflow": {"pass": status == "passed"},
        "per_agent": {"agents": {AGENT: entry}, "tool_calls": 2, "tool_use_score": score, "issues": 0},
        "prompts": {f"agents/{RLO}x": {"version": 1, "source": "local"}},
    }


def _dialogue(said: str) -> dict[str, Any]:
    turn = {"turn": 0, "trace_id": "t0", "input": said, "output": f"ok {RLO}dne", "state": {},
            "expected": {}, "status": "passed", "metrics": {}, "details": {}}  # fmt: skip
    return {"scenario_id": f"chat{RLO}", "status": "passed", "kind": "dialogue", "session_id": "s",
            "dialogue": {"task_completion": None}, "dialogue_details": {}, "turns": [turn]}  # fmt: skip


def _page(*, name: str) -> str:
    runs = [
        RunRecord(id="run-1", name=name, started_at="2026-11-22T10:00:00Z",
                  results=(_result(SCENARIO, "passed", 1.0), _dialogue(f"hi {ZWSP}\u2066there\u2069"))),
        RunRecord(id="run-2", name="candidate", started_at="2026-11-22T11:00:00Z",
                  results=(_result(SCENARIO, "failed", 0.5),)),
    ]  # fmt: skip
    return html_report(runs, source="local", config=CompareConfig(), generated_at="2026-11-22T12:00:00Z")


def _format_characters(text: str) -> set[str]:
    return {char for char in text if unicodedata.category(char) == "Cf"}


def test_text_that_would_reorder_or_hide_the_page_is_shown_as_its_escape() -> None:
    page = _page(name=f"nightly {RLO}2v")

    assert _format_characters(page) == set()
    assert "research \\u202eexe.txt" in page  # the agent's rows and the comparison's
    assert "refund\\u200b-policy" in page  # the scenario table and the comparison
    assert "nightly \\u202e2v" in page  # the run's name
    assert "hi \\u200b\\u2066there\\u2069" in page  # what a dialogue's user said
    assert "ok \\u202edne" in page and "chat\\u202e" in page  # its reply, its id


def test_text_from_the_runs_keeps_joiners_accents_and_emoji() -> None:
    name = "café 日本 👩\u200d👩\u200d👧"

    assert name in _page(name=name)
