"""A session's traces that the listing cannot tell apart (started in the same millisecond, naming no
turn) are put in the order of the user messages their roots' inputs hold (trace.session_readback)."""

from __future__ import annotations

from typing import Any

from evaluator.trace import in_turn_order
from evaluator.trace.detail import TraceDetail
from evaluator.trace.model import Observation
from evaluator.trace.readback import ReadBack
from evaluator.trace.session_readback import SessionTrace
from tests.builders import TraceBuilder

MESSAGES = ["A hotel in the north", "For 2 people on Saturday"]


def _read(trace_id: str, root_input: Any) -> ReadBack:
    root = Observation(
        id=f"{trace_id}-root", parent_id=None, type="AGENT", name="concierge", input=root_input
    )
    return ReadBack(
        trace=TraceBuilder().build(trace_id), settled=True, detail=lambda: TraceDetail(observations=(root,))
    )


def _listed(*ids: str, started: float = 1.0, turn: int | None = None) -> list[SessionTrace]:
    return [SessionTrace(trace_id=i, started=started, observations=1, turn=turn) for i in ids]


def _ids(reads: list[ReadBack]) -> list[str]:
    return [r.trace.id for r in reads]


def test_traces_tied_in_the_listing_follow_the_messages_their_inputs_hold() -> None:
    # the listing broke the tie by trace id: the second turn first
    reads = [_read("b", {"args": [MESSAGES[1], 1], "kwargs": {}}), _read("a", {"args": [MESSAGES[0], 0]})]
    assert _ids(in_turn_order(_listed("b", "a"), reads, MESSAGES)) == ["a", "b"]


def test_an_input_carrying_the_conversation_before_it_counts_by_its_last_message() -> None:
    history = [{"role": "user", "content": MESSAGES[0]}, {"role": "user", "content": MESSAGES[1]}]
    reads = [_read("b", history), _read("a", MESSAGES[0])]
    assert _ids(in_turn_order(_listed("b", "a"), reads, MESSAGES)) == ["a", "b"]


def test_what_cannot_be_told_apart_keeps_the_listing_s_order() -> None:
    unmatched = [_read("b", "something else"), _read("a", MESSAGES[0])]
    assert _ids(in_turn_order(_listed("b", "a"), unmatched, MESSAGES)) == ["b", "a"]
    same = [_read("b", MESSAGES[0]), _read("a", MESSAGES[0])]
    assert _ids(in_turn_order(_listed("b", "a"), same, MESSAGES)) == ["b", "a"]


def test_traces_the_listing_orders_are_left_where_they_are() -> None:
    reads = [_read("b", MESSAGES[1]), _read("a", MESSAGES[0])]
    apart = [
        SessionTrace(trace_id="b", started=1.0, observations=1),
        SessionTrace(trace_id="a", started=2.0, observations=1),
    ]
    assert _ids(in_turn_order(apart, reads, MESSAGES)) == ["b", "a"]  # started apart: time decides
    assert _ids(in_turn_order(_listed("b", "a", turn=0), reads, MESSAGES)) == ["b", "a"]  # named turns decide


def test_traces_apart_in_the_listing_are_not_read_for_their_inputs() -> None:
    def unread() -> TraceDetail:
        raise AssertionError("an untied trace's detail was built")

    reads = [ReadBack(trace=TraceBuilder().build(i), settled=True, detail=unread) for i in ("a", "b")]
    apart = [
        SessionTrace(trace_id="a", started=1.0, observations=1),
        SessionTrace(trace_id="b", started=2.0, observations=1),
    ]
    assert _ids(in_turn_order(apart, reads, MESSAGES)) == ["a", "b"]
