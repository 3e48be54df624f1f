"""Per-agent checks on real frameworks' traces, captured in-process as a run captures them: in each
system one agent's scripted model misuses a tool (a tool outside its declared list, an invented
parameter, an omitted one, a wrong type) while another agent calls its tool rightly. Each issue must
come out attributed to the agent that made the call, on the call's observation, and nothing on the
clean runs. The LangGraph, Agents SDK and pydantic-ai systems' schemas come from what the framework
records in the trace; the `@observe` system's from a tool_schemas file. Hand-offs (the supervisor's
transfer tools, the Agents SDK's hand-off, pydantic-ai's delegating tool) are in no agent's declared
tools and must not come out as unauthorized: they are not tool calls."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from evaluator.langfuse import Tracing
from evaluator.metrics.agents import AgentAnalysis, analyze_agents, coordinate, intent_drift
from evaluator.scenarios import Expectation, Expected
from evaluator.trace.tool_definitions import load_tool_schemas
from tests.frameworks.agent_capture import capture, load_system
from tests.frameworks.systems.misuse import MODES


@dataclass(frozen=True, kw_only=True)
class System:
    module: str
    faulty: str  # the agent whose model misuses a tool
    careful: str  # the agent whose model calls its tool rightly
    fails_call: frozenset[str]  # the modes in which the framework (or Python) fails the tool call
    reports_tokens: bool  # whether its scripted model reports usage the trace keeps
    takes_callbacks: bool = False  # traced by the LangChain callbacks the run hands it


# langgraph-supervisor builds its supervisor with the deprecated create_react_agent: its warning, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")

SYSTEMS = {
    # LangChain validates the arguments with the tool's pydantic model: extra ones are dropped.
    "langgraph_supervisor": System(
        module="misuse_langgraph",
        faulty="math_expert",
        careful="research_expert",
        fails_call=frozenset({"omitted", "wrong_type"}),
        reports_tokens=False,
        takes_callbacks=True,
    ),
    # The Agents SDK validates them too and ignores extra ones.
    "agents_sdk_handoffs": System(
        module="misuse_agents_sdk",
        faulty="Math agent",
        careful="Triage agent",
        fails_call=frozenset({"omitted", "wrong_type"}),
        reports_tokens=False,
    ),
    # pydantic-ai forbids extra arguments (and sends the model a retry prompt).
    "pydantic_ai_delegation": System(
        module="misuse_pydantic",
        faulty="math_agent",
        careful="coordinator",
        fails_call=frozenset({"invented", "omitted", "wrong_type"}),
        reports_tokens=True,
    ),
    # Python itself refuses the call (TypeError), which the agent loop feeds back.
    "langfuse_observe": System(
        module="misuse_observe",
        faulty="calculator",
        careful="planner",
        fails_call=frozenset({"invented", "omitted", "wrong_type"}),
        reports_tokens=False,
    ),
}
EXPECTED = {  # the issue each mode must give: (kind, tool, parameter)
    "unauthorized": ("unauthorized_tool", "web_search", None),
    "invented": ("hallucinated_parameter", "add", "precision"),
    "omitted": ("missing_parameter", "add", "b"),
    "wrong_type": ("invalid_value", "add", "b"),
}


@pytest.fixture(scope="module")
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _analyse(tracing: Tracing, name: str, mode: str) -> AgentAnalysis:
    system = load_system(tracing, f"tests.frameworks.systems.{SYSTEMS[name].module}")
    declared = load_tool_schemas(system.TOOL_SCHEMAS) if hasattr(system, "TOOL_SCHEMAS") else None
    run = system.run
    if SYSTEMS[name].takes_callbacks:
        run = functools.partial(system.run, callbacks=tracing.callbacks())
    trace, observations = capture(tracing, f"{name}-{mode}", run, f"Please add 2 and 3 ({mode}).")
    return analyze_agents(trace, observations, agent_tools=system.AGENT_TOOLS, declared_schemas=declared)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@pytest.mark.parametrize("mode", [m for m in MODES if m != "clean"])
def test_each_misuse_is_found_and_attributed_to_the_agent_that_made_the_call(
    tracing: Tracing, name: str, mode: str
) -> None:
    system = SYSTEMS[name]
    analysis = _analyse(tracing, name, mode)
    # one call each; in either order: calls that start and end within one millisecond are ordered by
    # name, as Langfuse's stored trace must order them (DESIGN.md, Trace model)
    assert sorted(c.agent for c in analysis.calls) == sorted([system.careful, system.faulty])
    faulty_call = next(c for c in analysis.calls if c.agent == system.faulty)
    kind, tool, parameter = EXPECTED[mode]
    expected = [(kind, system.faulty, tool, parameter, faulty_call.observation_id)]
    if mode in system.fails_call:
        expected.append(("tool_error", system.faulty, tool, None, faulty_call.observation_id))
    found = [(i.kind, i.agent, i.tool, i.parameter, i.observation_id) for i in analysis.issues]
    assert found == expected
    assert analysis.unchecked_tools == ()  # every schema found: in the trace, or the @observe file
    assert analysis.per_agent[system.faulty].tool_use_score == 0.0
    assert analysis.per_agent[system.careful].tool_use_score == 1.0
    assert analysis.per_agent[system.careful].issues == ()


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_the_clean_run_has_no_issue_and_each_agents_figures(tracing: Tracing, name: str) -> None:
    system = SYSTEMS[name]
    analysis = _analyse(tracing, name, "clean")
    assert analysis.issues == ()
    assert analysis.unchecked_tools == ()
    for agent in (system.faulty, system.careful):
        figures = analysis.per_agent[agent]
        assert (figures.tool_calls, figures.tool_use_score) == (1, 1.0)
        assert figures.latency_ms is not None and figures.latency_ms > 0
        assert (figures.tokens is not None) == system.reports_tokens  # not reported: None, never 0
        assert figures.cost is None  # scripted models are not priced


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_no_false_coordination_problem_on_the_clean_runs(tracing: Tracing, name: str) -> None:
    """Two agents each call their own tool once, handing over as the framework does: no duplicated work,
    no ping-pong, and where the hand-off passes text (pydantic-ai's delegating tool) it reaches the
    receiving agent's first model call. No scenario expectation: intent drift is not measured."""
    system = load_system(tracing, f"tests.frameworks.systems.{SYSTEMS[name].module}")
    run = system.run
    if SYSTEMS[name].takes_callbacks:
        run = functools.partial(system.run, callbacks=tracing.callbacks())
    trace, observations = capture(tracing, f"{name}-coordination", run, "Please add 2 and 3 (clean).")
    found = coordinate(trace, observations)
    assert found is not None and found.problems == ()
    # steps: the two agents' tool calls and the hand-offs; none faulty
    assert found.steps == 2 + len(trace.handoffs) and found.rule_score == 1.0
    if name == "pydantic_ai_delegation":  # its hand-off passes the question: the check ran, and held
        [handoff] = trace.handoffs
        assert handoff.arguments == {"question": "Please add 2 and 3 (clean)."}
    assert intent_drift(trace, Expected(agents=Expectation(strict=False))) is None


def test_duplicated_work_in_a_real_pydantic_ai_delegation(tracing: Tracing) -> None:
    """The coordinator and the researcher both look the same topic up, and the delegating tool drops
    the question. pydantic-ai's spans here keep no generation input: context lost is not checked (no
    problem, not a guess). Steps: 2 tool calls + 1 hand-off; faulty: the researcher's lookup."""
    system = load_system(tracing, "tests.frameworks.systems.coordination_pydantic")
    trace, observations = capture(
        tracing, "pydantic-coordination", system.run, "Find text-to-SQL benchmarks."
    )
    found = coordinate(trace, observations)
    assert found is not None
    [problem] = found.problems
    assert (problem.kind, problem.agents) == ("duplicated_work", ("coordinator", "researcher"))
    assert problem.observation_ids == tuple(t.id for t in trace.tools if t.name == "lookup")
    assert (found.steps, found.rule_score) == (3, pytest.approx(2 / 3))


@pytest.mark.parametrize("keep", [True, False])
def test_context_lost_across_a_real_observe_delegation(tracing: Tracing, keep: bool) -> None:
    """The supervisor's `delegate(task)` runs the writer; its model call gets the task, or not."""
    system = load_system(tracing, "tests.frameworks.systems.coordination_observe")
    run = system.run_passing if keep else system.run_dropping
    trace, observations = capture(tracing, f"observe-context-{keep}", run, "What is BIRD?")
    found = coordinate(trace, observations)
    [handoff] = trace.handoffs
    assert (handoff.source, handoff.target, handoff.via) == ("supervisor", "writer", "delegate")
    assert found is not None and found.steps == 1  # the hand-off; no tool call
    if keep:
        assert found.problems == () and found.rule_score == 1.0
        return
    generation = next(o for o in observations if o.type == "GENERATION")
    assert len(found.problems) == 1, (handoff.arguments, generation.input)
    [problem] = found.problems
    assert (problem.kind, problem.agents) == ("context_lost", ("supervisor", "writer"))
    assert problem.observation_ids == (handoff.id, generation.id)
    assert "Summarise for the user: What is BIRD?" in problem.message and found.rule_score == 0.0
