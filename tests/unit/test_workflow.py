"""The workflow rules, on the seed's examples (seeds/workflow-and-quality-metrics.md) and edge cases."""

from dataclasses import replace

from evaluator.metrics import WorkflowValidator, validate_kind
from evaluator.results import summarize
from evaluator.scenarios import Expectation
from evaluator.trace import TraceRules, build_trace
from tests.builders import TraceBuilder, expected, trace_of


def test_seed_pass_example() -> None:
    trace = trace_of(["orchestrator", "research"], ["pdf_retrieval"])
    verdict = WorkflowValidator().validate(
        expected(
            agents={"include": ["research"], "exclude": ["clarification"]},
            tools={"include": ["pdf_retrieval"], "exclude": ["web_search"]},
        ),
        trace,
    )
    assert verdict.to_json() == {
        "pass": True,
        "agents": {
            "pass": True,
            "included": ["research"],
            "excluded": ["clarification"],
            "missing": [],
            "unexpected": [],  # orchestrator is an entry agent: always expected
        },
        "tools": {
            "pass": True,
            "included": ["pdf_retrieval"],
            "excluded": ["web_search"],
            "missing": [],
            "unexpected": [],
        },
    }


def test_seed_fail_example_missing_tool() -> None:
    trace = trace_of(["orchestrator", "research"], ["pdf_retrieval"])
    verdict = WorkflowValidator().validate(
        expected(agents={"include": ["research"]}, tools={"include": ["pdf_retrieval", "web_search"]}),
        trace,
    )
    assert verdict.passed is False
    assert verdict.tools.passed is False
    assert verdict.tools.included == ("pdf_retrieval",)
    assert verdict.tools.missing == ("web_search",)
    assert verdict.agents.passed is True
    assert verdict.comment() == "tools missing: web_search"


def test_excluded_and_called_is_unexpected_not_excluded() -> None:
    verdict = validate_kind(
        ["pdf_retrieval", "web_search"], Expectation(include=("pdf_retrieval",), exclude=("web_search",))
    )
    assert verdict.unexpected == ("web_search",)
    assert verdict.excluded == ()
    assert not verdict.passed


def test_excluded_item_is_unexpected_even_when_not_strict() -> None:
    verdict = validate_kind(["a", "b"], Expectation(include=("a",), exclude=("b",), strict=False))
    assert verdict.unexpected == ("b",)


def test_strict_flags_unlisted_calls_in_first_call_order_without_duplicates() -> None:
    verdict = validate_kind(["c", "a", "b", "c", "b"], Expectation(include=("a",)))
    assert verdict.unexpected == ("c", "b")


def test_not_strict_ignores_unlisted_calls() -> None:
    verdict = validate_kind(["c", "a"], Expectation(include=("a",), strict=False))
    assert verdict.passed and verdict.unexpected == ()


def test_allow_permits_without_requiring() -> None:
    allowed = validate_kind(["a", "b"], Expectation(include=("a",), allow=("b",)))
    assert allowed.passed
    assert validate_kind(["a"], Expectation(include=("a",), allow=("b",))).passed


def test_repeated_calls_count_once_and_lists_keep_scenario_order() -> None:
    verdict = validate_kind(["b", "a", "a", "b"], Expectation(include=("a", "b", "c"), exclude=("d", "e")))
    assert verdict.included == ("a", "b")
    assert verdict.missing == ("c",)
    assert verdict.excluded == ("d", "e")


def test_empty_expectation_empty_calls_passes() -> None:
    assert validate_kind([], Expectation()).passed


def test_empty_expectation_strict_fails_on_any_call() -> None:
    verdict = validate_kind(["x"], Expectation())
    assert verdict.unexpected == ("x",)


def test_the_agent_enclosing_all_others_is_the_entry_agent() -> None:
    builder = TraceBuilder()
    orchestrator = builder.agent("orchestrator")
    span = builder.add("SPAN", "routing", parent=orchestrator)
    research = builder.agent("research", parent=span)  # nested through a plain span: not an entry agent
    builder.agent("summarizer", parent=research)
    trace = builder.build()
    assert trace.entry_agents == {"orchestrator"}
    verdict = WorkflowValidator().validate(expected(agents={"include": ["research"]}), trace)
    assert verdict.agents.unexpected == ("summarizer",)


def test_sibling_top_level_agents_are_not_entry_agents() -> None:
    """A plain span at the top (`@observe()` on main) with agents beside each other: no orchestrator,
    so an agent the scenario does not expect is unexpected (strict checks fire)."""
    builder = TraceBuilder()
    main = builder.add("SPAN", "main")
    builder.agent("flight_agent", parent=main)
    builder.agent("hotel_agent", parent=main)
    trace = builder.build()
    assert trace.entry_agents == frozenset()
    verdict = WorkflowValidator().validate(expected(agents={"include": ["flight_agent"]}), trace)
    assert verdict.agents.unexpected == ("hotel_agent",)
    assert not verdict.passed


def test_declared_entry_agents_are_always_expected() -> None:
    builder = TraceBuilder()
    builder.agent("router")
    builder.agent("hotel_agent")
    trace = build_trace("t", builder.observations, rules=TraceRules(entry_agents=("router",)))
    assert trace.entry_agents == {"router"}
    verdict = WorkflowValidator().validate(expected(agents={"include": ["hotel_agent"]}), trace)
    assert verdict.passed


def test_entry_agent_in_exclude_is_unexpected() -> None:
    trace = trace_of(["orchestrator", "research"], [])
    verdict = WorkflowValidator().validate(expected(agents={"exclude": ["orchestrator"]}), trace)
    assert verdict.agents.unexpected == ("orchestrator", "research")


def test_an_excluded_name_spelled_another_way_in_the_trace_is_never_avoided() -> None:
    verdict = validate_kind(
        ["Triage agent", "English agent"],
        Expectation(allow=("Triage agent", "English agent"), exclude=("english_agent", "spanish_agent")),
    )
    assert verdict.excluded == ("spanish_agent",)
    assert verdict.unexpected == ("english_agent",)
    assert not verdict.passed
    present_only = validate_kind([], Expectation(exclude=("web-search",)), present={"web_search"})
    assert present_only.unexpected == ("web-search",) and present_only.excluded == ()


def test_an_included_name_spelled_another_way_is_missing_with_a_warning_naming_the_spelling() -> None:
    trace = trace_of(["Billing agent"], ["lookup_invoice"])
    verdict = WorkflowValidator().validate(
        expected(agents={"include": ["billing_agent"], "allow": ["Billing agent"]}), trace
    )
    assert verdict.agents.missing == ("billing_agent",)  # names match as written: the verdict stands
    assert not verdict.agents.passed
    assert verdict.warnings == (
        'agent "billing_agent" is missing, and "Billing agent" ran (the same name spelled another way). '
        'Fix: name it "Billing agent", as the trace does.',
    )


def test_a_dialogues_result_has_no_workflow_pass_rate_rather_than_a_zero() -> None:
    """The run figure `workflow_pass_rate` reads a result's `workflow` verdict; a dialogue's result has
    none of its own (each turn has one), so the figure is not measured for it, never 0."""
    [figure] = [f for f in WorkflowValidator().figures if f.name == "workflow_pass_rate"]
    assert figure.value({"kind": "dialogue", "status": "passed", "workflow": None}) is None
    assert figure.value({"status": "passed", "workflow": {"pass": True}}) == 1.0
    assert figure.value({"status": "error", "workflow": None}) == 0.0


def test_an_excluded_name_in_the_trace_but_not_as_a_call_names_the_fix_of_its_kind() -> None:
    """A tool cannot be declared in the configuration (agents can): the fix says how to trace one."""
    trace = replace(trace_of(["desk"], []), names=frozenset({"desk", "retrieve_docs", "planner"}))
    verdict = WorkflowValidator().validate(
        expected(agents={"include": ["desk"], "exclude": ["planner"]}, tools={"exclude": ["retrieve_docs"]}),
        trace,
    )
    assert verdict.agents.unexpected == ("planner",) and verdict.tools.unexpected == ("retrieve_docs",)
    tool_warning, agent_warning = sorted(verdict.warnings, key=lambda w: "tool" not in w.split('"')[0])
    assert tool_warning.startswith('excluded tool "retrieve_docs" appears in the trace')
    assert tool_warning.endswith(
        'If it is a tool, trace it as one: @observe(as_type="tool"), or your framework\'s tool '
        "(README, Tracing your system)."
    )
    assert "configuration" not in tool_warning  # no setting declares tools
    assert agent_warning.startswith('excluded agent "planner" appears in the trace')
    assert "(agent_observations or agent_pattern; README, Tracing your system)" in agent_warning


def test_a_dialogue_that_ended_an_error_has_no_workflow_pass_rate_either() -> None:
    """A dialogue's result has no workflow verdict of its own, whether it passed, failed or ended an
    error (a turn raised: its turns each have theirs), so `workflow_pass_rate` is not measured for it.
    By hand, a run of one passing single-turn scenario (1), one failing (0) and one dialogue that ended
    an error: the figure is (1 + 0) / 2 = 0.5 over n = 2 results, not (1 + 0 + 0) / 3 = 0.3333 over 3."""
    run = summarize(
        [
            {"status": "passed", "workflow": {"pass": True}},
            {"status": "failed", "workflow": {"pass": False}},
            {"kind": "dialogue", "status": "error", "workflow": None, "turns": []},
        ]
    )
    assert (run["workflow_pass_rate"], run["n"]["workflow_pass_rate"]) == (0.5, 2)
