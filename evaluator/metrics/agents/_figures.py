"""Per-agent deterministic figures (DESIGN.md, Per-agent analysis): tool calls, `tool_use_score`,
latency, tokens and cost. What a trace does not report is None, never 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.agents._attribution import AttributedCall
from evaluator.metrics.agents._issues import ToolIssue
from evaluator.trace import GENERATION, NOT_REPORTED, AgentCall, Observation, Usage, usage_of


@dataclass(frozen=True, kw_only=True)
class AgentFigures:
    """One agent's figures over all its calls in the trace. `tool_use_score` = tool calls with no
    issue / tool calls (None without tool calls); `latency_ms` = the sum of its calls' durations, a
    call inside another call of the same agent counted once (None when no call has both times);
    `tokens`, `cost` = the sums over its own generations (a sub-agent's are the sub-agent's), None
    when none of them reported any."""

    agent: str
    observation_ids: tuple[str, ...]  # its agent calls, in call order
    tool_calls: int
    issues: tuple[ToolIssue, ...]
    tool_use_score: float | None
    latency_ms: float | None
    tokens: int | None
    cost: float | None

    def to_json(self) -> dict[str, Any]:
        """The deterministic part of the agent's entry in the result object's `per_agent`."""
        return {
            "tool_calls": self.tool_calls,
            "issues": [issue.to_json() for issue in self.issues],
            "tool_use_score": self.tool_use_score,
            "latency_ms": self.latency_ms,
            "tokens": self.tokens,
            "cost": self.cost,
        }


def tool_use_score(calls: Sequence[AttributedCall], issues: Iterable[ToolIssue]) -> float | None:
    """Tool calls with no issue / tool calls; None without tool calls."""
    if not calls:
        return None
    faulty = {issue.observation_id for issue in issues}
    return sum(1 for call in calls if call.observation_id not in faulty) / len(calls)


def latency_ms(calls: Sequence[AgentCall], owners: Mapping[str, str | None]) -> float | None:
    """The sum of the calls' durations (ms), leaving out a call nested in another of these calls
    (through any agents between: X -> Y -> X counts the outer X once). `owners`: observation id ->
    the id of its enclosing agent call."""
    own = {call.id for call in calls}
    durations = [
        (call.end_time - call.start_time) * 1000.0
        for call in calls
        if call.start_time is not None and call.end_time is not None and not _nested(call.id, own, owners)
    ]
    return sum(durations) if durations else None


def generation_usage(
    generations: Iterable[Observation], reported: Mapping[str, Usage] | None = None
) -> Usage:
    """The sum of what the generations reported: `reported` (by observation id, e.g. read from the
    captured spans or Langfuse's rows) first, else their attributes."""
    total = NOT_REPORTED
    for obs in generations:
        found = reported.get(obs.id) if reported is not None else None
        total = total + (found if found is not None else usage_of(obs))
    return total


def generations_by_agent(
    observations: Iterable[Observation], owners: Mapping[str, str | None], agent_names: Mapping[str, str]
) -> dict[str, list[Observation]]:
    """The generations each agent (by name) made itself."""
    found: dict[str, list[Observation]] = {}
    for obs in observations:
        owner = owners.get(obs.id) if obs.type == GENERATION else None
        if owner is not None:
            found.setdefault(agent_names[owner], []).append(obs)
    return found


def _nested(call_id: str, own: set[str], owners: Mapping[str, str | None]) -> bool:
    above = owners.get(call_id)
    seen = {call_id}
    while above is not None and above not in seen:
        if above in own:
            return True
        seen.add(above)
        above = owners.get(above)
    return False
