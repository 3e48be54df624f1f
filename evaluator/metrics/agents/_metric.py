"""The per-agent metric (DESIGN.md, Per-agent analysis), its deterministic part: the result's
`per_agent` field, the `agent_tool_use` score on each agent's observation and a `tool_issue` score on
each faulty tool call's observation, and the run figures `agent_tool_use` and `agent_tool_issues`.

It informs and never decides: DESIGN.md gives tool issues no pass rule, so a scenario passes or fails
on its other checks, as with the judges' scores. It applies to a trace only when its target declares
`agent_tools` or `tool_schemas`, its scenario `expected.agent_tools`, or the trace has tool calls and
records tool definitions; and only where the trace's observations are at hand (`MetricContext.detail`).
Nothing is read from the trace otherwise: a run that checks no agent pays nothing.

An agent's `reasoning`, `handoff` and `response_quality` are the per-agent judge's (judge/agents.py,
its own result field `agent_judge`): the judge stage puts them in (`with_judged`), null until it does
and where it does not run. The other judge-based parts (an agent's score, recommendations,
coordination, intent drift, the overall score) are not built yet: null (recommendations: []).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluator.metrics.agents._analysis import AgentAnalysis, analyze_agents, effective_agent_tools
from evaluator.metrics.agents._figures import AgentFigures
from evaluator.metrics.agents._gates import AGENT_BREAKDOWNS, TRACE_FIGURES
from evaluator.metrics.agents._issues import ISSUE_KINDS, ToolIssue
from evaluator.metrics.agents._rebuild import per_agent_from_scores
from evaluator.metrics.agents._session import SESSION_DEFINITIONS, SessionAgentsVerdict, roll_up
from evaluator.metrics.base import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
    SessionContext,
    number_at,
)
from evaluator.trace import DEFINING_TYPES, ToolDefinition, TraceDetail, recorded_definitions

__all__ = ["PerAgentMetric", "PerAgentVerdict", "TargetAgents"]

# The judge-based parts of an agent's entry: not measured until the per-agent judge fills the first three.
_JUDGED = ("reasoning", "handoff", "response_quality")
_NOT_BUILT: dict[str, Any] = {**dict.fromkeys(_JUDGED), "score": None}


@dataclass(frozen=True, kw_only=True)
class TargetAgents:
    """What a target declares for the per-agent analysis: the tools each agent may use, and the
    `tool_schemas` file's definitions by tool name."""

    agent_tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    schemas: Mapping[str, ToolDefinition] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PerAgentVerdict:
    """The analysis of one trace. `unattributed`: issues of tool calls no agent encloses (they belong
    to no agent's entry); `unchecked_tools`: tools called with no schema anywhere (their parameters
    were not checked)."""

    analysis: AgentAnalysis
    trace_id: str = ""  # the trace analysed (a dialogue's roll-up links each turn's issues to it)
    # The per-agent judge's values by agent (`reasoning`, `handoff`, `response_quality`), and its
    # view of the coordination (the mean of its agents'): put in after the judge stage (`with_judged`).
    judged: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    judged_coordination: float | None = None

    def with_judged(
        self, agents: Mapping[str, Mapping[str, float | None]], coordination: float | None
    ) -> PerAgentVerdict:
        """This verdict with the per-agent judge's values (see `judged`)."""
        return replace(self, judged=agents, judged_coordination=coordination)

    @property
    def passed(self) -> None:
        return None  # informs, never decides (see the module docstring)

    @property
    def unattributed(self) -> tuple[ToolIssue, ...]:
        return tuple(issue for issue in self.analysis.issues if issue.agent is None)

    @property
    def tool_use(self) -> float | None:
        """Tool calls with no issue / tool calls, over the whole trace (None without tool calls)."""
        calls = self.analysis.calls
        if not calls:
            return None
        faulty = {issue.observation_id for issue in self.analysis.issues}
        return sum(1 for call in calls if call.observation_id not in faulty) / len(calls)

    def to_json(self) -> dict[str, Any]:
        agents = {
            name: {**figures.to_json(), **_NOT_BUILT, **self._judged_of(name), "recommendations": []}
            for name, figures in self.analysis.per_agent.items()
        }
        return {
            "agents": agents,
            "tool_calls": len(self.analysis.calls),
            "tool_use_score": self.tool_use,
            "issues": len(self.analysis.issues),
            "unattributed_issues": [issue.to_json() for issue in self.unattributed],
            "unchecked_tools": list(self.analysis.unchecked_tools),
            "coordination_score": None,
            "intent_drift_score": None,
            "overall_score": None,
        }

    def _judged_of(self, agent: str) -> dict[str, float | None]:
        values = self.judged.get(agent, {})
        return {name: values[name] for name in _JUDGED if name in values}

    def scores(self) -> list[ScoreValue]:
        found = [
            ScoreValue(
                name="agent_tool_use",
                value=figures.tool_use_score,
                comment=f"{name}: {figures.tool_calls - _faulty(figures.issues)} of {figures.tool_calls} "
                "tool calls without an issue",
                metadata={"agent": name, **_figures(figures)},
                observation_id=figures.observation_ids[0],
            )
            for name, figures in self.analysis.per_agent.items()
            if figures.tool_use_score is not None and figures.observation_ids
        ]
        return found + _issue_scores(self.analysis.issues)

    def problems(self) -> list[str]:
        return [f"{issue.agent or 'no agent'}: {issue.message}" for issue in self.analysis.issues]


def _figures(figures: AgentFigures) -> dict[str, Any]:
    """What an agent's score carries besides its value, for its entry rebuilt from Langfuse."""
    return {
        "tool_calls": figures.tool_calls,
        "latency_ms": figures.latency_ms,
        "tokens": figures.tokens,
        "cost": figures.cost,
    }


def _faulty(issues: tuple[ToolIssue, ...]) -> int:
    return len({issue.observation_id for issue in issues})


def _issue_scores(issues: tuple[ToolIssue, ...]) -> list[ScoreValue]:
    """One `tool_issue` per faulty call, on its observation: the first issue's kind (checks run in
    severity order), every issue in the comment."""
    by_call: dict[str, list[ToolIssue]] = {}
    for issue in issues:
        by_call.setdefault(issue.observation_id, []).append(issue)
    return [
        ScoreValue(
            name="tool_issue",
            value=found[0].kind,
            comment="; ".join(issue.message for issue in found),
            metadata={
                "agent": found[0].agent,
                "tool": found[0].tool,
                "kinds": [i.kind for i in found],
                "issues": [i.to_json() for i in found],
            },
            observation_id=observation_id,
        )
        for observation_id, found in by_call.items()
    ]


class PerAgentMetric(MetricBase):
    """Per-agent analysis of each trace (see the module docstring). `targets`: each target's
    declarations, by target name."""

    key = "per_agent"
    definitions = (
        ScoreDefinition(
            name="agent_tool_use",
            data_type="NUMERIC",
            description="An agent's tool calls without an issue / its tool calls (0-1), on its observation",
        ),
        ScoreDefinition(
            name="tool_issue",
            data_type="CATEGORICAL",
            description="What is wrong with a tool call (on the tool's observation); its comment says what "
            "was expected",
            categories=ISSUE_KINDS,
        ),
        *SESSION_DEFINITIONS,  # a dialogue's roll-up (`evaluate_session`)
    )
    # No column in the history tables (they stay narrow): `report --by agent` shows them per agent.
    figures = (
        Figure(
            name="agent_tool_use",
            value=number_at("per_agent", "tool_use_score"),
            rate=True,
            gate=Gate(label="agents' tool use", threshold=5.0),
        ),
        Figure(name="agent_tool_issues", value=number_at("per_agent", "issues")),
        *TRACE_FIGURES,  # the trace's coordination, intent drift and overall scores, gated when measured
    )
    breakdowns = AGENT_BREAKDOWNS  # each agent's own figures, gated by compare

    def __init__(self, targets: Mapping[str, TargetAgents] | None = None) -> None:
        self._targets = dict(targets or {})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PerAgentMetric) and self._targets == other._targets

    def __hash__(self) -> int:
        return hash(self.key)

    def evaluate(self, context: MetricContext) -> PerAgentVerdict | None:
        declared = self._targets.get(context.scenario.target, _NOTHING)
        scenario_tools = context.scenario.expected.agent_tools
        configured = bool(declared.agent_tools or declared.schemas or scenario_tools)
        if context.detail is None or not (configured or context.trace.tools):
            return None  # no observations at hand, or nothing declared and no tool call
        detail = context.detail()
        if not configured and not _records_definitions(detail):
            return None
        analysis = analyze_agents(
            context.trace,
            detail.observations,
            agent_tools=effective_agent_tools(declared.agent_tools, scenario_tools),
            declared_schemas=declared.schemas,
            usage=detail.usage,
        )
        return PerAgentVerdict(analysis=analysis, trace_id=context.trace.id)

    def stored_view(self, field: Mapping[str, Any]) -> object:
        """Without the agents' latencies (Langfuse stores times to the millisecond) and the per-agent
        judge's values (the stored trace is not judged again)."""
        agents = field.get("agents")
        if not isinstance(agents, Mapping):
            return field
        left_out = {"latency_ms", *_JUDGED}
        timeless = {
            name: {k: v for k, v in entry.items() if k not in left_out} for name, entry in agents.items()
        }
        return {**field, "agents": timeless}

    def evaluate_session(self, context: SessionContext) -> SessionAgentsVerdict | None:
        """A dialogue's roll-up over its turns' analyses (metrics/agents/_session.py); None when no
        turn was analysed."""
        turns = [
            (index, verdict.trace_id, verdict.to_json())
            for index, verdicts in enumerate(context.traces)
            if isinstance(verdict := verdicts.get(self.key), PerAgentVerdict)
        ]
        field = roll_up(turns)
        return SessionAgentsVerdict(field=field) if field is not None else None

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        return per_agent_from_scores(list(scores.values()))

    def from_score_rows(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """Every agent's entry, from its observation-level scores (metrics/agents/_rebuild.py)."""
        return per_agent_from_scores(rows)


_NOTHING = TargetAgents()


def _records_definitions(detail: TraceDetail) -> bool:
    """Whether any observation records tool definitions (stops at the first that does)."""
    return any(obs.type in DEFINING_TYPES and recorded_definitions(obs) for obs in detail.observations)
