"""`run --verify-langfuse`: a flow that changes only inside a millisecond tie is unsure, not different."""

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


def _check(stored_second_start: str) -> Any:
    local = build_trace(
        "t",
        [
            Observation(id="root", parent_id=None, type="SPAN", name="s", start_time=0.0),
            Observation(id="a", parent_id="root", type="AGENT", name="research", start_time=1.0001),
            Observation(id="b", parent_id="root", type="AGENT", name="writer", start_time=1.0002),
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
    assert result.status == "passed"
    rows = [
        _row("root", "s", "2026-01-01T00:00:00.000Z", parent=None, type_="SPAN"),
        _row("b", "writer", "2026-01-01T00:00:00.500Z"),  # stored first: the order flips
        _row("a", "research", stored_second_start),
    ]
    return verify_run(_Reader(rows), {"s": item}, [result], deadline_seconds=5)


def test_a_flow_that_flips_inside_a_tie_is_unsure() -> None:
    report = _check("2026-01-01T00:00:00.500Z")  # same millisecond as writer
    assert report.ambiguous and not report.differ and report.ok


def test_a_flow_that_really_changed_is_different() -> None:
    report = _check("2026-01-01T00:00:00.900Z")
    assert report.differ and not report.ok
