"""Which agent made each tool call, and which agent each observation belongs to: the nearest
enclosing agent under the trace's convention, as `build_trace` read it (hand-offs are not tool
calls: the trace keeps them apart)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.trace import AgentCall, Observation, Trace


@dataclass(frozen=True, kw_only=True, slots=True)
class AttributedCall:
    """One tool call and the agent that made it (None: no agent encloses the call). `arguments` is
    None when the trace holds no argument object for it (then its parameters cannot be checked)."""

    agent: str | None
    tool: str
    observation_id: str
    arguments: Mapping[str, Any] | None
    error: str | None  # the tool observation's status message when its level is ERROR


def attribute_tool_calls(trace: Trace) -> tuple[AttributedCall, ...]:
    """The trace's tool calls in call order, each with the agent that made it."""
    return tuple(
        AttributedCall(agent=t.agent, tool=t.name, observation_id=t.id, arguments=t.arguments, error=t.error)
        for t in trace.tools
    )


def enclosing_agents(
    observations: Iterable[Observation], agents: Iterable[AgentCall]
) -> dict[str, str | None]:
    """For every observation id, the observation id of its nearest enclosing agent call (None: none
    encloses it); an agent call's own entry is the agent call around it. Linear: each observation's
    way up stops at the first ancestor already known. A parent id outside the trace makes a root; a
    cycle is cut where it closes."""
    by_id = {o.id: o for o in observations}
    agent_ids = {a.id for a in agents}
    owner: dict[str, str | None] = {}
    for obs_id in by_id:
        if obs_id in owner:
            continue
        path, found = _climb(obs_id, by_id, agent_ids, owner)
        for step in path:
            owner[step] = found
    return owner


def _climb(
    start: str, by_id: Mapping[str, Observation], agent_ids: set[str], owner: Mapping[str, str | None]
) -> tuple[list[str], str | None]:
    """The observations from `start` up to the first agent (or known owner, or root), and that agent."""
    path = [start]
    seen = {start}
    parent = by_id[start].parent_id
    while parent is not None and parent in by_id and parent not in seen:
        if parent in agent_ids:
            return path, parent
        if parent in owner:
            return path, owner[parent]
        path.append(parent)
        seen.add(parent)
        parent = by_id[parent].parent_id
    return path, None
