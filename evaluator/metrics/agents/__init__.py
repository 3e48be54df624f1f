"""Per-agent analysis, its deterministic core (DESIGN.md, Per-agent analysis): each tool call
attributed to the agent that made it; the checks of each call (unauthorized tool, hallucinated or
missing parameter, invalid value, tool error) against the agents' declared tools and the tools'
schemas (recorded in the trace, else declared in a file); each agent's tool calls, `tool_use_score`,
latency, tokens and cost."""

from evaluator.metrics.agents._analysis import (
    AgentAnalysis,
    AgentTools,
    analyze_agents,
    effective_agent_tools,
)
from evaluator.metrics.agents._attribution import AttributedCall, attribute_tool_calls, enclosing_agents
from evaluator.metrics.agents._checks import CompiledSchema, DeclaredTools, call_arguments, check_call
from evaluator.metrics.agents._figures import AgentFigures
from evaluator.metrics.agents._issues import ISSUE_KINDS, IssueKind, Severity, ToolIssue
from evaluator.metrics.agents._metric import PerAgentMetric, PerAgentVerdict, TargetAgents
from evaluator.metrics.agents._schemas import ToolSchemas, tool_schemas

__all__ = [
    "ISSUE_KINDS",
    "AgentAnalysis",
    "AgentFigures",
    "AgentTools",
    "AttributedCall",
    "CompiledSchema",
    "DeclaredTools",
    "IssueKind",
    "PerAgentMetric",
    "PerAgentVerdict",
    "Severity",
    "TargetAgents",
    "ToolIssue",
    "ToolSchemas",
    "analyze_agents",
    "attribute_tool_calls",
    "call_arguments",
    "check_call",
    "effective_agent_tools",
    "enclosing_agents",
    "tool_schemas",
]
