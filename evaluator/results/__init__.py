"""Result values, the JSON contract, and the scores a result yields."""

from evaluator.results.evaluate import as_evaluator_error, error_result, evaluate, evaluator_error_result
from evaluator.results.figures import FIGURES, QUALITY_DIMENSIONS, RATE_FIGURES, scenario_values, summarize
from evaluator.results.model import (
    JUDGE_KEYS,
    EvaluatorFailure,
    JudgeStatus,
    PromptUse,
    RunInfo,
    ScenarioResult,
    Status,
    run_provenance,
    run_to_json,
    totals,
)
from evaluator.results.scores import (
    CORRECTNESS_CATEGORIES,
    DEFINITIONS,
    JUDGE_DEFINITIONS,
    Score,
    score_id,
    scores_for,
)
from evaluator.results.summary import (
    correctness_metrics,
    crag_metrics,
    judge_usage,
    quality_means,
    run_metrics,
)

__all__ = [
    "CORRECTNESS_CATEGORIES",
    "DEFINITIONS",
    "FIGURES",
    "JUDGE_DEFINITIONS",
    "JUDGE_KEYS",
    "QUALITY_DIMENSIONS",
    "RATE_FIGURES",
    "EvaluatorFailure",
    "JudgeStatus",
    "PromptUse",
    "RunInfo",
    "ScenarioResult",
    "Score",
    "Status",
    "as_evaluator_error",
    "correctness_metrics",
    "crag_metrics",
    "error_result",
    "evaluate",
    "evaluator_error_result",
    "judge_usage",
    "quality_means",
    "run_metrics",
    "run_provenance",
    "run_to_json",
    "scenario_values",
    "score_id",
    "scores_for",
    "summarize",
    "totals",
]
