"""`@observe` positional arguments are named by the schema's properties in the order the schema lists
them (a function definition lists them in the signature's order), not in the alphabet's."""

from __future__ import annotations

from evaluator.metrics.agents import analyze_agents
from evaluator.trace.tool_definitions import ToolDefinition
from tests.builders import TraceBuilder

SEARCH = ToolDefinition(
    name="search",
    description="Search papers.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    },
)


def test_positional_arguments_take_the_schemas_property_order() -> None:
    builder = TraceBuilder()
    agent = builder.agent("planner")
    builder.tool("search", parent=agent, input={"args": ["BIRD", 5], "kwargs": {}})
    builder.tool("search", parent=agent, input={"args": [5], "kwargs": {}})  # `query` = 5: wrong type
    analysis = analyze_agents(builder.build(), builder.observations, declared_schemas={"search": SEARCH})
    assert [(i.kind, i.parameter) for i in analysis.issues] == [("invalid_value", "query")]
    assert "its parameters" not in analysis.issues[0].message and "= 5" in analysis.issues[0].message
