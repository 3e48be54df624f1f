"""Reading a recorded conversation back from Langfuse (`validate --session-id`): the session's traces,
one per turn, in time order, each read whole as `read_trace` reads one trace.

First the session is listed: `GET /api/public/v2/observations?sessionId=...&fields=core,basic` (every
cursor page, rows de-duplicated by id), grouped by trace. It is polled with backoff until the listing
has *settled* (at least as many traces as the dialogue has turns, the same traces with the same
observation counts on polls spanning `settle_seconds`), within the read deadline; a 429 waits as long
as its Retry-After asks (Cloud read quotas are small), and one that asks past the deadline ends the
wait. Traces are ordered by their earliest observation's
start time; Langfuse keeps start times to the millisecond, so turns that answer at once can start in
the same one: those go in the order of the turn their root names (`<scenario id>#<turn>`, as a run
names them), else the one whose last observation ended first, then by id. Then each trace is read
with `read_trace`, its listed count as the count to expect, so a trace whose observations are all
readable settles on its first read (one request per trace), within the same deadline per trace as
`validate --trace-id`; the metadata keys a turn reports its state under are asked for whole (Langfuse
cuts longer values at 200 characters).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from evaluator._time import Deadline
from evaluator.errors import LangfuseAuthError, LangfuseUnavailableError, TraceError
from evaluator.trace.conventions import DEFAULT_RULES, TraceRules
from evaluator.trace.readback import ReadBack, read_trace

__all__ = [
    "SessionListing",
    "SessionReader",
    "SessionTrace",
    "in_turn_order",
    "list_session",
    "read_session",
    "session_traces",
]

_MAX_PAUSE_SECONDS = 5.0
_TURN_ROOT = re.compile(r"#(\d+)$")  # a run names a turn's root `<scenario id>#<turn>`


class SessionReader(Protocol):
    def session_pages(self, session_id: str) -> list[dict[str, Any]]: ...
    def observation_pages(
        self, trace_id: str, *, expand_metadata: Sequence[str] = ()
    ) -> list[dict[str, Any]]: ...
    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True, kw_only=True)
class SessionTrace:
    """One trace of a session as the listing shows it: its id, when its first observation started
    (epoch seconds; None when no row says) and how many observations carry the session."""

    trace_id: str
    started: float | None
    observations: int
    turn: int | None = None  # the turn its root names, when it names one
    name: str = ""  # its root observation's name ("": not listed)


@dataclass(frozen=True, kw_only=True)
class SessionListing:
    traces: tuple[SessionTrace, ...]  # in time order
    settled: bool  # False: the deadline came first; later turns may be missing


def _epoch_seconds(value: object) -> float | None:
    """A listed row's ISO time (its `startTime` or `endTime`) in epoch seconds; None when it has none."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _turn(row: Mapping[str, Any]) -> int | None:
    """The turn a trace's root observation names (`<scenario id>#<turn>`); None for other rows."""
    if row.get("parentObservationId"):
        return None
    named = _TURN_ROOT.search(str(row.get("name") or ""))
    return int(named.group(1)) if named else None


def _root_name(row: Mapping[str, Any]) -> str | None:
    """A root observation's name (None for other rows): how the session's traces are told apart."""
    return None if row.get("parentObservationId") else str(row.get("name") or "")


def session_traces(pages: Sequence[Mapping[str, Any]]) -> tuple[SessionTrace, ...]:
    """The traces of listed observation pages, in time order (a trace without a start time last);
    traces that started in the same millisecond in the order of the turns their roots name, else the
    one that ended first (a conversation recorded outside a run names no turns), then by id."""
    rows: dict[str, tuple[str, float | None, float | None]] = {}  # observation id -> (trace, start, end)
    turns: dict[str, int] = {}
    names: dict[str, str] = {}
    for page in pages:
        for row in page.get("data") or ():
            if isinstance(row, Mapping) and row.get("traceId") and row.get("id"):
                times = _epoch_seconds(row.get("startTime")), _epoch_seconds(row.get("endTime"))
                rows[str(row["id"])] = (str(row["traceId"]), *times)
                if (turn := _turn(row)) is not None:
                    turns[str(row["traceId"])] = turn
                if (name := _root_name(row)) is not None:
                    names[str(row["traceId"])] = name
    counts: dict[str, int] = {}
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    for trace_id, started, ended in rows.values():
        counts[trace_id] = counts.get(trace_id, 0) + 1
        if started is not None:
            starts[trace_id] = min(started, starts.get(trace_id, started))
        if ended is not None:
            ends[trace_id] = max(ended, ends.get(trace_id, ended))
    traces = [
        SessionTrace(
            trace_id=t, started=starts.get(t), observations=n, turn=turns.get(t), name=names.get(t, "")
        )
        for t, n in counts.items()
    ]

    def order(t: SessionTrace) -> tuple[bool, float, bool, int, float, str]:
        return (
            t.started is None,
            t.started or 0.0,
            t.turn is None,
            t.turn or 0,
            ends.get(t.trace_id, math.inf),
            t.trace_id,
        )

    return tuple(sorted(traces, key=order))


def list_session(
    reader: SessionReader,
    session_id: str,
    *,
    deadline_seconds: float = 60.0,
    expected_traces: int = 0,
    settle_seconds: float = 3.0,
    poll_seconds: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> SessionListing:
    """The session's traces once the listing has settled; TraceError when none became readable in
    time (or Langfuse kept refusing, rate-limited, past the deadline). A listing of fewer than
    `expected_traces` (the dialogue's turns) has not settled, however long it stays the same: a
    turn's trace can become readable seconds after the others (ingested in a later batch)."""
    deadline = Deadline(deadline_seconds)
    pause = poll_seconds
    seen: tuple[SessionTrace, ...] = ()
    since = time.monotonic()
    while True:
        try:
            listed = session_traces(reader.session_pages(session_id))
        except LangfuseAuthError:
            raise
        except LangfuseUnavailableError as exc:
            wait = max(pause, exc.retry_after or 0.0)
            if wait >= deadline.remaining():
                if seen:
                    return SessionListing(traces=seen, settled=False)
                limited = exc.status == 429
                raise TraceError(
                    f"session {session_id} could not be listed in Langfuse within {deadline_seconds:g} s "
                    f"({exc}). Fix: "
                    + (
                        "Langfuse's read quota is used up: try again later, or raise [langfuse] "
                        "read_deadline_seconds."
                        if limited
                        else "check that Langfuse is up at LANGFUSE_BASE_URL, then try again."
                    )
                ) from None
            sleep(wait)
            pause = min(pause * 2, _MAX_PAUSE_SECONDS)
            continue
        now = time.monotonic()
        if listed != seen:
            seen, since = listed, now
        if len(seen) >= max(expected_traces, 1) and now - since >= settle_seconds:
            return SessionListing(traces=seen, settled=True)
        if deadline.passed:
            break
        sleep(deadline.cap(pause))
        pause = min(pause * 2, _MAX_PAUSE_SECONDS)
    if seen:
        return SessionListing(traces=seen, settled=False)
    raise TraceError(
        f"session {session_id} has no traces readable in Langfuse within {deadline_seconds:g} s. Fix: "
        "check the session id (Langfuse shows it under Sessions; a dialogue run's is "
        "`<run id>:<scenario id>`) and that the keys belong to its project; ingestion can lag, so a "
        "session recorded moments ago may need a longer wait ([langfuse] read_deadline_seconds)."
    )


class _Expanded:
    """A session reader as `read_trace` takes it, asking for the state keys' metadata whole."""

    def __init__(self, reader: SessionReader, keys: Sequence[str]) -> None:
        self._reader = reader
        self._keys = tuple(keys)

    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]:
        return self._reader.observation_pages(trace_id, expand_metadata=self._keys)

    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None:
        return self._reader.trace_body(trace_id)


def read_session(
    reader: SessionReader,
    traces: Sequence[SessionTrace],
    *,
    deadline_seconds: float = 60.0,
    rules: TraceRules = DEFAULT_RULES,
    settle_seconds: float = 3.0,
    poll_seconds: float = 0.5,
) -> list[ReadBack]:
    """Each listed trace read whole, in the listing's order."""
    expanded = _Expanded(reader, rules.state_keys)
    return [
        read_trace(
            expanded,
            listed.trace_id,
            deadline_seconds=deadline_seconds,
            expected_observations=listed.observations,
            settle_seconds=settle_seconds,
            poll_seconds=poll_seconds,
            rules=rules,
        )
        for listed in traces
    ]


def in_turn_order(
    listed: Sequence[SessionTrace], reads: Sequence[ReadBack], messages: Sequence[str]
) -> list[ReadBack]:
    """`reads` (one per listed trace, in the listing's order), with traces the listing cannot tell apart
    (started in the same millisecond, Langfuse's resolution, and naming no turn: a conversation
    recorded outside a run whose turns took less than that) put in the order of the user `messages`
    their roots' inputs hold: a trace's is the last of the messages its input holds (an input may carry
    the conversation before it). Such a group keeps the listing's order unless that gives each of its
    traces a message of its own."""
    ordered = list(reads)
    start = 0
    while start < len(listed):
        end = start + 1
        while end < len(listed) and _tied(listed[start], listed[end]):
            end += 1
        if end - start > 1:  # only a tie asks the traces' inputs (each trace's detail built)
            group = ordered[start:end]
            held = [_last_message_held(read, messages) for read in group]
            places = [h for h in held if h is not None]
            if len(places) == len(group) and len(set(places)) == len(places):
                ordered[start:end] = [
                    read for _, read in sorted(zip(places, group, strict=True), key=lambda p: p[0])
                ]
        start = end
    return ordered


def _tied(first: SessionTrace, other: SessionTrace) -> bool:
    return (
        first.turn is None
        and other.turn is None
        and first.started is not None
        and first.started == other.started
    )


def _last_message_held(read: ReadBack, messages: Sequence[str]) -> int | None:
    """The index of the last user message the trace's root observations' input holds; None: none."""
    if read.detail is None:
        return None
    text = " ".join(_text(o.input) for o in read.detail().observations if o.parent_id is None)
    held = [index for index, message in enumerate(messages) if message and message in text]
    return held[-1] if held else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
