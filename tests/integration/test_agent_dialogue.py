"""The per-agent analysis of a dialogue, per turn and per session (DESIGN.md, Per-agent analysis: "for a
dialogue the same runs per turn and per session"), against the Langfuse stand-in.

The travel desk (tests/integration/agent_dialogue_targets.py), worked out by hand: its planner may use
`search` (the target's `agent_tools`). Turn 0: search (1 call, clean). Turn 1 (the second turn): search,
then book(hotel, nights): book is not the planner's (unauthorized) and `nights` is not in book's schema
(hallucinated): 2 calls, 1 faulty, 2 issues. Turn 2: its `expected.agent_tools` widens the planner to
search and book: search, book(hotel): 2 clean calls. Over the session: 5 calls, 1 faulty: 0.8; tokens
3 + 2 per turn: 15, cost 3 x $0.25. The writer uses no tool.

The roll-up, per turn: the planner's score is its tool use alone (the judge's parts are not measured):
1.0, 0.5, 1.0, and 0.5 < 0.7 recommends on turn 1; coordination: two agents, no hand-off, no tool call
repeated by another agent: 1.0 each turn; intent drift: no turn's `expected` names agents or tools, so
null; overall = (0.25 tool use + 0.20 coordination) / 0.45: 1.0, (0.125 + 0.2) / 0.45 = 0.722222, 1.0.
Per session, the means over the turns that measured them: the planner's score (1 + 0.5 + 1) / 3 =
0.833333 (the mean of its turns' scores, not a score of the session's 0.8 tool use), coordination 1.0,
overall (1 + 0.722222 + 1) / 3 = 0.907407, intent drift null."""

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

    # the scores' roll-up, per turn and per session (worked out in the module docstring)
    assert [t["score"] for t in turns] == [1.0, 0.5, 1.0]
    fields = [turn["per_agent"] for turn in result["turns"]]
    assert [(f["coordination_score"], f["intent_drift_score"]) for f in fields] == [(1.0, None)] * 3
    assert [round(f["overall_score"], 6) for f in fields] == [1.0, 0.722222, 1.0]
    [advice] = turns[1]["recommendations"]
    assert [t["recommendations"] for t in (turns[0], turns[2])] == [[], []]
    assert (planner["score"], session["agents"]["writer"]["score"]) == (0.833333, None)
    assert planner["recommendations"] == [{**advice, "turn": 1, "trace_id": result["turns"][1]["trace_id"]}]
    assert (session["coordination_score"], session["intent_drift_score"]) == (1.0, None)
    assert session["overall_score"] == 0.907407

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
    on_turns = [s for s in posted if s["name"] in ("agent_score", "overall_score")]
    assert {s["traceId"] for s in on_turns} == {turn["trace_id"] for turn in result["turns"]}
    per_agent = ("dialogue_agent_", "dialogue_coordination", "dialogue_intent", "dialogue_overall")
    session_scores = {
        (s["name"], s["metadata"].get("agent")): s["value"]
        for s in posted
        if s["name"].startswith(per_agent) and s["sessionId"] == f"{run_id}:trip" and not s.get("traceId")
    }
    assert session_scores == {
        ("dialogue_agent_tool_use", "planner"): 0.8,
        ("dialogue_agent_score", "planner"): 0.833333,
        ("dialogue_coordination_score", None): 1.0,
        ("dialogue_overall_score", None): 0.907407,
    }  # no dialogue_intent_drift_score: no turn measured it

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
    assert local_planner["score"] == 0.833333  # rebuilt from dialogue_agent_score alike
    [recommended] = local["recommendations"]  # on turn 1's trace; no score carries it to Langfuse
    assert (recommended["turn"], recommended["trace_id"]) == (1, result["turns"][1]["trace_id"])
    assert remote["recommendations"] == []
    assert [row["agent"] for row in remote["rows"]] == ["planner"]  # the writer left no score
    strip = [{k: v for k, v in i.items() if k != "run"} for i in local["issues"]]  # labels differ
    assert [{k: v for k, v in i.items() if k != "run"} for i in remote["issues"]] == strip
    assert len(strip) == 2 and {i["trace_id"] for i in strip} == {result["turns"][1]["trace_id"]}


def test_with_the_judges_each_turns_agents_are_judged_and_their_values_roll_up_per_session(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    """The same trip with a judge endpoint (the judge stand-in: every agent judgement gives reasoning
    0.8, handoff 0.7, response quality 0.9): each turn's two agents are judged once per turn, their
    values land in the turn's `per_agent` (the planner and the writer delegate to no one: handoff
    null), and the planner's weighted score takes them in. Turn 1, worked out: tool use 0.5 x 0.35 +
    reasoning 0.8 x 0.25 + response quality 0.9 x 0.20, re-normalised over 0.80 (no handoff):
    (0.175 + 0.2 + 0.18) / 0.8 = 0.69375; turns 0 and 2: (0.35 + 0.2 + 0.18) / 0.8 = 0.9125; the
    session's score is their mean, 0.839583."""
    from tests.standin.judge_server import JudgeStandIn, is_agent

    (with_langfuse / "travel_tools.json").write_text(json.dumps(TOOLS))
    with (with_langfuse / "evaluator.toml").open("a") as config:
        config.write(
            '\n[targets.travel]\nentry = "tests.integration.agent_dialogue_targets:travel"\n'
            'tool_schemas = "travel_tools.json"\n[targets.travel.agent_tools]\nplanner = ["search"]\n'
        )
    (with_langfuse / "trip.yaml").write_text(TRIP)
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = cli("run", "trip.yaml", "--output", "out.json")
        agent_calls = sum(1 for body in judge.bodies() if is_agent(body))
    assert code == 1, text
    [result] = json.loads(Path("out.json").read_text())["results"]
    assert agent_calls == 6  # two agents, three turns
    planners = [turn["per_agent"]["agents"]["planner"] for turn in result["turns"]]
    assert [(p["reasoning"], p["handoff"], p["response_quality"]) for p in planners] == [(0.8, None, 0.9)] * 3
    assert [round(p["score"], 6) for p in planners] == [0.9125, 0.69375, 0.9125]
    assert round(result["per_agent"]["agents"]["planner"]["score"], 6) == 0.839583
