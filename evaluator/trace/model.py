"""The normalized trace: what a run did, built the same way from every source (see `sources` and
`capture`).

Rules (DESIGN.md, Trace model): agents are AGENT observations and tools TOOL observations (types compared
case-insensitively), named by the observation name. An agent with no AGENT ancestor is an *entry agent*.
The tool path is the TOOL observations in start order. The flow is the `flow` metadata value of the
earliest observation that has one, else the name of the first agent that is not an entry agent.
Missing or unknown fields degrade: no type reads as SPAN, no start time sorts first, in input order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

AGENT = "AGENT"
TOOL = "TOOL"
ERROR_LEVEL = "ERROR"
FLOW_KEY = "flow"


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    id: str
    parent_id: str | None
    type: str
    name: str
    start_time: float | None = None  # seconds since the epoch
    end_time: float | None = None
    level: str = "DEFAULT"
    status_message: str | None = None
    input: Any = None
    output: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    prompt_name: str | None = None
    prompt_version: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentCall:
    name: str
    entry: bool
    start_time: float | None
    end_time: float | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    name: str
    agent: str | None  # the nearest enclosing agent
    input: Any
    output: Any
    start_time: float | None
    end_time: float | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Trace:
    id: str
    name: str | None
    agents: tuple[AgentCall, ...]
    tools: tuple[ToolCall, ...]
    flow: str | None
    output: Any
    errors: tuple[str, ...]
    prompts: tuple[tuple[str, int], ...]  # prompt versions linked to observations
    start_time: float | None
    end_time: float | None
    observation_count: int

    @property
    def agent_names(self) -> list[str]:
        return [a.name for a in self.agents]

    @property
    def entry_agents(self) -> frozenset[str]:
        return frozenset(a.name for a in self.agents if a.entry)

    @property
    def tool_path(self) -> list[str]:
        return [t.name for t in self.tools]

    @property
    def duration_seconds(self) -> float | None:
        if self.start_time is None or self.end_time is None:
            return None
        return self.end_time - self.start_time


def build_trace(
    trace_id: str,
    observations: Iterable[Observation],
    *,
    name: str | None = None,
    output: Any = None,
) -> Trace:
    """Normalize observations (any order) into a Trace."""
    ordered = sorted(observations, key=_start_order)
    by_id = {o.id: o for o in ordered}
    nearest_agent = _nearest_agent_ancestors(ordered, by_id)
    agents = tuple(
        AgentCall(
            name=o.name,
            entry=nearest_agent[o.id] is None,
            start_time=o.start_time,
            end_time=o.end_time,
            error=_error(o),
        )
        for o in ordered
        if o.type == AGENT
    )
    tools = tuple(
        ToolCall(
            name=o.name,
            agent=_name_of(by_id, nearest_agent[o.id]),
            input=o.input,
            output=o.output,
            start_time=o.start_time,
            end_time=o.end_time,
            error=_error(o),
        )
        for o in ordered
        if o.type == TOOL
    )
    roots = [o for o in ordered if o.parent_id is None or o.parent_id not in by_id]
    starts = [o.start_time for o in ordered if o.start_time is not None]
    ends = [o.end_time for o in ordered if o.end_time is not None]
    return Trace(
        id=trace_id,
        name=name if name is not None else (roots[0].name if roots else None),
        agents=agents,
        tools=tools,
        flow=_flow(ordered, agents),
        output=output if output is not None else (roots[0].output if roots else None),
        errors=tuple(f"{o.name}: {o.status_message or 'error'}" for o in ordered if o.level == ERROR_LEVEL),
        prompts=tuple(
            dict.fromkeys(
                (o.prompt_name, o.prompt_version)
                for o in ordered
                if o.prompt_name and o.prompt_version is not None
            )
        ),
        start_time=min(starts) if starts else None,
        end_time=max(ends) if ends else None,
        observation_count=len(ordered),
    )


def _start_order(obs: Observation) -> tuple[float, float]:
    """Start time, then end time: Langfuse stores milliseconds, so calls made back to back can share a
    start time, and the one that ended first most likely started first. (sorted() is stable: remaining
    ties keep the source's order.) A missing start sorts first."""
    start = -1.0 if obs.start_time is None else obs.start_time
    return start, float("inf") if obs.end_time is None else obs.end_time


def _nearest_agent_ancestors(
    ordered: Sequence[Observation], by_id: Mapping[str, Observation]
) -> dict[str, str | None]:
    """For every observation, the id of its nearest AGENT ancestor (None: there is none). O(n).

    Walking up stops at the first AGENT parent, so every observation on the walked path shares the
    answer; memoising it makes the whole pass linear even for deep trees.
    """
    memo: dict[str, str | None] = {}
    for obs in ordered:
        path: dict[str, None] = {}  # ordered, with O(1) membership for the cycle check
        current = obs
        while True:
            if current.id in memo:
                answer = memo[current.id]
                break
            path[current.id] = None
            parent = by_id.get(current.parent_id) if current.parent_id else None
            if parent is None or parent.id in path:  # a root, or a cycle in bad input
                answer = None
                break
            if parent.type == AGENT:
                answer = parent.id
                break
            current = parent
        memo.update(dict.fromkeys(path, answer))
    return memo


def _name_of(by_id: Mapping[str, Observation], obs_id: str | None) -> str | None:
    return by_id[obs_id].name if obs_id is not None else None


def _error(obs: Observation) -> str | None:
    return (obs.status_message or "error") if obs.level == ERROR_LEVEL else None


def _flow(ordered: Sequence[Observation], agents: Sequence[AgentCall]) -> str | None:
    for obs in ordered:
        value = obs.metadata.get(FLOW_KEY)
        if value is not None and value != "":
            return str(value)
    return next((a.name for a in agents if not a.entry), None)
