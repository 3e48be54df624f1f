"""Running suites: targets, the staged pipeline, the run service (`run_suite`), verification, and runs as
Langfuse experiments (`experiment`)."""

from evaluator.config import LLMEndpoint
from evaluator.run.experiment import (
    ExperimentPlan,
    ExperimentReport,
    PushReport,
    plan_experiment,
    push_suite,
    report_experiment,
)
from evaluator.run.judging import HOW_TO_ENABLE, JudgePlan, check_judge_prompts
from evaluator.run.pipeline import JUDGE_NOT_AVAILABLE, Pipeline, RunOptions, ScenarioTracer, new_run_id
from evaluator.run.service import SuiteRun, run_suite, select_scenarios
from evaluator.run.target import PromptResolver, Target, TargetRequest, load_target
from evaluator.run.verify import VerifyReport, verify_run

__all__ = [
    "HOW_TO_ENABLE",
    "JUDGE_NOT_AVAILABLE",
    "ExperimentPlan",
    "ExperimentReport",
    "JudgePlan",
    "LLMEndpoint",
    "Pipeline",
    "PromptResolver",
    "PushReport",
    "RunOptions",
    "ScenarioTracer",
    "SuiteRun",
    "Target",
    "TargetRequest",
    "VerifyReport",
    "check_judge_prompts",
    "load_target",
    "new_run_id",
    "plan_experiment",
    "push_suite",
    "report_experiment",
    "run_suite",
    "select_scenarios",
    "verify_run",
]
