"""What `compare` gates of the per-agent analysis besides the run's `agent_tool_use` (DESIGN.md,
Per-agent analysis: "`compare` gates on them"): each agent's own figures, as breakdowns by agent (the
agents come from the results, so they cannot be fixed figures), and the trace's coordination, intent
drift and overall scores, as figures. Each is read where it is measured (a number) and left out where
it is not (null): an agent a run did not have is not a drop.

Default thresholds, in points of a 0-1 figure (`[compare.thresholds]` overrides them by name, and a
breakdown's by `<name>.<agent>` too): an agent's `tool_use_score`, 5 (as the run's `agent_tool_use`);
the judged and weighted scores (an agent's `score`, `reasoning`, `handoff`, `response_quality`, the
trace's `overall_score` and `coordination_score`), 10: the quality gate's 0.1, the seed's half a level
of a five-level rubric; `intent_drift_score` (lower is better) rising by more than 10.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evaluator.metrics.base import Breakdown, Figure, Gate, number, number_at

__all__ = ["AGENT_BREAKDOWNS", "AGENT_FIELDS", "TRACE_FIELDS", "TRACE_FIGURES"]

_TOOL_USE_POINTS = 5.0
_SCORE_POINTS = 10.0

# An agent's numeric fields compare gates: (field in its entry, label, threshold in points).
AGENT_FIELDS: tuple[tuple[str, str, float], ...] = (
    ("tool_use_score", "tool use", _TOOL_USE_POINTS),
    ("score", "agent score", _SCORE_POINTS),
    ("reasoning", "reasoning", _SCORE_POINTS),
    ("handoff", "hand-off", _SCORE_POINTS),
    ("response_quality", "response quality", _SCORE_POINTS),
)
# The trace's: (field of `per_agent`, label, bad direction, threshold in points).
TRACE_FIELDS: tuple[tuple[str, str, str, float], ...] = (
    ("overall_score", "overall score", "down", _SCORE_POINTS),
    ("coordination_score", "coordination", "down", _SCORE_POINTS),
    ("intent_drift_score", "intent drift", "up", _SCORE_POINTS),
)


def _agents(document: Mapping[str, Any]) -> Mapping[str, Any]:
    field = document.get("per_agent")
    agents = field.get("agents") if isinstance(field, Mapping) else None
    return agents if isinstance(agents, Mapping) else {}


def _per_agent(name: str) -> Callable[[Mapping[str, Any]], dict[str, float]]:
    def groups(document: Mapping[str, Any]) -> dict[str, float]:
        found = {}
        for agent, entry in _agents(document).items():
            value = number(entry.get(name)) if isinstance(entry, Mapping) else None
            if value is not None:
                found[str(agent)] = value
        return found

    return groups


AGENT_BREAKDOWNS: tuple[Breakdown, ...] = tuple(
    Breakdown(
        name=f"agent_{name}",
        groups=_per_agent(name),
        group_kind="agent",
        rate=True,
        gate=Gate(label=label, threshold=threshold),
    )
    for name, label, threshold in AGENT_FIELDS
)

TRACE_FIGURES: tuple[Figure, ...] = tuple(
    Figure(
        name=name,
        value=number_at("per_agent", name),
        rate=True,
        gate=Gate(label=label, direction="up" if direction == "up" else "down", threshold=threshold),
    )
    for name, label, direction, threshold in TRACE_FIELDS
)
