"""Recorded conversations as users record them outside a run: plain Python traced with Langfuse's
`@observe` and `propagate_attributes(session_id=...)` (SDK 5.x), the state on the agent's metadata,
exported to the Langfuse stand-in; then `validate --scenario ... --session-id ...` reads it back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from langfuse import Langfuse, observe, propagate_attributes

from tests.integration.conftest import Cli, langfuse_deadlines
from tests.standin.langfuse_server import LangfuseStandIn

SCENARIO = """\
id: my-booking
turns:
  - user: A hotel in the north
    expected: {intent: find_hotel, domain: hotel, slots: {hotel: {area: north}}, action: search}
  - user: For 2 people on Saturday
    expected:
      intent: book_hotel
      domain: hotel
      slots: {hotel: {area: north, bookpeople: "2", bookday: saturday, note: LONG}}
      action: request
"""
LONG = "a note of the customer's, " * 12  # 300 characters: Langfuse cuts metadata values at 200
STATES: list[dict[str, Any]] = [
    {"intent": "find_hotel", "domain": "hotel", "slots": {"hotel": {"area": "north"}}, "action": "search"},
    {
        "intent": "book_hotel",
        "domain": "hotel",
        "slots": {"hotel": {"area": "north", "bookpeople": "2", "bookday": "saturday", "note": LONG}},
        "action": "request",
    },
]


def _record(session: str, *, title: bool) -> None:
    """The conversation as the SDK's docs trace it: a root `@observe` agent per user turn under
    `propagate_attributes(session_id=...)`, its state on its metadata; with `title`, a title generated
    after the first turn, in the same session (as chat apps do)."""
    key = os.environ["LANGFUSE_PUBLIC_KEY"]  # other tests' clients live in this process too
    client = Langfuse(public_key=key)

    @observe(name="concierge", as_type="agent")
    def turn(message: str, index: int) -> str:
        client.update_current_span(metadata=STATES[index])
        return f"reply {index}"

    @observe(name="title-generation", as_type="generation")
    def generate_title(message: str) -> str:
        return "Hotel booking"

    for index, message in enumerate(("A hotel in the north", "For 2 people on Saturday")):
        with propagate_attributes(session_id=session):
            turn(message, index, langfuse_public_key=key)
        if title and index == 0:
            with propagate_attributes(session_id=session):
                generate_title(message, langfuse_public_key=key)
    client.flush()


def _scenario(folder: Path) -> str:
    langfuse_deadlines(folder, read_deadline_seconds=10)
    path = folder / "my-booking.yaml"
    path.write_text(SCENARIO.replace("LONG", json.dumps(LONG)))
    return str(path)


def test_a_session_traced_with_observe_is_read_with_its_whole_state(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _record("observed-session", title=False)
    code, text = cli(
        "validate", "--scenario", _scenario(with_langfuse), "--session-id", "observed-session", "--json"
    )
    assert code == 0, text
    document = json.loads(text[text.index("{") :])
    turns = document["turns"]
    assert [t["input"] for t in turns] == ["A hotel in the north", "For 2 people on Saturday"]
    assert [t["output"] for t in turns] == ["reply 0", "reply 1"]
    assert turns[1]["state"]["slots"]["hotel"]["note"] == LONG  # asked for whole, not cut at 200
    assert [t["metrics"]["jga"] for t in turns] == [1.0, 1.0]


def test_a_session_with_a_call_beside_the_turns_names_its_traces_and_the_way_out(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _record("titled-session", title=True)
    code, text = cli("validate", "--scenario", _scenario(with_langfuse), "--session-id", "titled-session")
    flat = " ".join(text.split())
    assert code == 2, text
    assert "session titled-session in Langfuse holds 3 traces: 3 traces for the 2 user turns" in flat
    assert "calls beside the turns (a title or summary generated in the same session, say)" in flat
    assert "give --trace FILE once per turn, in order" in flat
    listed = flat[flat.index("The session's traces, in time order: ") :]
    # (in time order; this fast script's title can start and end in turn 0's millisecond: then by id)
    names = re.findall(r"[0-9a-f]{32} \(([^)]*)\)", listed)
    assert sorted(names) == ["concierge", "concierge", "title-generation"]


def test_a_session_short_of_the_dialogues_turns_is_not_said_to_be_still_changing(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    # One turn recorded for a dialogue of two: the listing stays the same for the whole read deadline
    # (waited for the missing turn); it was not "still changing", it was short of a trace.
    key = os.environ["LANGFUSE_PUBLIC_KEY"]
    client = Langfuse(public_key=key)

    @observe(name="concierge", as_type="agent")
    def turn(message: str) -> str:
        client.update_current_span(metadata=STATES[0])
        return "reply 0"

    with propagate_attributes(session_id="short-session"):
        turn("A hotel in the north", langfuse_public_key=key)
    client.flush()
    langfuse_deadlines(with_langfuse, read_deadline_seconds=2)
    path = with_langfuse / "my-booking.yaml"
    path.write_text(SCENARIO.replace("LONG", json.dumps(LONG)))
    code, text = cli("validate", "--scenario", str(path), "--session-id", "short-session")
    flat = " ".join(text.split())
    assert code == 2, text
    assert "session short-session in Langfuse holds 1 trace: 1 trace for the 2 user turns" in flat
    assert "still changing" not in flat
    assert "2 s" in flat  # how long it waited for the missing turn is said
