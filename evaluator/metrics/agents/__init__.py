"""Per-agent analysis, its deterministic core (DESIGN.md, Per-agent analysis): each tool call
attributed to the agent that made it; the checks of each call (unauthorized tool, hallucinated or
missing parameter, invalid value, tool error) against the agents' declared tools and the tools'
schemas (recorded in the trace, else declared in a file); each agent's tool calls, `tool_use_score`,
latency, tokens and cost; coordination, intent drift, and the weighted scores and recommendations the
per-agent field rolls up into (`roll_up_scores`, which the per-agent judge calls again with its
values); a dialogue's turns rolled up per session (the metric's `evaluate_session`)."""

from evaluator.metrics.agents._analysis import (
    AgentAnalysis,
    AgentTools,
    analyze_agents,
    effective_agent_tools,
)
from evaluator.metrics.agents._attribution import AttributedCall, attribute_tool_calls, enclosing_agents
from evaluator.metrics.agents._checks import CompiledSchema, DeclaredTools, call_arguments, check_call
from evaluator.metrics.agents._coordination import Coordination, CoordinationProblem, coordinate
from evaluator.metrics.agents._drift import DriftedStep, IntentDrift, intent_drift
from evaluator.metrics.agents._figures import AgentFigures
from evaluator.metrics.agents._issues import ISSUE_KINDS, IssueKind, Severity, ToolIssue
from evaluator.metrics.agents._metric import PerAgentMetric, PerAgentVerdict, TargetAgents
from evaluator.metrics.agents._recommendations import recommend
from evaluator.metrics.agents._rollup import (
    RECOMMEND_BELOW,
    coordination_score,
    roll_up_scores,
    rolled_scores,
)
from evaluator.metrics.agents._schemas import ToolSchemas, tool_schemas
from evaluator.metrics.agents._scores import (
    AgentWeights,
    OverallWeights,
    ScoreWeights,
    agent_score,
    overall_score,
    weighted_average,
)

__all__ = [
    "ISSUE_KINDS",
    "RECOMMEND_BELOW",
    "AgentAnalysis",
    "AgentFigures",
    "AgentTools",
    "AgentWeights",
    "AttributedCall",
    "CompiledSchema",
    "Coordination",
    "CoordinationProblem",
    "DeclaredTools",
    "DriftedStep",
    "IntentDrift",
    "IssueKind",
    "OverallWeights",
    "PerAgentMetric",
    "PerAgentVerdict",
    "ScoreWeights",
    "Severity",
    "TargetAgents",
    "ToolIssue",
    "ToolSchemas",
    "agent_score",
    "analyze_agents",
    "attribute_tool_calls",
    "call_arguments",
    "check_call",
    "coordinate",
    "coordination_score",
    "effective_agent_tools",
    "enclosing_agents",
    "intent_drift",
    "overall_score",
    "recommend",
    "roll_up_scores",
    "rolled_scores",
    "tool_schemas",
    "weighted_average",
]
