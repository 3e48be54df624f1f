"""The result object of DESIGN.md, pinned whole for one scenario: any change to the contract shows here."""

from evaluator.results import JudgeStatus, PromptUse, as_evaluator_error, evaluate
from tests.builders import TraceBuilder, scenario, trace_of


def test_result_json_is_pinned() -> None:
    result = evaluate(
        scenario(
            id="research-pdf-only",
            expected={
                "agents": {"include": ["research"], "exclude": ["clarification"]},
                "tools": {"include": ["pdf_retrieval"], "exclude": ["web_search"]},
                "trajectory": {"flow": "research", "tools": ["pdf_retrieval"]},
                "answer": {"contains": ["Spider"], "criteria": "Names an approach."},
            },
        ),
        trace_of(["orchestrator", "research"], ["pdf_retrieval"], flow="research"),
        judge_status=JudgeStatus(status="skipped", reason="--no-judge was given"),
        output="DIN-SQL reaches 85.3% on Spider.",
        latency_ms=81.4,
        prompts={"agents/research": PromptUse(version=2, source="langfuse")},
        finished_at="2026-11-22T10:00:00.000Z",
    )
    document = result.to_json()
    assert document == {
        "scenario_id": "research-pdf-only",
        "trace_id": "t1",
        "status": "passed",
        "workflow": {
            "pass": True,
            "agents": {
                "pass": True,
                "included": ["research"],
                "excluded": ["clarification"],
                "missing": [],
                "unexpected": [],
            },
            "tools": {
                "pass": True,
                "included": ["pdf_retrieval"],
                "excluded": ["web_search"],
                "missing": [],
                "unexpected": [],
            },
        },
        "handoffs": [],
        "trajectory": {
            "expected": ["pdf_retrieval"],
            "actual": ["pdf_retrieval"],
            "flow": {"expected": "research", "actual": "research"},
            "partial_path": 1.0,
            "full_path": 1.0,
            "path_nodes": 1.0,
            "full_workflow": 1.0,
        },
        "answer": {"pass": True, "contains": ["Spider"], "missing": []},
        "quality": None,
        "correctness": None,
        "judge_status": {"status": "skipped", "reason": "--no-judge was given"},
        "warnings": [],
        "output": "DIN-SQL reaches 85.3% on Spider.",
        "prompts": {"agents/research": {"version": 2, "source": "langfuse"}},
        "observations": 4,
        "latency_ms": 81.4,
        "error": None,
    }
    assert list(document)[:11] == [  # DESIGN.md's order; the further fields follow
        "scenario_id",
        "trace_id",
        "status",
        "workflow",
        "handoffs",
        "trajectory",
        "answer",
        "quality",
        "correctness",
        "judge_status",
        "warnings",
    ]


def test_handoffs_and_warnings_in_the_result() -> None:
    builder = TraceBuilder()
    supervisor = builder.agent("supervisor")
    builder.tool("transfer_to_math_expert", parent=supervisor)
    builder.agent("run", parent=supervisor)
    builder.agent("run", parent=supervisor)
    result = evaluate(
        scenario(expected={"agents": {"include": ["run"]}, "tools": {"exclude": ["web_search"]}}),
        builder.build(),
        judge_status=JudgeStatus(status="skipped", reason="-"),
    )
    document = result.to_json()
    assert document["handoffs"] == [
        {"from": "supervisor", "to": "math_expert", "via": "transfer_to_math_expert"}
    ]
    assert document["workflow"]["tools"]["unexpected"] == []  # a hand-off is not a tool
    assert len(document["warnings"]) == 1
    assert '2 agent calls are all named "run"' in document["warnings"][0]
    assert "@observe(name=" in document["warnings"][0]


def test_a_result_turned_into_an_evaluator_error_keeps_its_facts_and_says_its_verdicts_are_gone() -> None:
    judged = evaluate(
        scenario(expected={"tools": {"include": ["a"]}}),
        trace_of(["o"], ["a"]),
        judge_status=JudgeStatus(status="scored", reason=""),
        output="the answer",
        latency_ms=12.0,
        finished_at="2026-11-22T10:00:01Z",
    )
    failed = as_evaluator_error(judged, KeyError("name"))
    document = failed.to_json()
    assert document["status"] == "error" and document["workflow"] is None
    assert document["output"] == "the answer" and document["latency_ms"] == 12.0
    assert document["judge_status"] == {"status": "unscored", "reason": "evaluator error: KeyError: 'name'"}
    assert document["evaluator_error"]["type"] == "KeyError"


def test_the_result_model_exports_its_own_names_and_the_re_exported_judge_status() -> None:
    """`results.model`'s `__all__` lists its own names and JudgeStatus (a second assignment had left it
    JudgeStatus alone, so a star import took nothing else)."""
    from evaluator.results import model

    assert {"RunInfo", "ScenarioResult", "JUDGES_INTERRUPTED", "JudgeStatus"} <= set(model.__all__)
    assert all(hasattr(model, name) for name in model.__all__)
