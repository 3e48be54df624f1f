"""Per-agent analysis on small built traces: attribution, each check, the schema's source, figures."""

from __future__ import annotations

from typing import Any

from evaluator.metrics.agents import analyze_agents, effective_agent_tools, enclosing_agents
from evaluator.trace import Observation, build_trace
from evaluator.trace.tool_definitions import ToolDefinition
from evaluator.trace.usage import Usage
from tests.builders import TraceBuilder

ADD = ToolDefinition(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "minimum": 0}},
        "required": ["a", "b"],
    },
)


def _analysis(builder: TraceBuilder, **kwargs: Any) -> Any:
    return analyze_agents(builder.build(), builder.observations, **kwargs)


def _kinds(analysis: Any) -> list[tuple[str, str | None, str, str | None]]:
    return [(i.kind, i.agent, i.tool, i.parameter) for i in analysis.issues]


def test_each_tool_call_belongs_to_its_nearest_enclosing_agent_and_hand_offs_are_not_calls() -> None:
    builder = TraceBuilder()
    supervisor = builder.agent("supervisor")
    builder.tool("transfer_to_math", parent=supervisor)
    math = builder.agent("math", parent=supervisor)
    step = builder.add("SPAN", "step", parent=math)
    add = builder.tool("add", parent=step, input={"a": 1, "b": 2})
    loose = builder.tool("lookup")
    analysis = _analysis(builder)
    assert [(c.agent, c.tool, c.observation_id) for c in analysis.calls] == [
        ("math", "add", add),
        (None, "lookup", loose),
    ]
    assert analysis.per_agent["math"].tool_calls == 1
    assert analysis.per_agent["supervisor"].tool_calls == 0
    assert analysis.per_agent["supervisor"].tool_use_score is None  # no tool calls: not measured


def test_a_tool_outside_the_agents_declared_list_is_unauthorized_with_high_severity() -> None:
    builder = TraceBuilder()
    math = builder.agent("Math Expert")
    search = builder.tool("web_search", parent=math)
    builder.tool("add", parent=math)
    research = builder.agent("research")
    builder.tool("add", parent=research)  # research declares no tools: not checked
    analysis = _analysis(builder, agent_tools={"math_expert": ["add", "multiply"]})
    assert _kinds(analysis) == [("unauthorized_tool", "Math Expert", "web_search", None)]
    issue = analysis.issues[0]
    assert issue.severity == "high"
    assert issue.observation_id == search
    assert "add, multiply" in issue.message
    assert analysis.per_agent["Math Expert"].tool_use_score == 0.5


def test_invented_omitted_and_wrong_arguments_are_each_reported_once() -> None:
    builder = TraceBuilder()
    math = builder.agent("math")
    builder.tool("add", parent=math, input={"a": 1, "b": "x", "c": 3})
    builder.tool("add", parent=math, input={"a": 1})
    builder.tool("add", parent=math, input={"a": 1, "b": -1})
    builder.tool("add", parent=math, input={"a": 1, "b": 2})
    analysis = _analysis(builder, declared_schemas={"add": ADD})
    assert _kinds(analysis) == [
        ("invalid_value", "math", "add", "b"),
        ("hallucinated_parameter", "math", "add", "c"),
        ("missing_parameter", "math", "add", "b"),
        ("invalid_value", "math", "add", "b"),
    ]
    assert {i.severity for i in analysis.issues} == {"medium"}
    wrong_type, invented, missing, out_of_range = (i.message for i in analysis.issues)
    assert '"x"' in wrong_type and "integer" in wrong_type
    assert "a, b" in invented
    assert "requires 'b'" in missing
    assert "minimum" in out_of_range
    assert analysis.per_agent["math"].tool_use_score == 0.25


def test_extra_arguments_a_schema_lets_in_are_not_hallucinated() -> None:
    open_schema = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": True}
    patterned = {"type": "object", "properties": {}, "patternProperties": {"^x_": {}}}
    builder = TraceBuilder()
    agent = builder.agent("a")
    builder.tool("search", parent=agent, input={"q": "s", "lang": "en"})
    builder.tool("tag", parent=agent, input={"x_color": "red"})
    schemas = {
        "search": ToolDefinition(name="search", parameters=open_schema),
        "tag": ToolDefinition(name="tag", parameters=patterned),
    }
    assert _analysis(builder, declared_schemas=schemas).issues == ()


def test_values_are_validated_by_json_schema_with_refs_enums_and_nested_objects() -> None:
    schema = {
        "type": "object",
        "$defs": {"Unit": {"enum": ["C", "F"]}},
        "properties": {
            "unit": {"$ref": "#/$defs/Unit"},
            "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
        },
    }
    builder = TraceBuilder()
    agent = builder.agent("weather")
    builder.tool("forecast", parent=agent, input={"unit": "K", "where": {}})
    builder.tool("forecast", parent=agent, input={"unit": "C", "where": {"lat": 1.5}})
    analysis = _analysis(
        builder, declared_schemas={"forecast": ToolDefinition(name="forecast", parameters=schema)}
    )
    assert _kinds(analysis) == [
        ("invalid_value", "weather", "forecast", "unit"),
        ("invalid_value", "weather", "forecast", "where"),
    ]
    assert "'C', 'F'" in analysis.issues[0].message


def test_a_broken_property_schema_says_nothing_about_the_call() -> None:
    broken = {"type": "object", "properties": {"n": {"type": "no-such-type"}, "m": {"$ref": "#/$defs/X"}}}
    builder = TraceBuilder()
    builder.tool("t", parent=builder.agent("a"), input={"n": 1, "m": 2})
    assert (
        _analysis(builder, declared_schemas={"t": ToolDefinition(name="t", parameters=broken)}).issues == ()
    )


def test_a_tool_observation_at_error_level_is_a_tool_error() -> None:
    builder = TraceBuilder()
    failed = builder.tool("add", parent=builder.agent("math"), level="ERROR", status_message="boom")
    analysis = _analysis(builder)
    assert _kinds(analysis) == [("tool_error", "math", "add", None)]
    assert analysis.issues[0].observation_id == failed
    assert "boom" in analysis.issues[0].message


def test_the_schema_the_agents_model_was_given_wins_over_the_file_and_no_schema_is_not_checked() -> None:
    recorded = {"type": "function", "function": {"name": "add", "parameters": {"properties": {"x": {}}}}}
    builder = TraceBuilder()
    math = builder.agent("math")
    builder.add("GENERATION", "model", parent=math, input={"messages": [], "tools": [recorded]})
    builder.tool("add", parent=math, input={"x": 1})  # fine by the recorded schema, not by the file's
    builder.tool("search", parent=math, input={"anything": 1})  # no schema anywhere
    analysis = _analysis(builder, declared_schemas={"add": ADD})
    assert analysis.issues == ()
    assert analysis.unchecked_tools == ("search",)


def test_a_call_without_an_argument_object_is_not_checked_for_parameters() -> None:
    builder = TraceBuilder()
    builder.tool("add", parent=builder.agent("math"), input="1 + 2")
    assert _analysis(builder, declared_schemas={"add": ADD}).issues == ()


def test_a_scenario_narrows_or_widens_an_agents_tools() -> None:
    target = {"math_expert": ["add"], "research": ["web_search"]}
    merged = effective_agent_tools(target, {"Math Expert": ["add", "multiply"]})
    assert merged == {"research": ("web_search",), "Math Expert": ("add", "multiply")}
    assert effective_agent_tools(target, None) == {"math_expert": ("add",), "research": ("web_search",)}


def _timed(builder: TraceBuilder, obs_id: str, start: float, end: float) -> None:
    index = next(i for i, o in enumerate(builder.observations) if o.id == obs_id)
    old = builder.observations[index]
    builder.observations[index] = Observation(
        id=old.id, parent_id=old.parent_id, type=old.type, name=old.name, start_time=start, end_time=end
    )


def test_latency_sums_an_agents_calls_counting_a_call_nested_in_its_own_once() -> None:
    builder = TraceBuilder()
    outer = builder.agent("planner")
    middle = builder.agent("executor", parent=outer)
    inner = builder.agent("planner", parent=middle)
    again = builder.agent("planner")
    untimed = builder.agent("untimed")
    _timed(builder, outer, 10.0, 12.0)
    _timed(builder, middle, 10.5, 11.5)
    _timed(builder, inner, 11.0, 11.25)
    _timed(builder, again, 20.0, 20.5)
    index = next(i for i, o in enumerate(builder.observations) if o.id == untimed)
    builder.observations[index] = Observation(
        id=untimed, parent_id=builder.root, type="AGENT", name="untimed"
    )
    analysis = _analysis(builder)
    assert analysis.per_agent["planner"].latency_ms == 2500.0
    assert analysis.per_agent["executor"].latency_ms == 1000.0
    assert analysis.per_agent["untimed"].latency_ms is None


def test_tokens_and_cost_are_the_agents_own_generations_and_none_when_not_reported() -> None:
    builder = TraceBuilder()
    lead = builder.agent("lead")
    builder.add(
        "GENERATION",
        "chat",
        parent=lead,
        attributes={
            "gen_ai.usage.input_tokens": "10",
            "gen_ai.usage.output_tokens": "5",
            "operation.cost": "0.5",
        },
    )
    helper = builder.agent("helper", parent=lead)
    builder.add("GENERATION", "chat", parent=helper, attributes={"llm.token_count.total": "7"})
    langfuse_generation = builder.add("GENERATION", "chat", parent=helper)
    quiet = builder.agent("quiet")
    builder.add("GENERATION", "chat", parent=quiet)
    analysis = _analysis(builder, usage={langfuse_generation: Usage(tokens=3, cost=0.25)})
    lead_figures, helper_figures, quiet_figures = (analysis.per_agent[n] for n in ("lead", "helper", "quiet"))
    assert (lead_figures.tokens, lead_figures.cost) == (15, 0.5)
    assert (helper_figures.tokens, helper_figures.cost) == (10, 0.25)
    assert (quiet_figures.tokens, quiet_figures.cost) == (None, None)


def test_the_result_shape_per_agent() -> None:
    builder = TraceBuilder()
    failed = builder.tool("add", parent=builder.agent("math"), level="ERROR")
    document = _analysis(builder).to_json()
    entry = document["per_agent"]["math"]
    assert entry["tool_calls"] == 1 and entry["tool_use_score"] == 0.0
    assert entry["issues"] == [
        {
            "kind": "tool_error",
            "severity": "medium",
            "tool": "add",
            "parameter": None,
            "message": "add failed (error); expected it to succeed",
            "observation_id": failed,
        }
    ]
    assert (entry["tokens"], entry["cost"]) == (None, None)


def test_observe_inputs_are_named_by_the_schemas_parameters_in_order() -> None:
    builder = TraceBuilder()
    agent = builder.agent("math")
    builder.tool("add", parent=agent, input={"args": [1, 2], "kwargs": {}})
    builder.tool("add", parent=agent, input={"args": [1], "kwargs": {"c": 3}})
    builder.tool("add", parent=agent, input={"args": [1, 2, 3], "kwargs": {}})  # cannot be named: unchecked
    analysis = _analysis(builder, declared_schemas={"add": ADD})
    assert _kinds(analysis) == [
        ("hallucinated_parameter", "math", "add", "c"),
        ("missing_parameter", "math", "add", "b"),
    ]


def test_enclosing_agents_survive_a_parent_outside_the_trace_and_a_cycle() -> None:
    def obs(obs_id: str, parent: str | None, type_: str = "SPAN") -> Observation:
        return Observation(id=obs_id, parent_id=parent, type=type_, name=obs_id)

    observations = [
        obs("a", None, "AGENT"),
        obs("s", "a"),
        obs("t", "s", "TOOL"),
        obs("orphan", "gone"),
        obs("x", "y"),
        obs("y", "x"),
    ]
    builder_free = build_trace("t", observations)
    owners = enclosing_agents(observations, builder_free.agents)
    assert owners == {"a": None, "s": "a", "t": "a", "orphan": None, "x": None, "y": None}
