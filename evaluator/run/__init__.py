"""Running suites: targets, the staged pipeline, the run service (`run_suite`) and verification."""

from evaluator.config import LLMEndpoint
from evaluator.run.judging import HOW_TO_ENABLE, JudgePlan, check_judge_prompts
from evaluator.run.pipeline import JUDGE_NOT_AVAILABLE, Pipeline, RunOptions, ScenarioTracer, new_run_id
from evaluator.run.service import SuiteRun, run_suite
from evaluator.run.target import PromptResolver, Target, TargetRequest, load_target
from evaluator.run.verify import VerifyReport, verify_run

__all__ = [
    "HOW_TO_ENABLE",
    "JUDGE_NOT_AVAILABLE",
    "JudgePlan",
    "LLMEndpoint",
    "Pipeline",
    "PromptResolver",
    "RunOptions",
    "ScenarioTracer",
    "SuiteRun",
    "Target",
    "TargetRequest",
    "VerifyReport",
    "check_judge_prompts",
    "load_target",
    "new_run_id",
    "run_suite",
    "verify_run",
]
