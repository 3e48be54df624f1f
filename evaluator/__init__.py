"""Evaluate multi-agent LLM systems through their Langfuse traces."""

from evaluator.errors import ConfigError, EvaluatorError, InputError, ScenarioError, TraceError
from evaluator.results import ScenarioResult
from evaluator.scenario import Scenario, load_scenarios
from evaluator.target import TargetRequest
from evaluator.trace import Trace, build_trace
from evaluator.trajectory import TrajectoryScore, score_paths
from evaluator.workflow import WorkflowValidator, WorkflowVerdict

__all__ = [
    "ConfigError",
    "EvaluatorError",
    "InputError",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "TargetRequest",
    "Trace",
    "TraceError",
    "TrajectoryScore",
    "WorkflowValidator",
    "WorkflowVerdict",
    "build_trace",
    "load_scenarios",
    "score_paths",
]
