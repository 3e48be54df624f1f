"""Trace conventions on captured traces (observations pages saved from the stand-in after real runs:
tests/fixtures/traces) and on small built traces: agents named as authored, plumbing left out,
hand-offs, entry agents, ties, and the server's OTel typing and naming."""

from pathlib import Path

import pytest

from evaluator.metrics import WorkflowValidator, answer_text, final_answer
from evaluator.trace import Observation, TraceRules, build_trace, load_trace_file
from evaluator.trace.otel_mapping import observation_name, observation_type, third_party_attributes
from tests.builders import TraceBuilder, expected

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def test_langgraph_supervisor_agents_are_the_nodes_not_the_plumbing() -> None:
    trace = load_trace_file(FIXTURES / "langgraph_supervisor.json")
    assert trace.convention == "langgraph+langfuse"
    assert trace.agent_names == ["supervisor", "research_expert", "supervisor"]
    assert trace.entry_agents == {"supervisor"}
    assert trace.tool_path == ["web_search"]
    assert [h.to_json() for h in trace.handoffs] == [
        {"from": "supervisor", "to": "research_expert", "via": "transfer_to_research_expert"}
    ]
    assert trace.tools[0].agent == "research_expert"
    assert trace.tools[0].arguments == {"query": "faang"}
    assert {"agent", "call_agent", "LangGraph"} <= trace.names  # present, yet not agents


def test_langgraph_false_avoidance_and_handoff_named_as_tool() -> None:
    trace = load_trace_file(FIXTURES / "langgraph_supervisor.json")
    verdict = WorkflowValidator().validate(
        expected(agents={"exclude": ["research_expert"]}, tools={"include": ["transfer_to_research_expert"]}),
        trace,
    )
    assert verdict.agents.excluded == ()
    assert verdict.agents.unexpected == ("research_expert",)
    assert verdict.tools.included == ("transfer_to_research_expert",)
    assert verdict.tools.unexpected == ("web_search",)  # strict: the scenario did not list it


def test_openinference_workflow_span_is_not_an_agent() -> None:
    trace = load_trace_file(FIXTURES / "openai_agents_openinference.json")
    assert trace.agent_names == ["Triage agent", "Spanish agent"]
    assert trace.entry_agents == {"Triage agent"}
    assert "Agent workflow" in trace.names
    assert [h.target for h in trace.handoffs] == ["Spanish agent"]
    verdict = WorkflowValidator().validate(expected(agents={"exclude": ["Spanish agent"]}), trace)
    assert verdict.agents.unexpected == ("Spanish agent",)


@pytest.mark.parametrize("spelling", ["transfer_to_spanish_agent", "handoff to Spanish agent"])
def test_an_agents_sdk_handoff_answers_to_both_its_spellings(spelling: str) -> None:
    # The model calls the hand-off `transfer_to_spanish_agent`; OpenInference records the span as
    # "handoff to Spanish agent". A scenario may name either: the hand-off ran, so it is never avoided.
    trace = load_trace_file(FIXTURES / "openai_agents_openinference.json")
    avoided = WorkflowValidator().validate(expected(tools={"exclude": [spelling]}), trace)
    assert avoided.tools.excluded == () and avoided.tools.unexpected == (spelling,)
    called = WorkflowValidator().validate(expected(tools={"include": [spelling]}), trace)
    assert called.tools.included == (spelling,) and called.tools.passed
    assert trace.tool_path_naming({spelling}) == [spelling]
    assert trace.tool_path_naming({"transfer_back_to_spanish_agent"}) == []  # another hand-off


def test_genai_agents_are_named_by_the_agent_name_not_the_span_title() -> None:
    trace = load_trace_file(FIXTURES / "pydantic_ai_genai.json")
    assert "joke_generation_agent run" in trace.names  # as Langfuse stores it
    assert trace.agent_names == ["joke_selection_agent", "joke_generation_agent"]
    assert trace.entry_agents == {"joke_selection_agent"}
    assert [h.to_json() for h in trace.handoffs] == [
        {"from": "joke_selection_agent", "to": "joke_generation_agent", "via": "joke_factory"}
    ]
    assert trace.tool_path == []


def test_sibling_agents_under_observe_main_fire_strict_checks() -> None:
    trace = load_trace_file(FIXTURES / "observe_siblings.json")
    assert trace.entry_agents == frozenset()
    verdict = WorkflowValidator().validate(expected(agents={"include": ["flight_agent"]}), trace)
    assert verdict.agents.unexpected == ("hotel_agent",)


def test_a_convention_can_be_forced() -> None:
    trace = load_trace_file(FIXTURES / "langgraph_supervisor.json", TraceRules(convention="langfuse"))
    assert "research_expert" not in trace.agent_names  # Langfuse's heuristic types: what issue 8 saw
    assert "call_agent" in trace.agent_names


def test_a_forced_convention_the_trace_shows_no_sign_of_is_said_with_the_one_it_shows() -> None:
    trace = load_trace_file(FIXTURES / "langgraph_supervisor.json", TraceRules(convention="openinference"))
    assert trace.warnings == (
        'the convention "openinference" was given (--convention, or [targets.X] convention) but the trace '
        "shows no sign of it (it shows langgraph): its agents and tools are read as Langfuse types alone. "
        "Fix: give langgraph, or leave the convention out to detect it.",
    )
    assert (
        load_trace_file(FIXTURES / "langgraph_supervisor.json", TraceRules(convention="langgraph")).warnings
        == ()
    )
    assert (
        load_trace_file(FIXTURES / "langgraph_supervisor.json", TraceRules(convention="langfuse")).warnings
        == ()
    )


def test_configured_agents_and_handoff_patterns() -> None:
    builder = TraceBuilder()
    main = builder.add("SPAN", "planner")
    builder.tool("delegate_to_writer", parent=main)
    builder.add("SPAN", "writer", parent=main)
    rules = TraceRules(
        agent_observations=("planner",),
        agent_pattern=r"(?P<name>writ\w+)",
        handoff_patterns=(r"^delegate_to_(?P<agent>.+)$",),
    )
    trace = build_trace("t", builder.observations, rules=rules)
    assert trace.agent_names == ["planner", "writer"]
    assert [h.to_json() for h in trace.handoffs] == [
        {"from": "planner", "to": "writer", "via": "delegate_to_writer"}
    ]


def test_a_parent_and_child_starting_together_keep_ancestors_first() -> None:
    child = Observation(id="c", parent_id="p", type="TOOL", name="search", start_time=5.0, end_time=5.1)
    parent = Observation(id="p", parent_id=None, type="AGENT", name="research", start_time=5.0, end_time=6.0)
    trace = build_trace("t", [child, parent])
    assert trace.tools[0].agent == "research"
    assert trace.agent_names == ["research"]
    other = Observation(id="x", parent_id=None, type="AGENT", name="other", start_time=5.0, end_time=5.05)
    assert build_trace("t", [child, other, parent]).agent_names == ["other", "research"]


def test_a_framework_span_inside_its_own_wrapper_counts_once() -> None:
    builder = TraceBuilder()
    outer = builder.agent("research")
    builder.agent("research", parent=outer)
    assert build_trace("t", builder.observations).agent_names == ["research"]


@pytest.mark.parametrize(
    ("attributes", "type_", "name"),
    [
        ({"langfuse.observation.type": "agent"}, "AGENT", "span"),
        ({"openinference.span.kind": "LLM"}, "GENERATION", "span"),
        ({"gen_ai.operation.name": "invoke_agent", "logfire.msg": "joke run"}, "AGENT", "joke run"),
        ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", "logfire.msg": "t"}, "TOOL", "x"),
        ({"gen_ai.tool.call.id": "1"}, "TOOL", "span"),
        ({"gen_ai.request.model": "m"}, "GENERATION", "span"),
        ({}, "SPAN", "span"),
    ],
)
def test_in_process_typing_and_naming_follow_the_server(
    attributes: dict[str, str], type_: str, name: str
) -> None:
    assert observation_type(attributes) == type_
    assert observation_name("span", attributes) == name


def test_third_party_attributes_are_kept_as_the_server_keeps_them() -> None:
    assert third_party_attributes("langfuse-sdk", {"a": 1}) == {}
    kept = third_party_attributes("pydantic-ai", {"n": 2, "s": "x", "input.value": "q", "langfuse.x": "y"})
    assert kept == {"n": "2", "s": "x"}


def test_final_answer_is_the_last_ai_message_of_a_state() -> None:
    state = {"messages": [{"type": "human", "content": "What is X?"}, {"type": "ai", "content": "Y."}]}
    assert final_answer(state) == "Y."
    assert final_answer({"messages": [{"role": "user", "content": "q"}]}) is None
    assert final_answer({"messages": [{"type": "ai", "content": [{"type": "text", "text": "a"}]}]}) == "a"
    assert final_answer("plain") == "plain"


def test_final_answer_is_the_last_message_an_agent_wrote() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    tutorial = {  # LangGraph's supervisor tutorial: workers answer as named human messages
        "messages": [
            HumanMessage(content="Average GDP?"),
            HumanMessage(content="NY 2.3, CA 3.9", name="researcher"),
            HumanMessage(content="3.1 trillion", name="coder"),
        ]
    }
    assert final_answer(tutorial, ["supervisor", "researcher", "coder"]) == "3.1 trillion"
    assert final_answer(tutorial, ["supervisor"]) is None  # a named message of no agent: not an answer
    as_stored = {
        "messages": [{"type": "human", "content": "q"}, {"type": "human", "name": "Coder", "content": "a"}]
    }
    assert final_answer(as_stored, ["coder"]) == "a"  # dict form, names compared normalized
    handing_back = {
        "messages": [
            HumanMessage(content="q"),
            AIMessage(content="The sum is 5.", name="math"),
            AIMessage(
                content="Transferring back", name="math", tool_calls=[{"name": "t", "args": {}, "id": "1"}]
            ),
            ToolMessage(content="Successfully transferred", tool_call_id="1", name="math"),
        ]
    }
    assert final_answer(handing_back, ["math"]) == "The sum is 5."  # no tool call, no tool result
    empty = {"messages": [HumanMessage(content="q"), AIMessage(content=""), AIMessage(content=[])]}
    assert final_answer(empty) is None


def test_a_structured_response_is_the_answer_and_reads_as_its_fields() -> None:
    from pydantic import BaseModel

    class Report(BaseModel):
        city: str
        degrees: int

    state = {
        "messages": [{"type": "ai", "content": ""}],
        "structured_response": Report(city="Paris", degrees=21),
    }
    assert answer_text(final_answer(state)) == '{"city": "Paris", "degrees": 21}'
    stored = {"messages": [], "structured_response": {"city": "Paris", "degrees": 21}}
    assert answer_text(final_answer(stored)) == answer_text(final_answer(state))


def test_configuration_names_the_same_conventions_and_checks_patterns() -> None:
    from typing import get_args

    from pydantic import ValidationError

    from evaluator.config import ConventionName, TargetConfig
    from evaluator.trace import CONVENTION_NAMES

    assert get_args(ConventionName) == CONVENTION_NAMES
    with pytest.raises(ValidationError, match="no group named agent"):
        TargetConfig(entry="m:f", handoff_patterns=("^delegate_(.+)$",))
    with pytest.raises(ValidationError, match="not a regular expression"):
        TargetConfig(entry="m:f", agent_pattern="(")
    with pytest.raises(ValidationError):
        TargetConfig.model_validate({"entry": "m:f", "convention": "crewai"})


def _answering_alone(model_input: object) -> Observation:
    """A run in which one agent's model answered; its input as Langfuse stores it."""
    return Observation(
        id="g", parent_id="a", type="GENERATION", name="model", start_time=2.0, input=model_input
    )


def test_an_agent_offered_handoffs_is_the_orchestrator_even_when_it_answers_alone() -> None:
    handoff = {"type": "function", "function": {"name": "transfer_to_math_expert", "parameters": {}}}
    plain = {"type": "function", "function": {"name": "web_search", "parameters": {}}}
    langchain = [{"role": "user", "content": "Hello"}, {"role": "tool", "content": handoff}]
    openai_body = {"messages": [{"role": "user", "content": "Hello"}], "tools": [{"name": "handoff to Math"}]}
    for model_input, entry in (
        (langchain, True),
        (openai_body, True),
        ([{"role": "user", "content": "Hello"}, {"role": "tool", "content": plain}], False),
        ("Hello", False),
    ):
        observations = [
            Observation(id="r", parent_id=None, type="SPAN", name="root", start_time=0.0),
            Observation(id="a", parent_id="r", type="AGENT", name="supervisor", start_time=1.0),
            _answering_alone(model_input),
        ]
        trace = build_trace("t", observations)
        assert trace.entry_agents == ({"supervisor"} if entry else set()), model_input
        verdict = WorkflowValidator().validate(expected(agents={"exclude": ["math_expert"]}), trace)
        assert verdict.agents.passed is entry
    # a configured hand-off pattern counts as well
    custom = [{"role": "tool", "content": {"name": "delegate_math"}}]
    rules = TraceRules(handoff_patterns=(r"^delegate_(?P<agent>.+)$",))
    observations = [Observation(id="a", parent_id=None, type="AGENT", name="lead", start_time=1.0)]
    assert build_trace("t", [*observations, _answering_alone(custom)], rules=rules).entry_agents == {"lead"}


def test_only_the_first_agents_own_model_calls_make_it_a_router() -> None:
    handoff = [{"role": "tool", "content": {"type": "function", "function": {"name": "transfer_to_bob"}}}]
    observations = [
        Observation(id="r", parent_id=None, type="SPAN", name="root", start_time=0.0),
        Observation(id="w", parent_id="r", type="AGENT", name="writer", start_time=1.0),
        Observation(id="b", parent_id="r", type="AGENT", name="alice", start_time=2.0),
        Observation(id="g", parent_id="b", type="GENERATION", name="model", start_time=2.5, input=handoff),
    ]
    assert build_trace("t", observations).entry_agents == set()  # alice is not the start: writer is


def test_a_guardrails_agent_is_an_agent_but_never_the_flow_nor_unexpected() -> None:
    observations = [
        Observation(id="r", parent_id=None, type="SPAN", name="root", start_time=0.0),
        Observation(id="g", parent_id="r", type="GUARDRAIL", name="math_guardrail", start_time=1.0),
        Observation(id="c", parent_id="g", type="AGENT", name="Guardrail check", start_time=1.1),
        Observation(id="b", parent_id="r", type="AGENT", name="billing", start_time=2.0),
    ]
    trace = build_trace("t", observations)
    assert trace.flow == "billing" and trace.entry_agents == set()
    assert trace.always_expected_agents == {"Guardrail check"}
    validator = WorkflowValidator()
    assert validator.validate(expected(agents={"include": ["billing"]}), trace).agents.passed
    named = validator.validate(expected(agents={"include": ["billing", "Guardrail check"]}), trace).agents
    assert named.included == ("billing", "Guardrail check")
    excluded = validator.validate(expected(agents={"exclude": ["Guardrail check"]}), trace).agents
    assert excluded.unexpected == ("Guardrail check", "billing")


def _node(
    builder: TraceBuilder, node: str, parent: str, step: int, type_: str = "SPAN", **fields: object
) -> str:
    """A run in a LangGraph node's checkpoint namespace, as the CallbackHandler records it."""
    metadata = {"langgraph_node": node, "langgraph_checkpoint_ns": f"{node}:{step}"}
    return builder.add(type_, str(fields.pop("name", node)), parent, metadata=metadata, **fields)


def test_a_model_a_routing_function_calls_is_the_edge_s_but_a_node_s_own_call_is_the_node_s() -> None:
    builder = TraceBuilder()
    graph = builder.add("SPAN", "LangGraph", parent=None)
    retrieve = _node(builder, "retrieve", graph, 1)  # a ToolNode: no model call of its own
    grade = _node(builder, "retrieve", retrieve, 1, name="grade_documents", output="generate_answer")
    _node(builder, "retrieve", grade, 1, "GENERATION")  # the model its conditional edge's router calls
    answer = _node(builder, "generate_answer", graph, 2)
    _node(builder, "generate_answer", answer, 2, "GENERATION")
    router = _node(builder, "router", graph, 3)
    _node(builder, "router", router, 3, "GENERATION", output="generate_answer")  # its own model call
    trace = builder.build()
    assert trace.agent_names == ["generate_answer", "router"]  # not retrieve; router's model is its own
