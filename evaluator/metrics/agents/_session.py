"""The per-agent analysis of a dialogue as a whole (DESIGN.md, Per-agent analysis: "for a dialogue the
same runs per turn and per session"): each turn's trace is analysed as a single-turn scenario's is (its
`per_agent` field, in the turn), and the dialogue's own `per_agent` field rolls the turns up, per agent:

- `turns`: the turns the agent ran in; `tool_calls` and the `issues` (each with its `turn` and
  `trace_id`, so a link finds its observation): over the session;
- `tool_use_score` = its tool calls with no issue / its tool calls, over the session (null without
  tool calls), the same rule as a turn's, not a mean of the turns' scores;
- `latency_ms`, `tokens`, `cost`: the sums over its turns when every one of them measured it, else
  null (a partial sum would pass for the whole);
- any other numeric field (its weighted `score`, `_rollup`'s; the judged `reasoning`, `handoff`,
  `response_quality`): the mean over the turns that measured it (null when none did);
- lists are joined in turn order: `recommendations` (each with its `turn` and `trace_id`, as an issue)
  and `observation_ids`.

At the session: `turns` analysed, `tool_calls`, `tool_use_score` over every call, `issues`, the
`unattributed_issues` and `unchecked_tools` of all turns, and the means of the turns'
`coordination_score`, `intent_drift_score` and `overall_score` over the turns that measured them (null
when none did). The turns' `coordination` and `intent_drift` details stay in the turns' own fields.

Its session scores follow the dialogue's naming (`dialogue_<key>` for a dialogue's figure): per agent,
`dialogue_agent_tool_use` and `dialogue_agent_score` (metadata `agent`), and
`dialogue_coordination_score`, `dialogue_intent_drift_score`, `dialogue_overall_score`; each only when
measured. A turn's own scores (`agent_tool_use`, `tool_issue`...) stay on the turn's trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import ScoreDefinition, ScoreValue, number

__all__ = ["SESSION_DEFINITIONS", "SessionAgentsVerdict", "roll_up_session"]

_SUMMED = ("latency_ms", "tokens", "cost")
_OWN = frozenset({"tool_calls", "issues", "tool_use_score", "turns", *_SUMMED})
_TRACE_MEANS = ("coordination_score", "intent_drift_score", "overall_score")

SESSION_DEFINITIONS = (
    ScoreDefinition(
        name="dialogue_agent_tool_use",
        data_type="NUMERIC",
        description="An agent's tool calls without an issue / its tool calls over a dialogue's turns (0-1); "
        "metadata agent",
        level="session",
    ),
    ScoreDefinition(
        name="dialogue_agent_score",
        data_type="NUMERIC",
        description="An agent's score, the mean over a dialogue's turns that measured it (0-1); "
        "metadata agent",
        level="session",
    ),
    *(
        ScoreDefinition(
            name=f"dialogue_{key}",
            data_type="NUMERIC",
            description=f"The trace's {key}, the mean over a dialogue's turns that measured it (0-1)"
            + (" (lower is better)" if key == "intent_drift_score" else ""),
            level="session",
        )
        for key in _TRACE_MEANS
    ),
)


def _faulty(issues: Sequence[Mapping[str, Any]]) -> int:
    """The tool calls with an issue (a call may have several)."""
    return len({(issue.get("turn"), issue.get("observation_id")) for issue in issues})


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


class _Agent:
    """One agent's entries, turn by turn."""

    def __init__(self) -> None:
        self.turns = 0
        self.tool_calls = 0
        self.issues: list[dict[str, Any]] = []
        self.sums: dict[str, float | None] = dict.fromkeys(_SUMMED, 0.0)
        self.means: dict[str, list[float]] = {}
        self.lists: dict[str, list[Any]] = {}

    def add(self, entry: Mapping[str, Any], where: Mapping[str, Any]) -> None:
        self.turns += 1
        calls = entry.get("tool_calls")
        self.tool_calls += calls if isinstance(calls, int) else 0
        issues = entry.get("issues")
        self.issues += (
            [{**i, **where} for i in issues if isinstance(i, Mapping)] if isinstance(issues, list) else []
        )
        for name in _SUMMED:
            value, total = number(entry.get(name)), self.sums[name]
            self.sums[name] = None if value is None or total is None else total + value
        for name, value in entry.items():
            if name in _OWN:
                continue
            if (found := number(value)) is not None:
                self.means.setdefault(name, []).append(found)
            elif isinstance(value, list):
                self.lists.setdefault(name, []).extend(
                    {**v, **where} if isinstance(v, Mapping) else v for v in value
                )
            else:
                self.means.setdefault(name, [])  # measured nowhere yet: null unless a turn has it

    def to_json(self) -> dict[str, Any]:
        clean = self.tool_calls - _faulty(self.issues)
        sums = {
            name: (round(value, 6) if name != "tokens" else int(value)) if value is not None else None
            for name, value in self.sums.items()
        }
        return {
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "issues": self.issues,
            "tool_use_score": round(clean / self.tool_calls, 6) if self.tool_calls else None,
            **sums,
            **{name: _mean(values) for name, values in self.means.items()},
            **self.lists,
        }


def roll_up_session(turns: Sequence[tuple[int, str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The dialogue's `per_agent` field from its turns' (turn index, trace id, `per_agent` field), in
    turn order; None when no turn was analysed."""
    if not turns:
        return None
    agents: dict[str, _Agent] = {}
    calls = 0
    unattributed: list[dict[str, Any]] = []
    unchecked: dict[str, None] = {}
    means: dict[str, list[float]] = {key: [] for key in _TRACE_MEANS}
    for turn, trace_id, field in turns:
        where = {"turn": turn, "trace_id": trace_id}
        found = field.get("agents")
        for name, entry in (found if isinstance(found, Mapping) else {}).items():
            if isinstance(entry, Mapping):
                agents.setdefault(str(name), _Agent()).add(entry, where)
        outside = field.get("unattributed_issues")
        unattributed += (
            [{**i, **where} for i in outside if isinstance(i, Mapping)] if isinstance(outside, list) else []
        )
        turn_calls = field.get("tool_calls")
        if isinstance(turn_calls, int):
            calls += turn_calls
        for tool in field.get("unchecked_tools") or ():
            unchecked[str(tool)] = None
        for key in _TRACE_MEANS:
            if (value := number(field.get(key))) is not None:
                means[key].append(value)
    entries = {name: agent.to_json() for name, agent in agents.items()}
    issues = [i for entry in entries.values() for i in entry["issues"]] + unattributed
    faulty = _faulty(issues)
    return {
        "turns": len(turns),
        "agents": entries,
        "tool_calls": calls,
        "tool_use_score": round((calls - faulty) / calls, 6) if calls else None,
        "issues": len(issues),
        "unattributed_issues": unattributed,
        "unchecked_tools": list(unchecked),
        **{key: _mean(values) for key, values in means.items()},
    }


@dataclass(frozen=True, kw_only=True)
class SessionAgentsVerdict:
    """The dialogue's per-agent roll-up (`field`, see the module docstring). Informs, never decides."""

    field: Mapping[str, Any]

    @property
    def passed(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return dict(self.field)

    def scores(self) -> list[ScoreValue]:
        found = []
        for name, entry in self.field["agents"].items():
            tool_use, score = number(entry.get("tool_use_score")), number(entry.get("score"))
            if tool_use is not None:
                found.append(
                    ScoreValue(
                        name="dialogue_agent_tool_use",
                        value=tool_use,
                        comment=f"{name}: {entry['tool_calls'] - _faulty(entry['issues'])} of "
                        f"{entry['tool_calls']} tool calls without an issue over {entry['turns']} turns",
                        metadata={"agent": name, **_figures(entry)},
                    )
                )
            if score is not None:
                found.append(ScoreValue(name="dialogue_agent_score", value=score, metadata={"agent": name}))
        for key in _TRACE_MEANS:
            if (value := number(self.field.get(key))) is not None:
                found.append(ScoreValue(name=f"dialogue_{key}", value=value))
        return found

    def problems(self) -> list[str]:
        return []  # each turn's issues are its own problems


def _figures(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What a per-agent score carries for a rebuild from Langfuse: the figures that are no score."""
    return {name: entry.get(name) for name in ("turns", "tool_calls", "issues", *_SUMMED)}
