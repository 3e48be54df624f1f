"""Benchmark: every deterministic per-agent check on a synthetic trace of 10,000 observations.

Measures `analyze_agents` from the normalized trace and its observations (building the trace is
bench_validate's): tool calls attributed to their agents, tool definitions read from the generations
(OpenTelemetry GenAI attributes and LangChain's tool messages), each call checked (declared tools,
parameters, values by JSON Schema, errors), and each agent's figures (latency, tokens, cost).
Goal: < 100 ms CPU. Prints the figures (and the first run's, which compiles the tools' schemas once
for the process); asserts nothing.

    .venv/bin/python benchmarks/bench_agent_checks.py [--observations 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from evaluator.metrics.agents import AgentAnalysis, analyze_agents, coordinate, intent_drift, roll_up_scores
from evaluator.scenarios import Expectation, Expected
from evaluator.trace import Observation, Trace, build_trace

AGENTS = 50
TOOLS = 20


def _parameters(tool: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "mode": {"enum": ["fast", "deep"]},
        },
        "required": ["query"] if tool % 2 else ["query", "limit"],
    }


def _definitions() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": f"tool_{t}", "description": "...", "parameters": _parameters(t)},
        }
        for t in range(TOOLS)
    ]


_ARGUMENTS = (  # right, right, invented, omitted, wrong type, out of range
    {"query": "q", "limit": 5},
    {"query": "q", "limit": 5, "mode": "fast"},
    {"query": "q", "limit": 5, "verbose": True},
    {"limit": 5},
    {"query": "q", "limit": "five"},
    {"query": "q", "limit": 500},
)


def synthetic_observations(count: int) -> list[Observation]:
    """A root span, an orchestrator, 50 agents, each with tool calls (right ones and every kind of
    misuse), generations that record the tool definitions and usage, and nested spans."""
    observations: list[Observation] = []
    genai = json.dumps([{"type": "function", **d["function"]} for d in _definitions()])
    langchain = [{"role": "user", "content": "q"}, *({"role": "tool", "content": d} for d in _definitions())]

    def add(type_: str, name: str, parent: str | None, **extra: Any) -> str:
        obs_id = f"{len(observations):016x}"
        start = 1_000.0 + len(observations) * 0.001
        observations.append(
            Observation(
                id=obs_id,
                parent_id=parent,
                type=type_,
                name=name,
                start_time=start,
                end_time=start + 0.5,
                **extra,
            )
        )
        return obs_id

    root = add("SPAN", "scenario", None)
    orchestrator = add("AGENT", "orchestrator", root)
    agents = [add("AGENT", f"agent_{i}", orchestrator) for i in range(AGENTS)]
    i = 0
    while len(observations) < count:
        parent = agents[(i // 4) % AGENTS]  # each agent: a tool call, a model call, spans
        kind = i % 4
        if kind == 0:
            level = "ERROR" if i % 40 == 0 else "DEFAULT"
            add("TOOL", f"tool_{i % TOOLS}", parent, input=_ARGUMENTS[i % len(_ARGUMENTS)], level=level)
        elif kind == 1:
            usage = {"gen_ai.usage.input_tokens": "100", "gen_ai.usage.output_tokens": "20"}
            if i % 8 == 1:
                add("GENERATION", "chat", parent, attributes={"gen_ai.tool.definitions": genai, **usage})
            else:
                add("GENERATION", "chat", parent, input=langchain, attributes=usage)
        else:
            add("SPAN", "step", add("SPAN", "chain", parent) if kind == 2 else parent)
        i += 1
    return observations[:count]


AGENT_TOOLS = {f"agent_{i}": [f"tool_{t}" for t in range(TOOLS) if t != i % TOOLS] for i in range(AGENTS)}


def analyse(trace: Trace, observations: list[Observation]) -> AgentAnalysis:
    return analyze_agents(trace, observations, agent_tools=AGENT_TOOLS)


def cpu_ms(trace: Trace, observations: list[Observation]) -> float:
    started = time.process_time()
    analyse(trace, observations)
    return (time.process_time() - started) * 1000


EXPECTED = Expected(
    agents=Expectation(include=("agent_0",), allow=tuple(f"agent_{i}" for i in range(1, AGENTS, 2))),
    tools=Expectation(exclude=("tool_0",), strict=False),
)


def roll_up_ms(trace: Trace, observations: list[Observation]) -> float:
    """Coordination, intent drift and the roll-up of a field (entries as the metric makes them)."""
    field = {
        "agents": {name: {"tool_use_score": 0.5, "observation_ids": ["x"]} for name in AGENT_TOOLS},
        "tool_use_score": 0.5,
    }
    started = time.process_time()
    coordination = coordinate(trace, observations)
    drift = intent_drift(trace, EXPECTED)
    field["coordination"] = coordination.to_json() if coordination is not None else None
    field["intent_drift_score"] = drift.score if drift is not None else None
    roll_up_scores(field)
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    observations = synthetic_observations(args.observations)
    trace = build_trace("f" * 32, observations)
    cold = cpu_ms(trace, observations)  # the first trace compiles its tools' schemas
    result = analyse(trace, observations)
    runs = [cpu_ms(trace, observations) for _ in range(args.repeat)]
    print(
        f"agent checks: {args.observations} observations ({len(result.calls)} tool calls, "
        f"{len(result.issues)} issues, {len(result.per_agent)} agents), {args.repeat} runs"
    )
    print(f"  CPU time    median {statistics.median(runs):.1f} ms, max {max(runs):.1f} ms  (goal < 100 ms)")
    print(f"  first run   {cold:.1f} ms (schemas compiled; later traces reuse them)")
    rolled = [roll_up_ms(trace, observations) for _ in range(args.repeat)]
    print(f"  coordination, intent drift and roll-up: median {statistics.median(rolled):.1f} ms CPU more")


if __name__ == "__main__":
    main()
