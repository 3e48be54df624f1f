"""Run-level metrics from result objects: judge fields when present, evaluator errors kept out."""

from dataclasses import replace

import pytest

from evaluator.results import JudgeStatus, summarize
from evaluator.results.evaluate import evaluator_error_result
from tests.builders import scenario
from tests.stored_runs import result


def test_correctness_metrics_follow_the_crag_formulas() -> None:
    verdicts = ["correct", "correct", "correct", "miss", "hallucination"]
    documents = [result(f"s{i}", verdict=v).to_json() for i, v in enumerate(verdicts)]
    documents.append(result("no-verdict").to_json())
    summary = summarize(documents)
    assert summary["correctness_accuracy"] == 0.6
    assert summary["correctness_hallucination_rate"] == 0.2
    assert summary["correctness_missing_rate"] == 0.2
    # truthfulness = (2 * correct + miss) / total - 1 over the results with a verdict
    assert summary["correctness_truthfulness"] == pytest.approx((2 * 3 + 1) / 5 - 1)
    assert summary["n"]["correctness_accuracy"] == 5 and summary["n"]["pass_rate"] == 6


def test_quality_means_per_dimension_and_unscored_judges() -> None:
    documents = [
        result("a", quality=0.9).to_json(),
        result("b", quality=0.5).to_json(),
        result("c", unscored=True).to_json(),  # a judge that could not score is no 0
    ]
    summary = summarize(documents)
    assert summary["quality_answer_quality"] == 0.7 and summary["quality_mean"] == 0.7
    assert summary["n"]["quality_mean"] == 2
    assert summary["judge_unscored"] == 1


def test_evaluator_errors_are_counted_but_enter_no_figure() -> None:
    bug = evaluator_error_result(
        scenario(id="bug"), "t", RuntimeError("boom"), judge_status=JudgeStatus(status="skipped", reason="")
    )
    documents = [result("a").to_json(), bug.to_json(), replace(result("b", workflow=False)).to_json()]
    summary = summarize(documents)
    assert summary["evaluator_errors"] == 1 and summary["errors"] == 1
    assert summary["pass_rate"] == 0.5 and summary["n"]["pass_rate"] == 2
    assert summary["workflow_pass_rate"] == 0.5


def test_figures_are_none_without_data() -> None:
    summary = summarize([])
    assert summary["pass_rate"] is None and summary["quality_mean"] is None and summary["scenarios"] == 0
