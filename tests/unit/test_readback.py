"""Read-back polling: settles on a stable count, rides out outages, falls back, and gives up clearly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from evaluator.errors import LangfuseUnavailableError, TraceError
from evaluator.trace import read_trace


def _row(obs_id: str, type_: str = "SPAN", name: str = "n", parent: str | None = None) -> dict[str, Any]:
    return {
        "id": obs_id,
        "traceId": "t",
        "type": type_,
        "name": name,
        "parentObservationId": parent,
        "startTime": f"2026-11-22T10:00:0{len(obs_id)}Z",
        "updatedAt": "2026-11-22T10:01:00Z",
    }


ROWS = [_row("r"), _row("a1", "AGENT", "orchestrator", "r"), _row("t11", "TOOL", "search", "a1")]


@dataclass
class Ingesting:
    """Shows nothing, then a growing prefix of ROWS (split over two cursor pages), like ingestion lag."""

    visible: list[int]
    failures: int = 0
    body: Mapping[str, Any] | None = None
    calls: list[str] = field(default_factory=list)

    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]:
        self.calls.append("observations")
        if self.failures:
            self.failures -= 1
            raise LangfuseUnavailableError("down", status=503)
        rows = ROWS[: self.visible.pop(0) if len(self.visible) > 1 else self.visible[0]]
        return [{"data": rows[:1], "meta": {"cursor": "c"}}, {"data": rows[1:] + rows[:1], "meta": {}}]

    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None:
        self.calls.append("trace")
        return self.body


def test_waits_until_the_count_is_stable() -> None:
    reader = Ingesting(visible=[0, 1, 3])
    read = read_trace(reader, "t", deadline_seconds=10, settle_seconds=0.2, poll_seconds=0.01)
    assert read.settled
    assert read.trace.observation_count == 3  # the duplicate row across pages is counted once
    assert read.trace.tool_path == ["search"]
    assert reader.calls.count("observations") >= 4  # two growing reads, then 3 until it held for 0.2 s


def test_stops_as_soon_as_the_expected_count_is_readable() -> None:
    reader = Ingesting(visible=[1, 3])
    read = read_trace(reader, "t", expected_observations=3, deadline_seconds=10, poll_seconds=0.01)
    assert read.trace.agent_names == ["orchestrator"]
    assert reader.calls.count("observations") == 2


def test_outage_is_retried_and_the_traces_endpoint_is_the_fallback() -> None:
    reader = Ingesting(visible=[3], failures=1, body={"id": "t", "observations": [dict(r) for r in ROWS]})
    read = read_trace(reader, "t", expected_observations=3, deadline_seconds=10, poll_seconds=0.01)
    assert reader.calls[:2] == ["observations", "trace"]
    assert read.trace.observation_count == 3


def test_never_readable_is_a_clear_error() -> None:
    with pytest.raises(TraceError, match=r"trace t was not readable in Langfuse within 0\.3 s"):
        read_trace(Ingesting(visible=[0]), "t", deadline_seconds=0.3, poll_seconds=0.01)


def test_incomplete_at_the_deadline_returns_what_is_there() -> None:
    read = read_trace(
        Ingesting(visible=[1]), "t", expected_observations=3, deadline_seconds=0.3, poll_seconds=0.01
    )
    assert read.trace.observation_count == 1
    assert not read.settled
