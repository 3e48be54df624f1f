"""The seed's weighted scores (multi-agent-evaluation-plan.md, Score Computation; DESIGN.md, Per-agent
analysis), with the weights re-normalised over the parts that were measured:

    agent_score   = weighted_average(tool_use_score 0.35, reasoning 0.25, handoff 0.20,
                                     response_quality 0.20)                       (one agent's entry)
    overall_score = weighted_average(conversation_score 0.30, tool_use_score 0.25,
                                     coordination_score 0.20, reasoning 0.15,
                                     1 - intent_drift_score 0.10)                 (the trace)

weighted_average = sum(value * weight) / sum(weight) over the parts whose value is measured (not None)
and whose weight is above 0; None when there is none. At the trace, `tool_use_score` is the trace's
(all its tool calls) and `reasoning` the mean of the agents' measured `reasoning`. The weights are
configurable (`[per_agent.weights]`, `[per_agent.agent_weights]`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluator.metrics.base import number


@dataclass(frozen=True, kw_only=True)
class AgentWeights:
    """The weights of an agent's score (the seed's Per-Agent Score Formula)."""

    tool_use: float = 0.35
    reasoning: float = 0.25
    handoff: float = 0.20
    response_quality: float = 0.20


@dataclass(frozen=True, kw_only=True)
class OverallWeights:
    """The weights of the overall score (the seed's Overall Score Formula); `intent_drift` weighs
    1 - intent_drift_score."""

    conversation: float = 0.30
    tool_use: float = 0.25
    coordination: float = 0.20
    reasoning: float = 0.15
    intent_drift: float = 0.10


@dataclass(frozen=True, kw_only=True)
class ScoreWeights:
    agent: AgentWeights = field(default_factory=AgentWeights)
    overall: OverallWeights = field(default_factory=OverallWeights)


def weighted_average(parts: Iterable[tuple[float | None, float]]) -> float | None:
    """The mean of the measured values weighted by their weights, the weights re-normalised to sum 1
    over the measured parts with a weight above 0; None when no part is left."""
    measured = [(value, weight) for value, weight in parts if value is not None and weight > 0]
    total = sum(weight for _, weight in measured)
    if not measured or total <= 0:
        return None
    return sum(value * weight for value, weight in measured) / total


def agent_score(entry: Mapping[str, Any], weights: AgentWeights) -> float | None:
    """One agent's score from its entry in the result's `per_agent.agents`."""
    return weighted_average(
        [
            (number(entry.get("tool_use_score")), weights.tool_use),
            (number(entry.get("reasoning")), weights.reasoning),
            (number(entry.get("handoff")), weights.handoff),
            (number(entry.get("response_quality")), weights.response_quality),
        ]
    )


def overall_score(field_: Mapping[str, Any], weights: OverallWeights) -> float | None:
    """The trace's overall score from the result's `per_agent` field (its `coordination_score` already
    rolled up)."""
    agents = field_.get("agents")
    entries = agents.values() if isinstance(agents, Mapping) else ()
    reasoning = [
        r for e in entries if isinstance(e, Mapping) and (r := number(e.get("reasoning"))) is not None
    ]
    drift = number(field_.get("intent_drift_score"))
    return weighted_average(
        [
            (number(field_.get("conversation_score")), weights.conversation),
            (number(field_.get("tool_use_score")), weights.tool_use),
            (number(field_.get("coordination_score")), weights.coordination),
            (sum(reasoning) / len(reasoning) if reasoning else None, weights.reasoning),
            (1.0 - drift if drift is not None else None, weights.intent_drift),
        ]
    )
