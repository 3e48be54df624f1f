"""Result values, the JSON contract, the scores a result yields, and the built-in `MetricSet`."""

from evaluator.results.builtin import builtin_metrics, default_metrics, with_dialogues, with_dialogues_for
from evaluator.results.dialogue import DECIDING_KEYS, DialogueOutcome, TurnOutcome, turn_status
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
