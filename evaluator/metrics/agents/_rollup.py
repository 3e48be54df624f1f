"""How a trace's per-agent parts roll up into its scores (DESIGN.md, Per-agent analysis): from the
result's `per_agent` field, whatever filled it, so that the per-agent judge, when it has added its
values (an agent's `reasoning`, `handoff`, `response_quality`; `coordination.judge`), rolls the field up
again and its values enter the scores:

- each agent's `score` (`agent_score`) and `recommendations`;
- `coordination_score` = the mean of what was measured of `coordination.rule_score` (the
  deterministic problems, `_coordination`) and `coordination.judge` (the judge's view); null when
  neither was;
- `overall_score` from the parts (`_scores`); `intent_drift_score` is the analysis' own, as is.

Pure: a field in, a new field out. `rolled_scores` gives the scores a rolled-up field yields. The run
figures of the trace's three scores, and their gates, are `_gates.TRACE_FIGURES`; a dialogue's turns
are rolled up per session by `_session.roll_up_session`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.metrics.agents._recommendations import recommend
from evaluator.metrics.agents._scores import ScoreWeights, agent_score, overall_score
from evaluator.metrics.base import ScoreDefinition, ScoreValue, number

RECOMMEND_BELOW = 0.7  # the seed's threshold, `[per_agent] recommend_below`

ROLLED_UP_DEFINITIONS = (
    ScoreDefinition(
        name="agent_score",
        data_type="NUMERIC",
        description="An agent's weighted score (0-1) over its measured parts: tool use, reasoning, "
        "handoff, response quality; on its observation (comment: the parts)",
    ),
    ScoreDefinition(
        name="coordination_score",
        data_type="NUMERIC",
        description="How well the agents worked together (0-1): 1 - coordination steps with a problem "
        "(duplicated work, ping-pong hand-offs, context lost) / steps, with the judge's view when it ran",
    ),
    ScoreDefinition(
        name="intent_drift_score",
        data_type="NUMERIC",
        description="Lower is better (0-1): the share of the trace's agent and tool calls outside what "
        "the scenario expects",
    ),
    ScoreDefinition(
        name="overall_score",
        data_type="NUMERIC",
        description="The weighted average (0-1) of the trace's measured per-agent parts: tool use, "
        "coordination, reasoning, 1 - intent drift (and conversation)",
    ),
)


def roll_up_scores(
    field_: Mapping[str, Any], weights: ScoreWeights | None = None, recommend_below: float = RECOMMEND_BELOW
) -> dict[str, Any]:
    """`field_` with its rolled-up values (see the module docstring) set afresh."""
    weights = weights or ScoreWeights()
    agents = field_.get("agents")
    entries = dict(agents) if isinstance(agents, Mapping) else {}
    scored = {
        name: {**entry, "score": agent_score(entry, weights.agent)} if isinstance(entry, Mapping) else entry
        for name, entry in entries.items()
    }
    rolled: dict[str, Any] = {**field_, "agents": scored, "coordination_score": coordination_score(field_)}
    rolled["overall_score"] = overall_score(rolled, weights.overall)
    advice = recommend(rolled, recommend_below)
    rolled["agents"] = {
        name: {**entry, "recommendations": advice.get(str(name), [])} if isinstance(entry, Mapping) else entry
        for name, entry in scored.items()
    }
    return rolled


def coordination_score(field_: Mapping[str, Any]) -> float | None:
    """The mean of the measured coordination views: the rule's and the judge's."""
    coordination = field_.get("coordination")
    if not isinstance(coordination, Mapping):
        return None
    views = [v for key in ("rule_score", "judge") if (v := number(coordination.get(key))) is not None]
    return sum(views) / len(views) if views else None


def rolled_scores(field_: Mapping[str, Any]) -> list[ScoreValue]:
    """`agent_score` on each scored agent's first observation; `coordination_score`,
    `intent_drift_score` and `overall_score` on the trace; only what was measured."""
    found: list[ScoreValue] = []
    agents = field_.get("agents")
    for name, entry in agents.items() if isinstance(agents, Mapping) else ():
        score = number(entry.get("score")) if isinstance(entry, Mapping) else None
        ids = entry.get("observation_ids") if isinstance(entry, Mapping) else None
        if score is None or not isinstance(ids, list) or not ids:
            continue
        found.append(
            ScoreValue(
                name="agent_score",
                value=score,
                comment=f"{name}: " + _parts(entry),
                metadata={"agent": name},
                observation_id=str(ids[0]),
            )
        )
    for key in ("coordination_score", "intent_drift_score", "overall_score"):
        value = number(field_.get(key))
        if value is not None:
            found.append(ScoreValue(name=key, value=value, comment=_trace_comment(key, field_)))
    return found


def _parts(entry: Mapping[str, Any]) -> str:
    """What an agent's score was made of ("tool_use_score 0.50; reasoning not measured, ...")."""
    keys = ("tool_use_score", "reasoning", "handoff", "response_quality")
    measured = [f"{k} {v:.2f}" for k in keys if (v := number(entry.get(k))) is not None]
    missing = [k for k in keys if number(entry.get(k)) is None]
    return "; ".join([*measured, *([f"not measured: {', '.join(missing)}"] if missing else [])])


def _trace_comment(key: str, field_: Mapping[str, Any]) -> str | None:
    if key == "coordination_score":
        coordination = field_.get("coordination")
        problems = coordination.get("problems") if isinstance(coordination, Mapping) else None
        messages = [str(p.get("message")) for p in problems or () if isinstance(p, Mapping)]
        return "; ".join(messages) or "no coordination problem found"
    if key == "intent_drift_score":
        drift = field_.get("intent_drift")
        drifted = drift.get("drifted") if isinstance(drift, Mapping) else None
        steps = drift.get("steps") if isinstance(drift, Mapping) else None
        names = [f"{d.get('kind')} {d.get('name')}" for d in drifted or () if isinstance(d, Mapping)]
        return f"{len(names)} of {steps} steps outside the scenario's expectation" + (
            f": {', '.join(names)}" if names else ""
        )
    return None
