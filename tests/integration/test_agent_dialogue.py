"""The per-agent analysis of a dialogue, per turn and per session (DESIGN.md, Per-agent analysis: "for a
dialogue the same runs per turn and per session"), against the Langfuse stand-in.

The travel desk (tests/integration/agent_dialogue_targets.py), worked out by hand: its planner may use
`search` (the target's `agent_tools`). Turn 0: search (1 call, clean). Turn 1 (the second turn): search,
then book(hotel, nights): book is not the planner's (unauthorized) and `nights` is not in book's schema
(hallucinated): 2 calls, 1 faulty, 2 issues. Turn 2: its `expected.agent_tools` widens the planner to
search and book: search, book(hotel): 2 clean calls. Over the session: 5 calls, 1 faulty: 0.8; tokens
3 + 2 per turn: 15, cost 3 x $0.25. The writer uses no tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from tests.integration.conftest import Cli
from tests.standin.langfuse_server import LangfuseStandIn

TOOLS = [
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "required": ["hotel"], "properties": {"hotel": {"type": "string"}}}}},
]  # fmt: skip
TRIP = """\
id: trip
target: travel
turns:
  - user: hotels in york
  - user: the acorn for 3 nights
    expected: {answer: {contains: [confirmed]}}
  - user: book it
    expected: {agent_tools: {planner: [search, book]}}
"""


def test_a_dialogue_is_analysed_per_turn_and_per_session(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    (with_langfuse / "travel_tools.json").write_text(json.dumps(TOOLS))
    with (with_langfuse / "evaluator.toml").open("a") as config:
        config.write(
            '\n[targets.travel]\nentry = "tests.integration.agent_dialogue_targets:travel"\n'
            'tool_schemas = "travel_tools.json"\n[targets.travel.agent_tools]\nplanner = ["search"]\n'
        )
    (with_langfuse / "trip.yaml").write_text(TRIP)
    code, text = cli("run", "trip.yaml", "--no-judge", "--output", "out.json", "--junit", "junit.xml")
    assert code == 1, text  # turn 1's answer check fails; the tool issues inform, never decide
    document: dict[str, Any] = json.loads(Path("out.json").read_text())
    [result] = document["results"]
    run_id = document["run"]["id"]

    # per turn: each turn's trace analysed, with its own expected.agent_tools
    turns = [turn["per_agent"]["agents"]["planner"] for turn in result["turns"]]
    assert [(t["tool_calls"], t["tool_use_score"]) for t in turns] == [(1, 1.0), (2, 0.5), (2, 1.0)]
    assert [(i["kind"], i["tool"], i["parameter"]) for i in turns[1]["issues"]] == [
        ("unauthorized_tool", "book", None), ("hallucinated_parameter", "book", "nights"),
    ]  # fmt: skip
    assert turns[2]["issues"] == []  # widened for turn 2: book is the planner's there

    # per session: the dialogue's own per_agent field
    session = result["per_agent"]
    planner = session["agents"]["planner"]
    assert (planner["turns"], planner["tool_calls"], planner["tool_use_score"]) == (3, 5, 0.8)
    assert (planner["tokens"], planner["cost"]) == (15, 0.75)
    assert {(i["turn"], i["trace_id"]) for i in planner["issues"]} == {(1, result["turns"][1]["trace_id"])}
    assert (session["tool_calls"], session["tool_use_score"], session["issues"]) == (5, 0.8, 2)
    assert session["agents"]["writer"]["tool_calls"] == 0
    assert document["run"]["metrics"]["agent_tool_use"] == 0.8

    # JUnit names the turn and the agent at fault
    failure = ElementTree.parse("junit.xml").find(".//testcase[@name='trip']/failure")  # noqa: S314
    assert failure is not None
    assert "turn 1: planner: planner called book, which is not among its tools (search)" in failure.get(
        "message", ""
    )

    # scores: the turn's on the turn's trace, the roll-up on the session
    posted = [s for s in langfuse_standin.scores.values() if s["metadata"]["run_id"] == run_id]
    [issue_score] = [s for s in posted if s["name"] == "tool_issue"]
    assert issue_score["traceId"] == result["turns"][1]["trace_id"]
    assert issue_score["observationId"] == turns[1]["issues"][0]["observation_id"]
    [rolled] = [s for s in posted if s["name"] == "dialogue_agent_tool_use"]
    assert (rolled["sessionId"], rolled["value"], rolled["metadata"]["agent"]) == (
        f"{run_id}:trip",
        0.8,
        "planner",
    )
    assert not rolled.get("traceId")
    assert sorted(s["value"] for s in posted if s["name"] == "agent_tool_use") == [0.5, 1.0, 1.0]

    # rebuilt from Langfuse: the same per-agent figures and issues as the local report
    code, text = cli("report", "--by", "agent", "--json")
    assert code == 0, text
    local = json.loads(text)
    code, text = cli("report", "--by", "agent", "--json", "--source", "langfuse")
    assert code == 0, text
    remote = json.loads(text)
    [local_planner] = [row for row in local["rows"] if row["agent"] == "planner"]
    assert [row for row in remote["rows"] if row["agent"] == "planner"] == [local_planner]
    assert local_planner["tool_use_score"] == 0.8 and local_planner["issues"] == 2
    assert [row["agent"] for row in remote["rows"]] == ["planner"]  # the writer left no score
    strip = [{k: v for k, v in i.items() if k != "run"} for i in local["issues"]]  # labels differ
    assert [{k: v for k, v in i.items() if k != "run"} for i in remote["issues"]] == strip
    assert len(strip) == 2 and {i["trace_id"] for i in strip} == {result["turns"][1]["trace_id"]}
