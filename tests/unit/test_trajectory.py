"""The four trajectory modes, on the seed's table example (seeds/evaluation-and-feedback-spec.md)."""

import pytest

from evaluator.metrics import score_paths, score_trajectory
from evaluator.scenarios import TrajectorySpec
from tests.builders import trace_of

SEED_EXPECTED = ["recipe_search", "nutrition_lookup", "recipe_search", "meal_plan_api"]
SEED_ACTUAL = ["recipe_search", "nutrition_lookup", "meal_plan_api", "recipe_search"]


def test_seed_table_example() -> None:
    score = score_paths(
        SEED_EXPECTED, SEED_ACTUAL, expected_flow="read_recipe", actual_flow="nutrition_lookup"
    )
    assert score.partial_path == 0.5  # 2/4 correct before the first mismatch
    assert score.full_path == 0.0
    assert score.path_nodes == 1.0  # all four tools present, order ignored
    assert score.full_workflow == 0.0
    assert not score.passed


def test_exact_match_with_right_flow_scores_one_everywhere() -> None:
    score = score_paths(SEED_EXPECTED, SEED_EXPECTED, expected_flow="read_recipe", actual_flow="read_recipe")
    assert (score.partial_path, score.full_path, score.path_nodes, score.full_workflow) == (1, 1, 1, 1)


def test_right_path_wrong_flow_fails_only_full_workflow() -> None:
    score = score_paths(["a"], ["a"], expected_flow="x", actual_flow="y")
    assert (score.full_path, score.full_workflow) == (1.0, 0.0)


def test_no_expected_flow_means_full_workflow_follows_full_path() -> None:
    assert score_paths(["a"], ["a"], actual_flow="anything").full_workflow == 1.0


@pytest.mark.parametrize(("actual", "expected_value"), [([], 1.0), (["a"], 0.0)])
def test_empty_expected_path(actual: list[str], expected_value: float) -> None:
    score = score_paths([], actual)
    assert score.partial_path == score.full_path == score.path_nodes == score.full_workflow == expected_value


def test_empty_actual_path_scores_zero() -> None:
    score = score_paths(["a", "b"], [])
    assert (score.partial_path, score.full_path, score.path_nodes) == (0.0, 0.0, 0.0)


def test_repeated_tools_count_as_a_multiset() -> None:
    score = score_paths(["a", "a", "b"], ["a", "b", "b"])
    assert score.path_nodes == pytest.approx(2 / 3)  # one "a" and one "b" matched
    assert score.partial_path == pytest.approx(1 / 3)


def test_extra_tools_after_the_expected_path() -> None:
    score = score_paths(["a"], ["a", "b"])
    assert (score.partial_path, score.full_path, score.path_nodes) == (1.0, 0.0, 1.0)


def test_score_from_trace_uses_tool_start_order_and_flow() -> None:
    trace = trace_of(["orchestrator", "research"], ["pdf_retrieval", "web_search"], flow="research")
    score = score_trajectory(TrajectorySpec(tools=("pdf_retrieval", "web_search"), flow="research"), trace)
    assert score.actual == ("pdf_retrieval", "web_search")
    assert score.actual_flow == "research"
    assert score.full_workflow == 1.0
