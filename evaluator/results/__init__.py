"""Result values, the JSON contract, and the scores a result yields."""

from evaluator.results.evaluate import error_result, evaluate, evaluator_error_result
from evaluator.results.model import (
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
from evaluator.results.scores import DEFINITIONS, Score, score_id, scores_for
from evaluator.results.summary import FIGURES, RATE_FIGURES, scenario_values, summarize

__all__ = [
    "DEFINITIONS",
    "FIGURES",
    "RATE_FIGURES",
    "EvaluatorFailure",
    "JudgeStatus",
    "PromptUse",
    "RunInfo",
    "ScenarioResult",
    "Score",
    "Status",
    "error_result",
    "evaluate",
    "evaluator_error_result",
    "run_provenance",
    "run_to_json",
    "scenario_values",
    "score_id",
    "scores_for",
    "summarize",
    "totals",
]
