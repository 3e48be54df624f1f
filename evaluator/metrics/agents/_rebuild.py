"""A result's `per_agent` field rebuilt from its scores in Langfuse (`report --source langfuse`,
`compare --source langfuse`).

A single trace's: each agent from its `agent_tool_use` score (on the agent's observation: the value is
its `tool_use_score`; the metadata carries its `tool_calls`, `latency_ms`, `tokens` and `cost`) and
its `agent_score` (its `score`) and the per-agent judge's `agent_reasoning`, `agent_handoff` and
`agent_response_quality`, each issue from the `tool_issue` score of its tool call (the metadata
lists the call's issues; a score posted before it did gives its first kind and the comment), and the
trace's `coordination_score`, `intent_drift_score` and `overall_score`. A dialogue's, from its session
scores: `dialogue_agent_tool_use` (whose metadata lists the agent's issues too), `dialogue_agent_score`
and the `dialogue_` means of the trace figures, and the issues of calls no agent made from its turns'
`tool_issue` scores (each row naming its `turn`: `reports.remote` adds it).

What no score carries is not measured: an agent that made no tool call and has no `agent_score` is not
in Langfuse at all; the trace's `tool_use_score` is over the agents' calls and the faulty calls no agent
made (a clean call outside every agent leaves no score); `unchecked_tools` is null. Recommendations and
the trace's `coordination` and `intent_drift` details are no score (`coordination_score` and
`intent_drift_score` carry only theirs, the details in the comment): not rebuilt, so a rebuilt agent has
no `recommendations`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.metrics.agents._issues import ISSUE_KINDS, SEVERITY
from evaluator.metrics.base import number

__all__ = ["per_agent_from_scores"]

_TRACE = ("coordination_score", "intent_drift_score", "overall_score")
_SESSION = frozenset(f"dialogue_{name}" for name in ("agent_tool_use", "agent_score", *_TRACE))
_FIGURES = ("turns", "tool_calls", "latency_ms", "tokens", "cost")
_JUDGED = frozenset(("agent_reasoning", "agent_handoff", "agent_response_quality"))


def _metadata(row: Mapping[str, Any]) -> Mapping[str, Any]:
    found = row.get("metadata")
    return found if isinstance(found, Mapping) else {}


def _observation(row: Mapping[str, Any]) -> str | None:
    subject = row.get("subject")
    found = (
        subject.get("id") if isinstance(subject, Mapping) and subject.get("kind") == "observation" else None
    )
    return found if isinstance(found, str) else None


def _entry() -> dict[str, Any]:
    return {"tool_calls": None, "issues": [], "tool_use_score": None, "latency_ms": None, "tokens": None}


def _issues(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A `tool_issue` score's issues: as its metadata lists them, else its first kind and comment."""
    listed = _metadata(row).get("issues")
    if isinstance(listed, list) and all(isinstance(i, Mapping) for i in listed):
        return [dict(i) for i in listed]
    kind = row.get("value")
    if kind not in ISSUE_KINDS:
        return []
    return [
        {
            "kind": kind,
            "severity": SEVERITY[kind],
            "tool": _metadata(row).get("tool"),
            "parameter": None,
            "message": row.get("comment"),
            "observation_id": _observation(row),
        }
    ]


def _took_issues(
    row: Mapping[str, Any],
    agents: dict[str, dict[str, Any]],
    unattributed: list[dict[str, Any]],
    *,
    session: bool,
) -> bool:
    """A `tool_issue` score's issues, into its agent's entry or among those of calls no agent made
    (True), or not taken (False): in a dialogue an agent's issues come with its session score; those of
    calls no agent made come only from the turns' scores, each with its turn and trace."""
    if not session:
        entry = _agent_of(agents, row)
        (entry["issues"] if entry is not None else unattributed).extend(_issues(row))
        return True
    if isinstance(_metadata(row).get("agent"), str):
        return False
    unattributed.extend(_in_turn(issue, row) for issue in _issues(row))
    return True


def _in_turn(issue: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """A dialogue turn's issue as the session's issues are: with its `turn` and `trace_id`."""
    subject = row.get("subject")
    trace_id = subject.get("traceId") if isinstance(subject, Mapping) else None
    return {**issue, "turn": row.get("turn"), "trace_id": trace_id}


def _agent_of(agents: dict[str, dict[str, Any]], row: Mapping[str, Any]) -> dict[str, Any] | None:
    name = _metadata(row).get("agent")
    return agents.setdefault(name, _entry()) if isinstance(name, str) else None


def per_agent_from_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The `per_agent` field from a scenario's scores (see the module docstring); None without any
    per-agent score."""
    session = any(str(row.get("name")) in _SESSION for row in rows)
    prefix = "dialogue_" if session else ""
    agents: dict[str, dict[str, Any]] = {}
    unattributed: list[dict[str, Any]] = []
    trace: dict[str, float | None] = dict.fromkeys(_TRACE)
    found = False
    for row in rows:
        name = str(row.get("name"))
        if name == f"{prefix}agent_tool_use" and (entry := _agent_of(agents, row)) is not None:
            metadata = _metadata(row)
            entry["tool_use_score"] = number(row.get("value"))
            entry.update({k: metadata[k] for k in _FIGURES if k in metadata})
            if session and isinstance(metadata.get("issues"), list):
                entry["issues"] = list(metadata["issues"])
        elif name == f"{prefix}agent_score" and (entry := _agent_of(agents, row)) is not None:
            entry["score"] = number(row.get("value"))
        elif name in _JUDGED and not session and (entry := _agent_of(agents, row)) is not None:
            entry[name.removeprefix("agent_")] = number(row.get("value"))  # the per-agent judge's
        elif name == "tool_issue" and _took_issues(row, agents, unattributed, session=session):
            pass  # its issues are in their agent's entry, or among those of calls no agent made
        elif name.removeprefix(prefix) in _TRACE:
            trace[name.removeprefix(prefix)] = number(row.get("value"))
        else:
            continue
        found = True
    if not found:
        return None
    for entry in agents.values():
        entry.setdefault("cost", None)
        entry.setdefault("score", None)
    in_order = sorted(unattributed, key=_turn)  # a dialogue's in turn order, as its roll-up lists them
    return {"agents": agents, **_totals(agents, in_order), "unchecked_tools": None, **trace}


def _turn(issue: Mapping[str, Any]) -> int:
    turn = issue.get("turn")
    return turn if isinstance(turn, int) else 0


def _totals(agents: Mapping[str, Mapping[str, Any]], unattributed: list[dict[str, Any]]) -> dict[str, Any]:
    """The trace's (or session's) tool calls, `tool_use_score` and issues, from what the scores say."""
    issues = [issue for entry in agents.values() for issue in entry["issues"]] + unattributed
    faulty = len({(issue.get("turn"), issue.get("observation_id")) for issue in issues})
    counted = [entry["tool_calls"] for entry in agents.values() if isinstance(entry.get("tool_calls"), int)]
    outside = len({(issue.get("turn"), issue.get("observation_id")) for issue in unattributed})
    calls = sum(counted) + outside if counted or outside else None
    score = (calls - faulty) / calls if calls else None
    return {
        "tool_calls": calls,
        "tool_use_score": score,
        "issues": len(issues),
        "unattributed_issues": unattributed,
    }
