"""Benchmark: validate a synthetic trace of 10,000 observations.

Measures the whole read path a user pays for with `validate --trace-id`: an observations page body
(as Langfuse returns it) -> normalized trace -> workflow verdict and trajectory scores.
Goal: <= 250 ms CPU and <= 100 MB extra memory. Prints the figures; asserts nothing.

    .venv/bin/python benchmarks/bench_validate.py [--observations 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from typing import Any

from evaluator.metrics import WorkflowValidator, score_trajectory
from evaluator.scenarios import Expectation, Expected, TrajectorySpec
from evaluator.trace import trace_from_observations


def synthetic_page(count: int) -> dict[str, Any]:
    """A root span, an orchestrator, 50 sub-agents, each with tools, generations and spans below."""
    rows: list[dict[str, Any]] = []

    def add(type_: str, name: str, parent: str | None, **extra: Any) -> str:
        obs_id = f"{len(rows):016x}"
        second, milli = divmod(len(rows), 1000)
        rows.append(
            {
                "id": obs_id,
                "traceId": "f" * 32,
                "type": type_,
                "name": name,
                "parentObservationId": parent,
                "startTime": f"2026-11-22T10:{second // 60:02d}:{second % 60:02d}.{milli:03d}Z",
                "endTime": f"2026-11-22T10:{second // 60:02d}:{second % 60:02d}.{milli:03d}Z",
                "input": json.dumps({"query": f"q{len(rows)}"}),
                "output": "result text " * 5,
                "metadata": {},
                "level": "DEFAULT",
                "updatedAt": "2026-11-22T11:00:00.000Z",
                **extra,
            }
        )
        return obs_id

    root = add("SPAN", "scenario", None)
    orchestrator = add("AGENT", "orchestrator", root, metadata={"flow": '"research"'})
    agents = [add("AGENT", f"agent_{i}", orchestrator) for i in range(50)]
    i = 0
    while len(rows) < count:
        parent = agents[i % len(agents)]
        kind = i % 4
        if kind == 0:
            add("TOOL", f"tool_{i % 20}", parent)
        elif kind == 1:
            add("GENERATION", "llm", parent)
        else:
            add("SPAN", "step", add("SPAN", "chain", parent) if kind == 2 else parent)
        i += 1
    return {"data": rows[:count], "meta": {"cursor": None}}


EXPECTED = Expected(
    agents=Expectation(include=("agent_1", "agent_2"), exclude=("clarification",), strict=False),
    tools=Expectation(include=("tool_0", "tool_4"), exclude=("web_search",)),
    trajectory=TrajectorySpec(tools=tuple(f"tool_{i % 20}" for i in range(0, 80, 4)), flow="research"),
)


def validate(page: dict[str, Any]) -> int:
    trace = trace_from_observations([page])
    WorkflowValidator().validate(EXPECTED, trace)
    assert EXPECTED.trajectory is not None
    score_trajectory(EXPECTED.trajectory, trace)
    return len(trace.tools)


def cpu_seconds(page: dict[str, Any]) -> float:
    started = time.process_time()
    validate(page)
    return time.process_time() - started


def peak_bytes(page: dict[str, Any]) -> int:
    """Measured in a separate run: tracemalloc itself slows allocation several-fold."""
    tracemalloc.start()
    validate(page)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    page = synthetic_page(args.observations)
    tools = validate(page)  # warm-up
    cpu_ms = [cpu_seconds(page) * 1000 for _ in range(args.repeat)]
    peak_mb = peak_bytes(page) / 1e6
    print(f"validate: {args.observations} observations ({tools} tools), {args.repeat} runs")
    print(
        f"  CPU time    median {statistics.median(cpu_ms):.1f} ms, max {max(cpu_ms):.1f} ms  (goal <= 250 ms)"
    )
    print(f"  extra memory peak {peak_mb:.1f} MB (tracemalloc)  (goal <= 100 MB)")


if __name__ == "__main__":
    main()
