"""What `compare` gates of the per-agent analysis besides the run's `agent_tool_use` (DESIGN.md,
Per-agent analysis: "`compare` gates on them"): each agent's own figures, as breakdowns by agent (the
agents come from the results, so they cannot be fixed figures), and the trace's coordination, intent
drift and overall scores, as figures. Each is read where it is measured (a number) and left out where
it is not (null): an agent a run did not have is not a drop. Which agents a result has is read from its
entries, measured or not: an agent whose figures only the judge gives is not "removed" by a run that was
not judged. The weighted scores (an agent's `score`, the trace's `overall_score` and
`coordination_score`) weigh the per-agent judge's parts when it ran: a judged result and one not judged
are not compared on them (`judge_parts`, their `Figure.basis`).

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

__all__ = ["AGENT_BREAKDOWNS", "AGENT_FIELDS", "TRACE_FIELDS", "TRACE_FIGURES", "judge_parts"]

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


_JUDGE_PARTS = ("reasoning", "handoff", "response_quality")  # an agent's parts the per-agent judge gives
WITH_THE_JUDGE = "with the per-agent judge's parts"
WITHOUT_THE_JUDGE = "without the per-agent judge's parts"


def judge_parts(document: Mapping[str, Any]) -> str:
    """Whether the per-agent judge's parts (an agent's `reasoning`, `handoff`, `response_quality`, the
    judge's view of coordination) are in the result's composite scores: a run judged and one not judged
    weigh different parts, so their `overall_score`s are not comparable (`Figure.basis`)."""
    field = document.get("per_agent")
    coordination = field.get("coordination") if isinstance(field, Mapping) else None
    judged = isinstance(coordination, Mapping) and number(coordination.get("judge")) is not None
    judged = judged or any(
        isinstance(entry, Mapping) and any(number(entry.get(part)) is not None for part in _JUDGE_PARTS)
        for entry in _agents(document).values()
    )
    return WITH_THE_JUDGE if judged else WITHOUT_THE_JUDGE


def _agent_names(document: Mapping[str, Any]) -> list[str]:
    """The agents the result has an entry for, whatever was measured of them."""
    return [str(agent) for agent in _agents(document)]


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
        members=_agent_names,
        basis=judge_parts if name == "score" else None,  # the weighted one: the judge's parts or not
    )
    for name, label, threshold in AGENT_FIELDS
)

TRACE_FIGURES: tuple[Figure, ...] = tuple(
    Figure(
        name=name,
        value=number_at("per_agent", name),
        rate=True,
        gate=Gate(label=label, direction="up" if direction == "up" else "down", threshold=threshold),
        basis=None if name == "intent_drift_score" else judge_parts,  # drift is the analysis' own
    )
    for name, label, direction, threshold in TRACE_FIELDS
)
