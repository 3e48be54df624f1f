"""Run-level metrics from result objects: judge fields when present, evaluator errors kept out."""

from dataclasses import replace

import pytest

from evaluator.judge import Judgement, TokenUsage
from evaluator.results import JudgeStatus, ScenarioResult, judge_usage, summarize
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


def test_judgements_not_asked_do_not_make_unreported_tokens_a_zero() -> None:
    """The judge endpoint hung: 2 judgements made 2 calls each with no reply (no usage), then the run
    gave the endpoint up and the rest were not asked (no call, tokens 0). The summary said "tokens 0
    in, 0 out", as if the endpoint had reported them; nothing was reported: not measured."""
    timed_out = Judgement(judge="quality", status="unscored", calls=2, usage_reported=False, failed=True)
    not_asked = Judgement(judge="quality", status="unscored", reason="not asked: ...")
    results = [
        ScenarioResult(
            scenario_id=f"s{i}",
            trace_id=f"t{i}",
            status="passed",
            judge_detail={"quality": judgement.to_json()},
            judge_status=JudgeStatus(status="unscored", reason=judgement.reason),
        )
        for i, judgement in enumerate([timed_out, timed_out, not_asked, not_asked, not_asked])
    ]
    usage = judge_usage(results)
    assert (usage["calls"], usage["unscored"]) == (4, 5)
    assert (usage["input_tokens"], usage["output_tokens"]) == (None, None)
    reported = Judgement(judge="quality", status="scored", calls=1, usage=TokenUsage(input=120, output=30))
    both = [*results, replace(results[0], judge_detail={"quality": reported.to_json()})]
    assert (judge_usage(both)["input_tokens"], judge_usage(both)["output_tokens"]) == (120, 30)
