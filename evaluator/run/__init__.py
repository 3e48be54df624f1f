"""Running suites: targets, the staged pipeline, the run service (`run_suite`, `SuiteOptions`, `SuiteRun`,
`RunNotStoredError` when the store could not take a run's end, and `check_output_file` for the files a
run writes), the selection of scenarios and the configuration as the run takes it (`select_scenarios`,
`catalogs`, `rules_for`), the judges of one result (`judge_result`), verification, and runs as Langfuse
experiments (`experiment`).

Its names are imported on first use (evaluator._lazy): `lint` takes the selection's checks without
loading the pipeline, the Langfuse SDK or `openai`."""

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names

if TYPE_CHECKING:
    from evaluator.config import LLMEndpoint
    from evaluator.run.crag_turns import CragRecord, TurnDecision, TurnScores, load_turn_data, score_turn_data
    from evaluator.run.experiment import (
        ExperimentPlan,
        PushReport,
        plan_experiment,
        push_suite,
        report_experiment,
    )
    from evaluator.run.files import check_output_file, store_files
    from evaluator.run.judging import (
        HOW_TO_ENABLE,
        NOT_FINISHED,
        JudgePlan,
        check_judge_prompts,
        judge_result,
    )
    from evaluator.run.pipeline import JUDGE_NOT_AVAILABLE, Pipeline, RunOptions, ScenarioTracer, new_run_id
    from evaluator.run.recorded import (
        RecordedTurn,
        check_turn_count,
        judged_recorded_dialogue,
        recorded_dialogue,
    )
    from evaluator.run.selection import (
        DialogueSettings,
        catalogs,
        dialogue_settings,
        entity_problems,
        judge_prompt_problems,
        rules_for,
        select_scenarios,
    )
    from evaluator.run.service import run_suite
    from evaluator.run.suite import ExperimentReport, Notice, RunNotStoredError, SuiteOptions, SuiteRun
    from evaluator.run.target import PromptResolver, Reply, Target, TargetRequest, load_target
    from evaluator.run.verify import VerifyReport, verify_run

__all__ = [
    "HOW_TO_ENABLE",
    "JUDGE_NOT_AVAILABLE",
    "NOT_FINISHED",
    "CragRecord",
    "DialogueSettings",
    "ExperimentPlan",
    "ExperimentReport",
    "JudgePlan",
    "LLMEndpoint",
    "Notice",
    "Pipeline",
    "PromptResolver",
    "PushReport",
    "RecordedTurn",
    "Reply",
    "RunNotStoredError",
    "RunOptions",
    "ScenarioTracer",
    "SuiteOptions",
    "SuiteRun",
    "Target",
    "TargetRequest",
    "TurnDecision",
    "TurnScores",
    "VerifyReport",
    "catalogs",
    "check_judge_prompts",
    "check_output_file",
    "check_turn_count",
    "dialogue_settings",
    "entity_problems",
    "judge_prompt_problems",
    "judge_result",
    "judged_recorded_dialogue",
    "load_target",
    "load_turn_data",
    "new_run_id",
    "plan_experiment",
    "push_suite",
    "recorded_dialogue",
    "report_experiment",
    "rules_for",
    "run_suite",
    "score_turn_data",
    "select_scenarios",
    "store_files",
    "verify_run",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "LLMEndpoint": "evaluator.config",
        **dict.fromkeys(
            ("CragRecord", "TurnDecision", "TurnScores", "load_turn_data", "score_turn_data"),
            "evaluator.run.crag_turns",
        ),
        **dict.fromkeys(
            (
                "ExperimentPlan",
                "PushReport",
                "plan_experiment",
                "push_suite",
                "report_experiment",
            ),
            "evaluator.run.experiment",
        ),
        **dict.fromkeys(
            ("HOW_TO_ENABLE", "NOT_FINISHED", "JudgePlan", "check_judge_prompts", "judge_result"),
            "evaluator.run.judging",
        ),
        **dict.fromkeys(
            ("JUDGE_NOT_AVAILABLE", "Pipeline", "RunOptions", "ScenarioTracer", "new_run_id"),
            "evaluator.run.pipeline",
        ),
        **dict.fromkeys(
            ("RecordedTurn", "check_turn_count", "judged_recorded_dialogue", "recorded_dialogue"),
            "evaluator.run.recorded",
        ),
        **dict.fromkeys(
            (
                "DialogueSettings",
                "catalogs",
                "dialogue_settings",
                "entity_problems",
                "judge_prompt_problems",
                "rules_for",
                "select_scenarios",
            ),
            "evaluator.run.selection",
        ),
        **dict.fromkeys(("check_output_file", "store_files"), "evaluator.run.files"),
        "run_suite": "evaluator.run.service",
        **dict.fromkeys(
            ("ExperimentReport", "Notice", "RunNotStoredError", "SuiteOptions", "SuiteRun"),
            "evaluator.run.suite",
        ),
        **dict.fromkeys(
            ("PromptResolver", "Reply", "Target", "TargetRequest", "load_target"), "evaluator.run.target"
        ),
        **dict.fromkeys(("VerifyReport", "verify_run"), "evaluator.run.verify"),
    },
)
