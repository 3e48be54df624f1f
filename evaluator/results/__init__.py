"""Result values, the JSON contract, and the scores a result yields."""

from evaluator.results.evaluate import error_result, evaluate, evaluator_error_result
from evaluator.results.model import (
    EvaluatorFailure,
    JudgeStatus,
    PromptUse,
    RunInfo,
    ScenarioResult,
    Status,
    run_to_json,
    totals,
)
from evaluator.results.scores import DEFINITIONS, Score, score_id, scores_for

__all__ = [
    "DEFINITIONS",
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
    "run_to_json",
    "score_id",
    "scores_for",
    "totals",
]
