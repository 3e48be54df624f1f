"""Recorded conversations of real frameworks, traced as Langfuse's integration docs trace them and
exported to the Langfuse stand-in, then read back by `validate --scenario ... --session-id ...`: the
OpenAI Agents SDK desk through OpenInference and pydantic-ai through its instrumentation
(tests/integration/framework_dialogue_targets.py, scripted models). Each turn runs inside a Langfuse
span under `propagate_attributes(session_id=...)`, and the application reports the turn's state with
`update_current_span(metadata=...)` on that span (the frameworks' own spans carry no metadata the
evaluator reads: README, Recorded conversations)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from agents import Agent, Runner
from langfuse import Langfuse, propagate_attributes
from pydantic_ai.messages import ModelMessage

from tests.frameworks.systems.agents_sdk import ScriptedModel
from tests.integration import framework_dialogue_targets as systems
from tests.integration.conftest import Cli, langfuse_deadlines
from tests.integration.test_recorded import _same_dialogue
from tests.standin.langfuse_server import LangfuseStandIn

DESK = """\
id: refund-desk
turns:
  - user: A refund for order 42, please
    expected:
      agents: {include: [Triage agent, Refund agent]}
      tools: {include: [lookup_order]}
      trajectory: {tools: [lookup_order], flow: Refund agent}
      intent: request_refund
      slots: {refund: {order: "42"}}
      action: refund
  - user: When does the money arrive?
    expected:
      agents: {include: [Refund agent], exclude: [Triage agent]}
      tools: {exclude: [lookup_order]}
      intent: ask_refund
      slots: {refund: {order: "42"}}
      action: inform
      answer: {contains: [5 days]}
"""
DESK_TURNS = ["A refund for order 42, please", "When does the money arrive?"]
DESK_STATES: list[dict[str, Any]] = [
    {"intent": "request_refund", "slots": {"refund": {"order": "42"}}, "action": "refund"},
    {"intent": "ask_refund", "slots": {"refund": {"order": "42"}}, "action": "inform"},
]

HELPER = """\
id: helper-chat
turns:
  - user: Weather in Paris?
    expected:
      agents: {include: [helper], exclude: [joke_agent]}
      tools: {include: [get_weather]}
      intent: find_weather
      slots: {weather: {city: paris}}
      action: inform
  - user: A joke, please
    expected:
      agents: {include: [helper, joke_agent]}
      tools: {exclude: [get_weather]}
      trajectory: {tools: [], flow: joke_agent}
      intent: tell_joke
      action: inform
  - user: Thanks!
    expected:
      agents: {include: [helper], exclude: [joke_agent]}
      intent: thank_general
      action: bye
"""
HELPER_TURNS = ["Weather in Paris?", "A joke, please", "Thanks!"]
HELPER_STATES: list[dict[str, Any]] = [
    {
        "intent": "find_weather",
        "domain": "weather",
        "slots": {"weather": {"city": "Paris"}},
        "action": "inform",
    },
    {"intent": "tell_joke", "domain": "joke", "action": "inform"},
    {"intent": "thank_general", "domain": "general", "action": "bye"},
]

Turn = Callable[[str], str]  # one user message in, the reply out (the framework keeps the memory)


def _desk() -> Turn:
    """The Agents SDK's multi-turn loop: each turn from `to_input_list()`, at `last_agent`."""
    memory: dict[str, Any] = {"agent": systems.triage_agent, "items": []}

    def turn(message: str) -> str:
        agent: Agent[Any] = memory["agent"]
        items = [*memory["items"], {"role": "user", "content": message}]
        result = asyncio.run(Runner.run(agent, items))
        memory.update(agent=result.last_agent, items=result.to_input_list())
        return str(result.final_output)

    return turn


def _helper() -> Turn:
    """pydantic-ai's multi-turn loop: the earlier turns' messages go back in as the history."""
    history: list[list[ModelMessage]] = [[]]

    def turn(message: str) -> str:
        result = asyncio.run(systems.helper_agent.run(message, message_history=history[0] or None))
        history[0] = result.all_messages()
        return str(result.output)

    return turn


def _record(session: str, turn: Turn, messages: list[str], states: list[dict[str, Any]]) -> None:
    """The conversation as Langfuse's docs trace a framework's run with attributes of its own: each
    user turn in a Langfuse span under `propagate_attributes(session_id=...)`, the framework's spans
    inside it, the turn's state on that span's metadata."""
    client = Langfuse(public_key=os.environ["LANGFUSE_PUBLIC_KEY"])  # other tests' clients live here too
    for message, state in zip(messages, states, strict=True):
        with (
            client.start_as_current_observation(name="chat-turn", input=message) as span,
            propagate_attributes(session_id=session),
        ):
            reply = turn(message)
            client.update_current_span(metadata=state)
            span.update(output=reply)
        client.flush()  # each turn's spans in batches of their own, as a server sends them over time


def _scenario(folder: Path, text: str, name: str, *, deadline: float = 10) -> str:
    langfuse_deadlines(folder, read_deadline_seconds=deadline)
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _validate(cli: Cli, scenario: str, *source: str) -> tuple[int, dict[str, Any], str]:
    """`validate --json` of the scenario against `source` (`--session-id ID`, or `--trace FILE`s)."""
    code, text = cli("validate", "--scenario", scenario, *source, "--no-judge", "--json")
    document = json.JSONDecoder().raw_decode(text[text.index("{") :])[0] if "{" in text else {}
    return code, document, text


def _read_back(
    cli: Cli, folder: Path, scenario: str, session: str, turn: Turn, *, deadline: float = 10
) -> tuple[str, dict[str, Any]]:
    """The conversation recorded under `session` (the scenario's user turns, the states of the
    scenario's system) and read back by `validate --session-id`, which passes: the scenario's path and
    the result."""
    messages, states = (DESK_TURNS, DESK_STATES) if scenario is DESK else (HELPER_TURNS, HELPER_STATES)
    _record(session, turn, messages, states)
    path = _scenario(folder, scenario, session, deadline=deadline)
    code, document, text = _validate(cli, path, "--session-id", session)
    assert code == 0, text
    assert "still changing" not in text, text
    assert [t["input"] for t in document["turns"]] == messages
    return path, document


def test_an_agents_sdk_conversation_is_read_turn_by_turn(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """Worked out by hand: turn 0 triage hands off to refunds, which looks order 42 up (flow: the
    Refund agent); turn 1 continues at the Refund agent, which answers alone. Each turn's state as
    its span reported it: every figure 1."""
    document = _read_back(cli, with_langfuse, DESK, "desk-session", _desk())[1]
    turns = document["turns"]
    assert [t["output"] for t in turns] == ["Refund started.", "It arrives in 5 days."]
    assert [t["state"] for t in turns] == DESK_STATES
    handoff = {"from": "Triage agent", "to": "Refund agent", "via": "handoff to Refund agent"}
    assert [t["handoffs"] for t in turns] == [[handoff], []]
    assert turns[0]["workflow"]["tools"]["included"] == ["lookup_order"]
    figures = document["dialogue"]
    assert (figures["jga"], figures["intent_accuracy"], figures["system_correctness"]) == (1.0, 1.0, 1.0)
    assert figures["domain_accuracy"] is None  # the desk reports no domain: not measured, never 0


def test_a_pydantic_ai_conversation_is_read_turn_by_turn(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """Turn 0 calls get_weather; turn 1 delegates to the joke agent through joke_factory (a hand-off);
    turn 2 answers alone. The earlier turns' calls are in the model's history, not in the trace."""
    document = _read_back(cli, with_langfuse, HELPER, "helper-session", _helper())[1]
    turns = document["turns"]
    assert [t["output"] for t in turns] == [
        "Here: Sunny in Paris",
        "Here: Why did the chicken cross the road?",
        "You're welcome.",
    ]
    delegation = {"from": "helper", "to": "joke_agent", "via": "joke_factory"}
    assert [t["handoffs"] for t in turns] == [[], [delegation], []]
    assert [t["state"]["intent"] for t in turns] == ["find_weather", "tell_joke", "thank_general"]
    figures = document["dialogue"]
    assert (figures["jga"], figures["slot_accuracy"], figures["system_correctness"]) == (1.0, 1.0, 1.0)


def _late(standin: LangfuseStandIn, turn: Turn, late: int, seconds: float) -> Turn:
    """`turn`, with the trace of turn `late` readable only `seconds` after it was sent (ingestion lag
    of one batch: the earlier turns are listed at once)."""
    count = [0]

    def delayed(message: str) -> str:
        standin.visibility_delay = seconds if count[0] == late else 0.0
        count[0] += 1
        return turn(message)

    return delayed


def test_a_turn_listed_late_is_waited_for_within_the_read_deadline(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """The last turn's trace becomes readable 5 s after the first one: longer than a listing stays
    the same to settle (3 s), well within the read deadline (20 s: room for the polls' backoff)."""
    _read_back(cli, with_langfuse, DESK, "late-desk", _late(langfuse_standin, _desk(), 1, 5.0), deadline=20)


def _saved_forms(base_url: str, trace_id: str) -> dict[str, str]:
    """One trace saved in each form README's "One trace, offline" reads: the v2 observations page and
    the trace endpoint's body as curl saves them, the SDK's page dumped four ways, the web UI's
    download."""
    auth = (os.environ["LANGFUSE_PUBLIC_KEY"], os.environ["LANGFUSE_SECRET_KEY"])
    query = {"traceId": trace_id, "fields": "core,basic,io,metadata,usage,prompt,time", "limit": "1000"}
    page = httpx.get(f"{base_url}/api/public/v2/observations", params=query, auth=auth)
    body = httpx.get(f"{base_url}/api/public/traces/{trace_id}", auth=auth).json()
    client = Langfuse(public_key=auth[0])
    sdk = client.api.observations.get_many(trace_id=trace_id, fields=query["fields"], limit=1000)
    return {
        "v2 page": page.text,
        "trace body": json.dumps(body),
        "sdk .json()": sdk.json(),
        "sdk model_dump_json()": sdk.model_dump_json(),
        "sdk .dict()": json.dumps(sdk.dict(), default=str),
        "sdk model_dump()": json.dumps(sdk.model_dump(), default=str),
        "web UI download": json.dumps({"observations": body["observations"], "scores": []}),
    }


def test_a_turn_saved_in_each_file_form_reads_as_its_session_does(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, tmp_path: Path
) -> None:
    """pydantic-ai's delegation turn (turn 1) saved in every form, the other turns as v2 pages:
    `--trace` once per turn gives the result the session gave, turn by turn."""
    scenario, read = _read_back(cli, with_langfuse, HELPER, "saved-helper", _helper())
    files = []
    for turn in read["turns"]:
        forms = _saved_forms(langfuse_standin.base_url, turn["trace_id"])
        files.append(tmp_path / f"turn-{turn['turn']}.json")
        files[-1].write_text(forms["v2 page"])
    for form, saved in _saved_forms(langfuse_standin.base_url, read["turns"][1]["trace_id"]).items():
        files[1].write_text(saved)
        code, document, text = _validate(cli, scenario, *(f"--trace={f}" for f in files))
        assert code == 0, (form, text)
        _same_dialogue(document, read)
    # every turn in one form: the session they name is the result's (the UI download's rows name none)
    for form, session in (("sdk model_dump()", "saved-helper"), ("web UI download", "")):
        for turn, path in zip(read["turns"], files, strict=True):
            path.write_text(_saved_forms(langfuse_standin.base_url, turn["trace_id"])[form])
        code, document, text = _validate(cli, scenario, *(f"--trace={f}" for f in files))
        assert (code, document["session_id"]) == (0, session), (form, text)


def test_a_title_agent_run_in_the_session_is_named_among_its_traces(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """Between the turns the app asks a title agent for the chat's title, in the same session but
    outside the turn's span: its own trace (OpenInference's "Agent workflow"). Three traces for two
    turns: the count, the traces in time order, the way out (--trace per turn)."""
    desk = _desk()
    _record("titled-desk", desk, DESK_TURNS[:1], DESK_STATES[:1])
    titler = Agent(name="Title agent", model=ScriptedModel("Refund of order 42"))
    with propagate_attributes(session_id="titled-desk"):
        asyncio.run(Runner.run(titler, DESK_TURNS[0]))
    _record("titled-desk", desk, DESK_TURNS[1:], DESK_STATES[1:])
    code, _, text = _validate(cli, _scenario(with_langfuse, DESK, "desk"), "--session-id", "titled-desk")
    flat = " ".join(text.split())
    assert code == 2, text
    assert "session titled-desk in Langfuse holds 3 traces: 3 traces for the 2 user turns" in flat
    listed = flat[flat.index("The session's traces, in time order: ") :]
    assert re.findall(r"[0-9a-f]{32} \(([^)]*)\)", listed) == ["chat-turn", "Agent workflow", "chat-turn"]
    assert "give --trace FILE once per turn, in order" in flat
