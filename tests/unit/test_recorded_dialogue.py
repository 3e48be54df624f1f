"""Recorded conversations (`validate --session-id` / `--trace` per turn): the session listed and read back
(time order, settling, the read quota's Retry-After, a clear error for an empty session), and the
recorded turns evaluated as the dialogue, with the figures a run computes from the same traces."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evaluator.errors import ConfigError, LangfuseUnavailableError, TraceError
from evaluator.results import JudgeStatus, evaluate, with_dialogues
from evaluator.results.builtin import default_metrics
from evaluator.run import DialogueSettings, RecordedTurn, check_turn_count, recorded_dialogue
from evaluator.run.dialogue import TurnCall, run_dialogue
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Finished
from evaluator.trace import Trace, TraceRules, build_trace, list_session, read_session
from tests.builders import TraceBuilder

NOT_JUDGED = JudgeStatus(status="skipped", reason="--no-judge was given")


def _row(obs_id: str, trace_id: str, start: str) -> dict[str, Any]:
    return {"id": obs_id, "traceId": trace_id, "startTime": start, "type": "SPAN"}


@dataclass
class Session:
    """A session whose listing grows, fails or rate-limits as scripted; each trace read records its
    expanded metadata keys."""

    listings: list[list[dict[str, Any]]]
    failures: list[LangfuseUnavailableError] = field(default_factory=list)
    listed: int = 0
    expanded: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def session_pages(self, session_id: str) -> list[dict[str, Any]]:
        if self.failures:
            raise self.failures.pop(0)
        self.listed += 1
        rows = self.listings.pop(0) if len(self.listings) > 1 else self.listings[0]
        return [{"data": rows[:1], "meta": {"cursor": "c"}}, {"data": rows[1:] + rows[:1], "meta": {}}]

    def observation_pages(
        self, trace_id: str, *, expand_metadata: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        self.expanded.append((trace_id, tuple(expand_metadata)))
        rows = [r | {"parentObservationId": None} for r in self.listings[-1] if r["traceId"] == trace_id]
        return [{"data": rows, "meta": {}}]

    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None:
        return None


TURN_1 = [_row("b1", "tb", "2026-11-25T10:00:05Z"), _row("b2", "tb", "2026-11-25T10:00:06Z")]
TURN_0 = [_row("a1", "ta", "2026-11-25T10:00:01Z")]


def test_the_session_is_listed_in_time_order_once_it_settles() -> None:
    session = Session(listings=[[], TURN_1, TURN_1 + TURN_0])  # the later turn became readable first
    slept: list[float] = []
    listing = list_session(
        session, "s", deadline_seconds=10, settle_seconds=0.05, poll_seconds=0.01, sleep=slept.append
    )
    assert listing.settled
    assert [(t.trace_id, t.observations) for t in listing.traces] == [("ta", 1), ("tb", 2)]
    assert session.listed >= 3
    reads = read_session(session, listing.traces, rules=TraceRules(state_keys=("intent", "belief_state")))
    assert [r.trace.id for r in reads] == ["ta", "tb"] and all(r.settled for r in reads)
    assert [r.trace.observation_count for r in reads] == [1, 2]
    assert session.expanded == [("ta", ("intent", "belief_state")), ("tb", ("intent", "belief_state"))]


def test_a_listing_short_of_the_dialogues_turns_waits_for_the_late_ones() -> None:
    """The earlier turn is listed alone for longer than a listing takes to settle (a later batch is
    ingested late): with two turns expected, the wait goes on until the second is listed; at the
    deadline, what is readable, unsettled."""
    session = Session(listings=[TURN_0, TURN_0, TURN_0, TURN_0 + TURN_1])
    listing = list_session(session, "s", expected_traces=2, settle_seconds=0, poll_seconds=0.01)
    assert listing.settled and [t.trace_id for t in listing.traces] == ["ta", "tb"]
    alone = list_session(
        Session(listings=[TURN_0]), "s", deadline_seconds=0.05, expected_traces=2, settle_seconds=0
    )
    assert not alone.settled and [t.trace_id for t in alone.traces] == ["ta"]


def test_turns_that_started_in_the_same_millisecond_are_listed_in_turn_order() -> None:
    """Langfuse keeps start times to the millisecond: turns that answer at once start in the same one.
    Their order is the turn their roots name, not their random trace ids (turn 2's id sorts first)."""

    def root(trace_id: str, turn: int) -> dict[str, Any]:
        row = _row(f"root-{trace_id}", trace_id, "2026-11-25T10:00:01.007Z")
        return row | {"name": f"booking#{turn}", "parentObservationId": None}

    agent = _row("agent-of-1", "f1", "2026-11-25T10:00:01.007Z") | {"name": "concierge#9"}
    agent["parentObservationId"] = "root-f1"  # a child's name says nothing about the turn
    rows = [root("a2", 2), root("f1", 1), agent, _row("r0", "z0", "2026-11-25T10:00:01.006Z")]
    listing = list_session(Session(listings=[rows]), "s", settle_seconds=0, poll_seconds=0.01)
    assert [(t.trace_id, t.turn) for t in listing.traces] == [("z0", None), ("f1", 1), ("a2", 2)]


def test_unnamed_turns_that_started_in_the_same_millisecond_go_by_which_ended_first() -> None:
    """A conversation recorded outside a run names no turns: of two traces that started in the same
    millisecond, the one that ended first is the earlier turn (its id sorts last here)."""
    first = _row("x", "b-first", "2026-11-25T10:00:01.007Z") | {"endTime": "2026-11-25T10:00:01.007Z"}
    second = _row("y", "a-second", "2026-11-25T10:00:01.007Z") | {"endTime": "2026-11-25T10:00:01.009Z"}
    listing = list_session(Session(listings=[[second, first]]), "s", settle_seconds=0, poll_seconds=0.01)
    assert [t.trace_id for t in listing.traces] == ["b-first", "a-second"]


def test_a_rate_limited_listing_waits_as_long_as_retry_after_asks() -> None:
    limited = LangfuseUnavailableError("HTTP 429", status=429, retry_after=2.5)
    session = Session(listings=[TURN_0], failures=[limited])
    slept: list[float] = []
    listing = list_session(
        session, "s", deadline_seconds=60, settle_seconds=0, poll_seconds=0.01, sleep=slept.append
    )
    assert slept[0] == 2.5 and [t.trace_id for t in listing.traces] == ["ta"]


def test_rate_limited_past_the_deadline_says_what_to_do() -> None:
    limited = LangfuseUnavailableError("HTTP 429", status=429, retry_after=120)
    with pytest.raises(TraceError, match="read quota is used up: try again later"):
        list_session(
            Session(listings=[[]], failures=[limited]), "s", deadline_seconds=5, sleep=lambda s: None
        )


def test_an_empty_session_is_a_clear_error_at_the_deadline() -> None:
    with pytest.raises(TraceError) as info:
        list_session(Session(listings=[[]]), "run-1:x", deadline_seconds=0.05, poll_seconds=0.01)
    assert str(info.value).startswith(
        "session run-1:x has no traces readable in Langfuse within 0.05 s. Fix:"
    )


DIALOGUE = Scenario.model_validate(
    {
        "id": "booking",
        "goal": {"book": ["hotel"]},
        "policy": {"book_hotel": ["name", "bookday"]},
        "turns": [
            {
                "user": "A hotel on Saturday",
                "expected": {
                    "intent": "book_hotel",
                    "slots": {"hotel": {"bookday": "saturday"}},
                    "action": "request",
                },
            },
            {
                "user": "The Acorn, book it",
                "expected": {
                    "domain": "hotel",
                    "slots": {"hotel": {"bookday": "saturday", "name": "acorn guest house"}},
                    "action": "book",
                },
            },
        ],
    }
)
ITEM = LoadedScenario(scenario=DIALOGUE, path=Path("dialogues/booking.yaml"))


SETTINGS = DialogueSettings(state_keys={"slots": "belief_state"})
RULES = TraceRules(state_keys=("intent", "domain", "acts", "belief_state", "action"))
STATES = (
    {"intent": "book_hotel", "belief_state": {"hotel": {"bookday": "saturday"}}, "action": "request"},
    {
        "intent": "book_hotel",
        "domain": "hotel",
        "belief_state": {"hotel": {"bookday": "saturday"}},  # forgot the name
        "action": "book",
    },
)


def _traces() -> list[Trace]:
    """Each turn's trace: its state on the agent's metadata, the slots under the target's name."""
    traces = []
    for index, state in enumerate(STATES):
        builder = TraceBuilder()
        builder.agent("concierge", metadata=state)
        traces.append(build_trace(f"t{index}", builder.observations, rules=RULES))
    return traces


def test_recorded_turns_give_the_figures_a_run_gives() -> None:
    traces = _traces()
    metrics = with_dialogues(default_metrics())
    recorded = recorded_dialogue(
        ITEM,
        [RecordedTurn(trace=t) for t in traces],
        session="run-1:booking",
        settings=SETTINGS,
        metrics=metrics,
        judge_status=NOT_JUDGED,
    )
    # Hand-worked: turn 0 matches (intent, slots, action); turn 1 reports the booking without the
    # name the policy requires: JGA 0, slot accuracy 1/2, a policy violation, not system-correct.
    # The dialogue: JGA mean 1/2, one violation, task completion 0 (the violation fails it first).
    assert recorded.status == "failed" and recorded.dialogue is not None
    assert recorded.dialogue.session_id == "run-1:booking"
    document = recorded.to_json()
    assert document["kind"] == "dialogue" and [t["trace_id"] for t in document["turns"]] == ["t0", "t1"]
    assert [t["metrics"]["jga"] for t in document["turns"]] == [1.0, 0.0]
    assert [t["metrics"]["slot_accuracy"] for t in document["turns"]] == [1.0, 0.5]
    assert [t["metrics"]["policy_compliant"] for t in document["turns"]] == [1.0, 0.0]
    assert document["turns"][1]["state"]["slots"] == {"hotel": {"bookday": "saturday"}}
    assert document["dialogue"]["jga"] == 0.5
    assert document["dialogue"]["policy_violations"] == 1
    assert document["dialogue"]["task_completion"] == 0.0

    # the same traces through the dialogue runner: the same result object, but for the timestamps
    ran: list[Finished] = []

    def attempt(turn_item: LoadedScenario, call: TurnCall) -> None:
        result = evaluate(
            turn_item.scenario, traces[call.index], judge_status=NOT_JUDGED, metrics=metrics, latency_ms=0.0
        )
        call.deliver(Finished(result, ()), traces[call.index], None)

    run_dialogue(
        ITEM,
        run_id="run-1",
        attempt_turn=attempt,
        record=ran.append,
        stopping=threading.Event(),
        judge_status=NOT_JUDGED,
        metrics=metrics,
        settings=SETTINGS,
    )
    [finished] = ran
    by_run = finished.result.to_json()
    for key in ("dialogue", "dialogue_details", "status", "session_id", "kind"):
        assert document[key] == by_run[key], key
    for mine, theirs in zip(document["turns"], by_run["turns"], strict=True):
        for key in ("trace_id", "state", "metrics", "details", "status", "workflow", "output"):
            assert mine[key] == theirs[key], key


def test_a_count_mismatch_says_the_counts_and_what_to_do() -> None:
    with pytest.raises(ConfigError) as info:
        check_turn_count(
            ITEM, 3, recorded="session s in Langfuse holds 3 traces", fix="check the session id."
        )
    assert str(info.value) == (
        "session s in Langfuse holds 3 traces: 3 traces for the 2 user turns of dialogue booking "
        "(dialogues/booking.yaml); each turn is evaluated against one trace, in time order. Fix: check the "
        "session id."
    )
    check_turn_count(ITEM, 2, recorded="x", fix="y")  # as many as the turns: fine
