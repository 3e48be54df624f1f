"""Coordination between agents, deterministically (DESIGN.md, Per-agent analysis; definitions in
evaluator/metrics/agents/_coordination.py): duplicated work, ping-pong hand-offs, context lost across
a hand-off, and `rule_score` = 1 - faulty steps / steps. Every expected value is worked out by hand
from the small trace each test builds."""

from __future__ import annotations

from typing import Any

import pytest

from evaluator.metrics.agents import Coordination, coordinate
from tests.builders import TraceBuilder


def _coordination(builder: TraceBuilder) -> Coordination | None:
    return coordinate(builder.build(), builder.observations)


def _problems(found: Coordination | None) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    assert found is not None
    return [(p.kind, p.agents, p.faulty) for p in found.problems]


def test_the_same_tool_with_the_same_arguments_by_two_agents_is_duplicated_work() -> None:
    builder = TraceBuilder()
    supervisor = builder.agent("supervisor")
    research = builder.agent("research", parent=supervisor)
    first = builder.tool("web_search", parent=research, input={"query": "din-sql", "k": 3})
    builder.tool("web_search", parent=research, input={"k": 3, "query": "din-sql"})  # its own repeat: fine
    writer = builder.agent("writer", parent=supervisor)
    again = builder.tool("web_search", parent=writer, input={"k": 3, "query": "din-sql"})
    builder.tool("web_search", parent=writer, input={"query": "bird"})  # other arguments: fine
    found = _coordination(builder)
    assert _problems(found) == [("duplicated_work", ("research", "writer"), (again,))]
    assert found is not None and found.problems[0].observation_ids == (first, again)
    assert "writer called web_search with the same arguments as research" in found.problems[0].message
    # steps: the 4 agents' tool calls (no hand-off); 1 faulty -> 1 - 1/4
    assert (found.steps, found.rule_score) == (4, 0.75)


def _bounce(builder: TraceBuilder, hops: list[tuple[str, str]], tool_after: int | None = None) -> list[str]:
    """Sibling agent calls (as the OpenAI Agents SDK records them), each handing over to the next by
    `transfer_to_<agent>`; a tool call in the receiving agent after hop `tool_after`."""
    ids = []
    for index, (source, target) in enumerate(hops):
        agent = builder.agent(source)
        ids.append(builder.tool(f"transfer_to_{target}", parent=agent))
        if index == tool_after:
            builder.tool("lookup", parent=builder.agent(target), input={"q": "x"})
    builder.agent(hops[-1][1])  # the last receiver answers
    return ids


def test_control_bounced_back_and_forth_three_times_without_a_tool_call_is_a_ping_pong() -> None:
    builder = TraceBuilder()
    h1, h2, h3 = _bounce(builder, [("alpha", "beta"), ("beta", "alpha"), ("alpha", "beta")])
    found = _coordination(builder)
    assert _problems(found) == [("ping_pong", ("alpha", "beta"), (h2, h3))]
    assert found is not None and found.problems[0].observation_ids == (h1, h2, h3)
    assert "alpha -> beta -> alpha -> beta" in found.problems[0].message
    # steps: 3 hand-offs, no tool call; h2 and h3 faulty -> 1 - 2/3
    assert found.steps == 3 and found.rule_score == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("hops", "tool_after"),
    [
        ([("alpha", "beta"), ("beta", "alpha")], None),  # handed back once: not repeated
        ([("alpha", "beta"), ("beta", "alpha"), ("alpha", "beta")], 0),  # beta worked in between
        ([("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")], None),  # a round, not a bounce
    ],
)
def test_no_ping_pong_when_control_does_not_bounce_repeatedly_without_work(
    hops: list[tuple[str, str]], tool_after: int | None
) -> None:
    builder = TraceBuilder()
    _bounce(builder, hops, tool_after)
    found = _coordination(builder)
    assert _problems(found) == []
    assert found is not None and found.rule_score == 1.0


def _delegation(generation_input: Any, arguments: dict[str, Any] | None) -> tuple[TraceBuilder, str, str]:
    """A supervisor delegating through a tool whose call runs the research agent (a hand-off)."""
    builder = TraceBuilder()
    supervisor = builder.agent("supervisor")
    handoff = builder.tool("ask_research", parent=supervisor, input=arguments)
    research = builder.agent("research", parent=handoff)
    generation = builder.add("GENERATION", "research-llm", parent=research, input=generation_input)
    builder.add("GENERATION", "research-llm", parent=research, input="What is DIN-SQL?")  # a later call
    return builder, handoff, generation


def test_a_delegation_whose_text_never_reaches_the_receivers_first_model_call_lost_its_context() -> None:
    builder, handoff, generation = _delegation(
        [{"role": "system", "content": "You research papers."}, {"role": "user", "content": "Summarise."}],
        {"question": "What is DIN-SQL?"},
    )
    found = _coordination(builder)
    assert _problems(found) == [("context_lost", ("supervisor", "research"), (handoff,))]
    assert found is not None and found.problems[0].observation_ids == (handoff, generation)
    assert "'What is DIN-SQL?'" in found.problems[0].message
    assert (found.steps, found.rule_score) == (1, 0.0)  # one hand-off, faulty


@pytest.mark.parametrize(
    ("generation_input", "arguments"),
    [
        ([{"role": "user", "content": "Please:  what is\n din-sql?"}], {"question": "What is DIN-SQL?"}),
        ('{"messages": [{"content": "What is DIN-SQL?"}]}', {"question": "What is DIN-SQL?"}),  # JSON text
        ("Summarise.", {"question": "", "k": 3}),  # no text passed: not checked
        (None, {"question": "What is DIN-SQL?"}),  # the first model call's input is not in the trace
    ],
)
def test_context_reaching_the_receiver_or_not_checkable_is_no_problem(
    generation_input: Any, arguments: dict[str, Any]
) -> None:
    builder, _, _ = _delegation(generation_input, arguments)
    assert _problems(_coordination(builder)) == []


def test_a_single_agent_or_agents_with_no_step_have_no_coordination_to_measure() -> None:
    alone = TraceBuilder()
    alone.tool("lookup", parent=alone.agent("solo"), input={"q": "x"})
    assert _coordination(alone) is None
    quiet = TraceBuilder()
    quiet.agent("clarification", parent=quiet.agent("orchestrator"))
    assert _coordination(quiet) is None
