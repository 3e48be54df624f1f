"""The deterministic per-agent analysis of one trace (DESIGN.md, Per-agent analysis): every tool call
attributed to its agent and checked, and each agent's figures. Pure: the trace, its observations and
the declarations in, a value out."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from evaluator.metrics.agents._attribution import AttributedCall, attribute_tool_calls, enclosing_agents
from evaluator.metrics.agents._checks import CompiledSchema, DeclaredTools, check_call
from evaluator.metrics.agents._figures import (
    AgentFigures,
    generation_usage,
    generations_by_agent,
    latency_ms,
    tool_use_score,
)
from evaluator.metrics.agents._issues import ToolIssue
from evaluator.metrics.agents._schemas import ToolSchemas, tool_schemas
from evaluator.trace import AgentCall, Observation, ToolDefinition, Trace, Usage, normalize_name

AgentTools = Mapping[str, Collection[str]]  # agent name -> the tools it may use
_Owned = TypeVar("_Owned", AttributedCall, ToolIssue)


@dataclass(frozen=True, kw_only=True)
class AgentAnalysis:
    """`calls`: every tool call with its agent, in call order; `issues`: every issue, in call order;
    `per_agent`: each agent that ran, by name, in first-call order; `unchecked_tools`: tools called
    with no schema in the trace or the file (their parameters were not checked)."""

    calls: tuple[AttributedCall, ...]
    issues: tuple[ToolIssue, ...]
    per_agent: Mapping[str, AgentFigures]
    unchecked_tools: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"per_agent": {name: figures.to_json() for name, figures in self.per_agent.items()}}


def effective_agent_tools(target: AgentTools, scenario: AgentTools | None) -> dict[str, tuple[str, ...]]:
    """The target's `agent_tools`, with each agent the scenario's `expected.agent_tools` names given
    the scenario's list instead (narrowed or widened for that scenario)."""
    merged = {agent: tuple(tools) for agent, tools in target.items()}
    for agent, tools in (scenario or {}).items():
        merged = {k: v for k, v in merged.items() if normalize_name(k) != normalize_name(agent)}
        merged[agent] = tuple(tools)
    return merged


def analyze_agents(
    trace: Trace,
    observations: Sequence[Observation],
    *,
    agent_tools: AgentTools | None = None,
    declared_schemas: Mapping[str, ToolDefinition] | None = None,
    usage: Mapping[str, Usage] | None = None,
) -> AgentAnalysis:
    """Check every tool call of `trace` (built from `observations`) and figure each agent.
    `agent_tools`: the effective declaration (see `effective_agent_tools`); agents it does not name
    are not checked for authorization. `declared_schemas`: the `tool_schemas` file's, used where the
    trace records no definition. `usage`: tokens and cost by observation id where the observations'
    attributes do not hold them (the Langfuse SDK's own generations)."""
    owners = enclosing_agents(observations, trace.agents)
    names = {agent.id: agent.name for agent in trace.agents}
    schemas = tool_schemas(observations, owners, names, declared_schemas)
    calls = attribute_tool_calls(trace)
    issues, unchecked = _check_all(calls, _declared(agent_tools or {}), schemas)
    generations = generations_by_agent(observations, owners, names)
    calls_of, issues_of = _by_agent(calls), _by_agent(issues)
    per_agent = {
        name: _figures(
            name,
            agent_calls,
            calls=calls_of.get(name, []),
            issues=issues_of.get(name, []),
            generations=generations.get(name, []),
            owners=owners,
            usage=usage,
        )
        for name, agent_calls in _calls_by_agent(trace.agents).items()
    }
    return AgentAnalysis(calls=calls, issues=issues, per_agent=per_agent, unchecked_tools=unchecked)


def _check_all(
    calls: Sequence[AttributedCall], declared: Mapping[str, DeclaredTools], schemas: ToolSchemas
) -> tuple[tuple[ToolIssue, ...], tuple[str, ...]]:
    """Every call's issues, in call order, and the tools no schema was found for (first-call order)."""
    compiled: dict[int, CompiledSchema] = {}  # by definition: each schema compiled once per trace
    unchecked: dict[str, None] = {}
    issues: list[ToolIssue] = []
    for call in calls:
        definition = schemas.lookup(call.agent, call.tool)
        schema = None
        if definition is None:
            unchecked[call.tool] = None
        else:
            schema = compiled.get(id(definition))
            if schema is None:
                schema = compiled[id(definition)] = CompiledSchema.of(definition)
        allowed = declared.get(normalize_name(call.agent)) if call.agent is not None else None
        issues.extend(check_call(call, allowed=allowed, schema=schema))
    return tuple(issues), tuple(unchecked)


def _declared(agent_tools: AgentTools) -> dict[str, DeclaredTools]:
    return {normalize_name(agent): DeclaredTools.of(tools) for agent, tools in agent_tools.items()}


def _by_agent(items: Sequence[_Owned]) -> dict[str | None, list[_Owned]]:
    grouped: dict[str | None, list[_Owned]] = {}
    for item in items:
        grouped.setdefault(item.agent, []).append(item)
    return grouped


def _calls_by_agent(agents: Sequence[AgentCall]) -> dict[str, list[AgentCall]]:
    by_name: dict[str, list[AgentCall]] = {}
    for agent in agents:
        by_name.setdefault(agent.name, []).append(agent)
    return by_name


def _figures(
    name: str,
    agent_calls: Sequence[AgentCall],
    *,
    calls: Sequence[AttributedCall],
    issues: Sequence[ToolIssue],
    generations: Sequence[Observation],
    owners: Mapping[str, str | None],
    usage: Mapping[str, Usage] | None,
) -> AgentFigures:
    spent = generation_usage(generations, usage)
    return AgentFigures(
        agent=name,
        observation_ids=tuple(a.id for a in agent_calls),
        tool_calls=len(calls),
        issues=tuple(issues),
        tool_use_score=tool_use_score(calls, issues),
        latency_ms=latency_ms(agent_calls, owners),
        tokens=spent.tokens,
        cost=spent.cost,
    )
