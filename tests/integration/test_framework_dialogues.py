"""Dialogues against real frameworks built as their docs build a multi-turn conversation
(tests/integration/framework_dialogue_targets.py): each turn is judged on its own trace and its own
reply, not on what the framework's memory carries over from the earlier turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.run import run_suite
from evaluator.scenarios import Scenario
from tests.integration import framework_dialogue_targets

CONFIG = """\
[targets.concierge]
entry = "tests.integration.framework_dialogue_targets:concierge"
entities = "db.json"
[targets.refunds]
entry = "tests.integration.framework_dialogue_targets:refunds"
[targets.helper]
entry = "tests.integration.framework_dialogue_targets:helper"
[targets.approving]
entry = "tests.integration.framework_dialogue_targets:approving"
[run]
timeout_seconds = 30
[store]
path = "state/evaluator.db"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evaluator.toml").write_text(CONFIG)
    names = ["Acorn Guest House", "Hamilton Lodge", "Moderate Inn"]
    (tmp_path / "db.json").write_text(json.dumps(names))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    framework_dialogue_targets.histories.clear()
    return tmp_path


def _dialogue(sid: str, target: str, turns: list[dict[str, Any]], **more: Any) -> Scenario:
    return Scenario.model_validate({"id": sid, "target": target, "turns": turns, **more})


def test_a_checkpointed_agent_returning_its_state_is_judged_on_the_turns_reply(project: Path) -> None:
    """The prebuilt agent returns its whole state, which holds every turn's messages. Worked out by
    hand: turn 0 searches and names Acorn and Hamilton (both returned: entity hallucination 0/2);
    turn 1 runs no tool (not measured; the checkpoint's earlier tool call is not this turn's); turn 2
    searches again and names the same two (0/2), though the state also holds the user's "Moderate
    Inn" of turn 1. The phone number was only ever in the tool's output, never in a reply: the
    inform goal is not completed. The next turn's history holds the reply, not the state."""
    turns = [
        {"user": "Hotels in the north?", "expected": {"tools": {"include": ["search_hotels"]}}},
        {"user": "Is the Moderate Inn nicer?", "expected": {"tools": {"exclude": ["search_hotels"]}}},
        {"user": "Hotels in the north, again?", "expected": {"tools": {"include": ["search_hotels"]}}},
    ]
    suite = run_suite(scenarios=[_dialogue("memory", "concierge", turns, goal={"inform": ["01223 356555"]})])
    [result] = suite.results
    document = result.to_json()
    assert [t["status"] for t in document["turns"]] == ["passed", "passed", "passed"]
    assert [t["metrics"]["entity_hallucination_rate"] for t in document["turns"]] == [0.0, None, 0.0]
    assert document["turns"][2]["details"]["entity_hallucination_rate"]["checked"] == 2
    assert document["dialogue"]["task_completion"] == 0.0
    assert document["dialogue_details"]["task_completion"]["reason"] == "no reply gave '01223 356555'"
    assert document["dialogue"]["system_correctness"] == 1.0
    assert framework_dialogue_targets.histories[1] == (
        {"role": "user", "content": "Hotels in the north?"},
        {"role": "assistant", "content": "Found: Acorn Guest House and Hamilton Lodge."},
    )


def test_a_hand_off_belongs_to_the_turn_it_happened_in(project: Path) -> None:
    """The Agents SDK desk: turn 0 starts at triage, which hands off to refunds, which looks the order
    up (triage orchestrates; the flow is refunds); turn 1 continues at the refund agent
    (`last_agent`), which answers alone from the fed-back items: no orchestrator, no hand-off, no tool
    call of its own (turn 0's are only in its input). Each turn's hand-offs are in its entry of
    `turns`, and the dialogue's are the turns' with their turn."""
    refund, triage = "Refund agent", "Triage agent"
    turns = [
        {
            "user": "A refund for order 42, please",
            "expected": {
                "agents": {"include": [triage, refund]},
                "trajectory": {"tools": ["lookup_order"], "flow": refund},
            },
        },
        {
            "user": "When does the money arrive?",
            "expected": {
                "agents": {"include": [refund], "exclude": [triage]},
                "trajectory": {"tools": [], "flow": refund},
                "answer": {"contains": ["5 days"]},
            },
        },
    ]
    suite = run_suite(scenarios=[_dialogue("refund", "refunds", turns)])
    [result] = suite.results
    document = result.to_json()
    assert result.status == "passed", result.problems()
    handoff = {"from": triage, "to": refund, "via": "handoff to Refund agent"}
    assert [t["handoffs"] for t in document["turns"]] == [[handoff], []]
    assert document["handoffs"] == [{**handoff, "turn": 0}]


def test_a_message_history_is_not_this_turns_work(project: Path) -> None:
    """pydantic-ai given `message_history=result.all_messages()`: the model of turn 1 sees turn 0's
    get_weather call and return, and the model of turn 2 both earlier turns', yet each turn's trace
    has only its own calls: turn 0 get_weather; turn 1 the joke agent, by its joke_factory tool (a
    hand-off: the helper orchestrates); turn 2 nothing."""
    turns = [
        {"user": "Weather in Paris?", "expected": {"tools": {"include": ["get_weather"]}}},
        {
            "user": "A joke, please",
            "expected": {
                "agents": {"include": ["helper", "joke_agent"]},
                "tools": {"exclude": ["get_weather"]},
                "trajectory": {"tools": [], "flow": "joke_agent"},
            },
        },
        {
            "user": "Thanks!",
            "expected": {
                "agents": {"include": ["helper"], "exclude": ["joke_agent"]},
                "tools": {"exclude": ["get_weather", "joke_factory"]},
            },
        },
    ]
    suite = run_suite(scenarios=[_dialogue("history", "helper", turns)])
    [result] = suite.results
    assert result.status == "passed", result.problems()
    document = result.to_json()
    delegation = {"from": "helper", "to": "joke_agent", "via": "joke_factory"}
    assert [t["handoffs"] for t in document["turns"]] == [[], [delegation], []]
    assert document["turns"][0]["workflow"]["tools"]["included"] == ["get_weather"]
    assert [t["output"] for t in document["turns"]] == [
        "Here: Sunny in Paris",
        "Here: Why did the chicken cross the road?",
        "You're welcome.",
    ]


def test_a_tool_paused_in_one_turn_and_resumed_in_the_next_is_each_turns_call(project: Path) -> None:
    """LangGraph's human in the loop across turns: turn 0 calls book_hotel, which pauses at
    `interrupt()` (the reply is its question); turn 1 resumes it with "yes", which runs it again to
    the end; turn 2 runs no tool, though the checkpoint holds both runs' messages."""
    turns = [
        {
            "user": "Book the Acorn",
            "expected": {"tools": {"include": ["book_hotel"]}, "answer": {"contains": ["Book Acorn?"]}},
        },
        {
            "user": "yes",
            "expected": {"tools": {"include": ["book_hotel"]}, "answer": {"contains": ["Booked Acorn."]}},
        },
        {"user": "Which is nicer?", "expected": {"tools": {"exclude": ["book_hotel", "search_hotels"]}}},
    ]
    suite = run_suite(scenarios=[_dialogue("approval", "approving", turns)])
    [result] = suite.results
    assert result.status == "passed", result.problems()
    document = result.to_json()
    assert [t["output"] for t in document["turns"]] == [
        "Book Acorn?",
        "Booked Acorn.",
        "The Acorn Guest House is nicer.",
    ]
