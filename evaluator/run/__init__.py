"""Running suites: targets, the staged pipeline, the run service (`run_suite`, `SuiteOptions`, `SuiteRun`,
`RunNotStoredError` when the store could not take a run's end, and `check_output_file` for the files a
run writes), the selection of scenarios and the configuration as the run takes it (`select_scenarios`,
`catalogs`, `rules_for`), the judges of one result (`judge_result`), verification, and runs as Langfuse
experiments (`experiment`)."""

from evaluator.config import LLMEndpoint
from evaluator.run.crag_turns import CragRecord, TurnDecision, TurnScores, load_turn_data, score_turn_data
from evaluator.run.dialogue import DialogueSettings
from evaluator.run.experiment import (
    ExperimentPlan,
    ExperimentReport,
    PushReport,
    plan_experiment,
    push_suite,
    report_experiment,
)
from evaluator.run.judging import HOW_TO_ENABLE, NOT_FINISHED, JudgePlan, check_judge_prompts, judge_result
from evaluator.run.pipeline import JUDGE_NOT_AVAILABLE, Pipeline, RunOptions, ScenarioTracer, new_run_id
from evaluator.run.recorded import RecordedTurn, check_turn_count, judged_recorded_dialogue, recorded_dialogue
from evaluator.run.selection import catalogs, dialogue_settings, entity_problems, rules_for, select_scenarios
from evaluator.run.service import check_output_file, run_suite, store_files
from evaluator.run.suite import Notice, RunNotStoredError, SuiteOptions, SuiteRun
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
