"""Scores: contract names and types, deterministic ids, nothing for what was not evaluated."""

import dataclasses
import uuid

import pytest

from evaluator.results import (
    JudgeStatus,
    ScenarioResult,
    Score,
    error_result,
    evaluate,
    score_id,
    scores_for,
)
from tests.builders import scenario, trace_of

SKIPPED = JudgeStatus(status="skipped", reason="test")


def _result() -> ScenarioResult:
    s = scenario(
        expected={
            "agents": {"include": ["research"]},
            "tools": {"include": ["pdf_retrieval", "web_search"]},
            "trajectory": {"tools": ["pdf_retrieval"], "flow": "research"},
        }
    )
    return evaluate(
        s,
        trace_of(["orchestrator", "research"], ["pdf_retrieval"], flow="research"),
        judge_status=SKIPPED,
        finished_at="2026-11-22T10:00:00.000Z",
    )


def test_names_types_values_comments() -> None:
    scores = {s.name: s for s in scores_for(_result(), run_id="run-1")}
    assert list(scores) == [
        "workflow_pass",
        "workflow_agents_pass",
        "workflow_tools_pass",
        "trajectory_partial_path",
        "trajectory_full_path",
        "trajectory_path_nodes",
        "trajectory_full_workflow",
    ]
    assert scores["workflow_pass"].data_type == "BOOLEAN"
    assert scores["workflow_pass"].value == 0.0
    assert scores["workflow_pass"].comment == "tools missing: web_search"
    assert scores["workflow_agents_pass"].value == 1.0
    assert scores["workflow_agents_pass"].comment is None
    assert scores["trajectory_full_workflow"].data_type == "NUMERIC"
    assert scores["trajectory_full_workflow"].value == 1.0
    assert scores["workflow_pass"].metadata["scenario_id"] == "s1"
    assert scores["workflow_pass"].metadata["run_id"] == "run-1"
    assert scores["workflow_pass"].timestamp == "2026-11-22T10:00:00.000Z"


def test_ids_are_deterministic_per_run_trace_and_name() -> None:
    first = scores_for(_result(), run_id="run-1")
    again = scores_for(_result(), run_id="run-1")
    other_run = scores_for(_result(), run_id="run-2")
    assert [s.id for s in first] == [s.id for s in again]
    assert not {s.id for s in first} & {s.id for s in other_run}
    assert len({s.id for s in first}) == len(first)
    assert first[0].id == score_id("run-1", first[0].trace_id, "workflow_pass")


def test_an_error_scores_only_a_failed_workflow_and_a_skipped_judge_nothing() -> None:
    failed = error_result(scenario(), "t", "RuntimeError: boom", judge_status=SKIPPED, latency_ms=1.0)
    [only] = scores_for(failed, run_id="r")
    assert (only.name, only.value, only.data_type) == ("workflow_pass", 0.0, "BOOLEAN")
    assert only.comment == "error: RuntimeError: boom"
    assert not [s for s in scores_for(_result(), run_id="r") if s.name.startswith("quality_")]


def test_score_id_is_pinned() -> None:
    """Ids already posted to Langfuse must stay the same: a changed namespace would duplicate scores."""
    assert score_id("run-1", "0" * 32, "workflow_pass") == "c763ad5d-21f1-572c-b02e-638816d9f512"


@pytest.mark.parametrize("name", ["workflow_pass", "quality_answer_quality", "naïve ✓", ""])
def test_score_id_is_the_rfc_4122_name_based_uuid(name: str) -> None:
    """Formatted from the digest directly, it is exactly uuid5 (version 5, RFC 4122 variant)."""
    namespace = uuid.UUID("6f1d3c1e-4d7b-5a7e-9b0f-2f4c8a1e5d10")
    made = score_id("run-20261123T070000Z-ab12cd", "f" * 32, name)
    assert made == str(uuid.uuid5(namespace, f"run-20261123T070000Z-ab12cd/{'f' * 32}/{name}"))
    assert uuid.UUID(made).version == 5 and uuid.UUID(made).variant == uuid.RFC_4122


def test_an_evaluator_error_yields_no_score() -> None:
    from evaluator.results import evaluator_error_result

    result = evaluator_error_result(
        scenario(),
        "t1",
        KeyError("observations"),
        judge_status=SKIPPED,
        finished_at="2026-11-22T10:00:00.000Z",
    )
    assert result.status == "error" and result.evaluator_error is not None
    assert result.evaluator_error.type == "KeyError"
    assert "KeyError: 'observations'" in result.evaluator_error.traceback
    assert scores_for(result, run_id="run-1") == []


def test_a_score_built_from_checked_values_is_the_score_the_constructor_gives() -> None:
    # Score.built skips the frozen dataclass's __init__ (scores_for's hot path): same fields, equal,
    # same repr, still frozen
    values = {
        "id": "i",
        "trace_id": "t",
        "name": "turn_jga",
        "value": 1.0,
        "data_type": "BOOLEAN",
        "comment": None,
        "timestamp": "2026-11-22T10:00:01Z",
        "metadata": {"run_id": "r", "turn": 2},
    }
    built, made = Score.built(**values), Score(**values)  # type: ignore[arg-type]
    assert built == made and repr(built) == repr(made) and vars(built) == vars(made)
    assert built.session_id is None and built.observation_id is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.value = 0.0  # type: ignore[misc]
