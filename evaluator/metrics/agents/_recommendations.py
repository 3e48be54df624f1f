"""Recommendations (the seed's Recommendations Engine), each naming its agent and listing the
observations that caused it. From one trace's `per_agent` field, for each agent, when a score is below
the threshold (0.7 by default, `[per_agent] recommend_below`):

- tool_use_score < threshold: "Consider improving tool selection logic for {agent}"; its faulty calls.
- handoff < threshold: "Agent {agent} should pass more context when delegating"; its agent calls.
- reasoning < threshold: "Agent {agent}'s reasoning could be more structured"; its agent calls.
- coordination_score < threshold: "Agents are not coordinating well - consider clearer role
  definitions", for each agent in a coordination problem, with the problems' observations (every
  agent, with its agent calls, when no problem was found and the judge's view lowered the score).

Each message ends with the score and what lowered it. The seed's rows on RDM and CCM detections
(users correcting or re-asking) are about a conversation's users, not its agents: no row here.
A score that was not measured recommends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.metrics.base import number

_TOOL_USE = "Consider improving tool selection logic for {agent}"
_HANDOFF = "Agent {agent} should pass more context when delegating"
_REASONING = "Agent {agent}'s reasoning could be more structured"
_COORDINATION = "Agents are not coordinating well - consider clearer role definitions"


def recommend(field_: Mapping[str, Any], threshold: float) -> dict[str, list[dict[str, Any]]]:
    """Each agent's recommendations ({"message", "observation_ids"}), by agent name, in the order of the
    table above (an agent with none has [])."""
    agents = field_.get("agents")
    entries = (
        {str(k): v for k, v in agents.items() if isinstance(v, Mapping)}
        if isinstance(agents, Mapping)
        else {}
    )
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in entries}
    for name, entry in entries.items():
        own = _ids(entry.get("observation_ids"))
        tool_use = number(entry.get("tool_use_score"))
        if tool_use is not None and tool_use < threshold:
            issues = entry.get("issues")
            faulty = (
                _ids(i.get("observation_id") for i in issues if isinstance(i, Mapping))
                if isinstance(issues, list)
                else []
            )
            kinds = (
                sorted({str(i.get("kind")) for i in issues if isinstance(i, Mapping)})
                if isinstance(issues, list)
                else []
            )
            found[name].append(
                _recommendation(_TOOL_USE, name, f"tool_use_score {tool_use:.2f}: {', '.join(kinds)}", faulty)
            )
        for key, text in (("handoff", _HANDOFF), ("reasoning", _REASONING)):
            value = number(entry.get(key))
            if value is not None and value < threshold:
                found[name].append(_recommendation(text, name, f"{key} {value:.2f}, the judge's", own))
    coordination = number(field_.get("coordination_score"))
    if coordination is not None and coordination < threshold:
        for name, (kinds, ids) in _coordination_by_agent(field_, entries).items():
            if name in found:  # a hand-off's target that never ran has no entry
                detail = f"coordination_score {coordination:.2f}; {name}: {', '.join(kinds)}"
                found[name].append(_recommendation(_COORDINATION, name, detail, ids))
    return found


def _recommendation(template: str, agent: str, detail: str, ids: list[str]) -> dict[str, Any]:
    return {"message": f"{template.format(agent=agent)} ({detail})", "observation_ids": ids}


def _coordination_by_agent(
    field_: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]
) -> dict[str, tuple[list[str], list[str]]]:
    """For each agent in a coordination problem: the problems' kinds and observations. Without any
    problem (the judge's view lowered the score): every agent, with its own calls."""
    coordination = field_.get("coordination")
    problems = coordination.get("problems") if isinstance(coordination, Mapping) else None
    kinds_of: dict[str, dict[str, None]] = {}  # dicts as ordered sets: a trace can have many problems
    ids_of: dict[str, dict[str, None]] = {}
    for problem in problems if isinstance(problems, list) else ():
        if not isinstance(problem, Mapping):
            continue
        kind = str(problem.get("kind")).replace("_", " ")
        listed = problem.get("observation_ids")
        ids = [i for i in listed if isinstance(i, str)] if isinstance(listed, list) else []
        for agent in problem.get("agents") or ():
            kinds_of.setdefault(str(agent), {})[kind] = None
            seen = ids_of.setdefault(str(agent), {})
            for observation in ids:  # dicts as ordered sets, as above
                seen[observation] = None
    by_agent = {agent: (list(kinds), list(ids_of[agent])) for agent, kinds in kinds_of.items()}
    if by_agent:
        return by_agent
    return {
        name: (["the judge's view"], _ids(entry.get("observation_ids"))) for name, entry in entries.items()
    }


def _ids(values: Any) -> list[str]:
    """The strings among `values`, without repeats, in order."""
    if not isinstance(values, Iterable) or isinstance(values, (str, bytes)):
        return []
    return list(dict.fromkeys(v for v in values if isinstance(v, str)))
