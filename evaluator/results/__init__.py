"""Result values, the JSON contract, the scores a result yields, and the built-in `MetricSet`.

A dialogue's result (`dialogue`: `DialogueOutcome` and its turns) is imported on first use
(evaluator._lazy): a run without dialogues does not load it, nor the dialogue metric."""

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names
from evaluator.results.builtin import builtin_metrics, default_metrics, with_dialogues, with_dialogues_for
from evaluator.results.evaluate import as_evaluator_error, error_result, evaluate, evaluator_error_result
from evaluator.results.figures import agent_prompts, judge_prompts, scenario_values, summarize
from evaluator.results.model import (
    JUDGES_CUT_OFF,
    JUDGES_INTERRUPTED,
    LATEST,
    PREVIOUS,
    RUN_KEYWORDS,
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
from evaluator.results.scores import Score, score_id, scores_for
from evaluator.results.summary import judge_usage, run_summaries, with_turns
from evaluator.results.tool_schema_files import ToolSchemaFile, check_tool_schemas, tool_schema_problems

if TYPE_CHECKING:
    from evaluator.results.dialogue import DECIDING_KEYS, DialogueOutcome, TurnOutcome, turn_status

__all__ = [
    "DECIDING_KEYS",
    "JUDGES_CUT_OFF",
    "JUDGES_INTERRUPTED",
    "LATEST",
    "PREVIOUS",
    "RUN_KEYWORDS",
    "DialogueOutcome",
    "EvaluatorFailure",
    "JudgeStatus",
    "PromptUse",
    "RunInfo",
    "ScenarioResult",
    "Score",
    "Status",
    "ToolSchemaFile",
    "TurnOutcome",
    "agent_prompts",
    "as_evaluator_error",
    "builtin_metrics",
    "check_tool_schemas",
    "default_metrics",
    "error_result",
    "evaluate",
    "evaluator_error_result",
    "judge_prompts",
    "judge_usage",
    "run_provenance",
    "run_summaries",
    "run_to_json",
    "scenario_values",
    "score_id",
    "scores_for",
    "summarize",
    "tool_schema_problems",
    "totals",
    "turn_status",
    "with_dialogues",
    "with_dialogues_for",
    "with_turns",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    dict.fromkeys(
        ("DECIDING_KEYS", "DialogueOutcome", "TurnOutcome", "turn_status"), "evaluator.results.dialogue"
    ),
)
