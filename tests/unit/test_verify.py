"""`run --verify-langfuse`: calls in one millisecond are ordered alike in-process and in Langfuse, so they
match; a flow that changes only inside a tie Langfuse's rounding made is unsure, not different."""

from collections.abc import Mapping
from typing import Any

from evaluator.results import JudgeStatus, evaluate
from evaluator.run.verify import verify_run
from evaluator.trace import Observation, build_trace
from tests.builders import scenario

SKIPPED = JudgeStatus(status="skipped", reason="-")


class _Reader:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]:
        return [{"data": self.rows, "meta": {}}]

    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None:
        return None


def _row(
    obs_id: str, name: str, start: str, parent: str | None = "root", type_: str = "AGENT"
) -> dict[str, Any]:
    return {
        "id": obs_id, "traceId": "t", "type": type_, "name": name, "parentObservationId": parent,
        "startTime": start, "endTime": "2026-01-01T00:00:01.000Z",
    }  # fmt: skip


def _check(stored_second_start: str, research: float = 1.0001, writer: float = 1.0002) -> Any:
    """`research` and `writer` start in-process at these times (seconds); Langfuse stores writer first
    at 00.500, research at `stored_second_start`."""
    local = build_trace(
        "t",
        [
            Observation(id="root", parent_id=None, type="SPAN", name="s", start_time=0.0),
            Observation(id="a", parent_id="root", type="AGENT", name="research", start_time=research),
            Observation(id="b", parent_id="root", type="AGENT", name="writer", start_time=writer),
        ],
    )
    item = scenario(
        id="s",
        expected={
            "agents": {"allow": ["research", "writer"]},
            "trajectory": {"tools": [], "flow": "research"},
        },
    )
    result = evaluate(item, local, judge_status=SKIPPED)
    rows = [
        _row("root", "s", "2026-01-01T00:00:00.000Z", parent=None, type_="SPAN"),
        _row("b", "writer", "2026-01-01T00:00:00.500Z"),  # stored first: the order flips
        _row("a", "research", stored_second_start),
    ]
    return verify_run(_Reader(rows), {"s": item}, [result], deadline_seconds=5)


def test_calls_in_one_millisecond_are_ordered_alike_in_process_and_stored() -> None:
    report = _check("2026-01-01T00:00:00.500Z", writer=1.0001, research=1.0002)  # writer first by ns
    assert report.matched == ["s"] and not report.ambiguous and report.ok
    report = _check("2026-01-01T00:00:00.500Z")  # research first by ns
    assert report.matched == ["s"] and not report.ambiguous and report.ok


def test_a_flow_that_flips_inside_a_tie_is_unsure() -> None:
    # Different milliseconds in-process (writer first), one in Langfuse (a server rounding otherwise)
    report = _check("2026-01-01T00:00:00.500Z", writer=1.0009, research=1.0011)
    assert report.ambiguous and not report.differ and report.ok


def test_a_flow_that_really_changed_is_different() -> None:
    report = _check("2026-01-01T00:00:00.900Z")
    assert report.differ and not report.ok
