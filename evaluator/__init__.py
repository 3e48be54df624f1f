"""Evaluate multi-agent LLM systems through their Langfuse traces.

The package is layered, imports pointing down only (tests/unit/test_layering.py):

    errors, config, _time, _yaml, _problems     the exception tree, settings, plumbing
    scenarios/                                  scenario files, target catalogs, the loader
    trace/                                      the normalized trace and its sources
    metrics/                                    pure checks, one shape (context -> verdict + scores)
    results/                                    result values, the JSON contract, scores
    prompts/                                    prompt files, the library, push
    storage/                                    SQLite store, the outbox and its delivery
    langfuse/                                   the only package importing `langfuse`
    run/                                        targets, the staged pipeline, run_suite, verify
    reports/                                    history and console output
    cli/                                        typer commands only
"""

from evaluator.errors import ConfigError, EvaluatorError, InputError, ScenarioError, TraceError
from evaluator.metrics import TrajectoryScore, WorkflowValidator, WorkflowVerdict, score_paths
from evaluator.results import ScenarioResult
from evaluator.run import SuiteOptions, SuiteRun, TargetRequest, run_suite
from evaluator.scenarios import Scenario, load_scenarios
from evaluator.trace import Trace, build_trace

__all__ = [
    "ConfigError",
    "EvaluatorError",
    "InputError",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "SuiteOptions",
    "SuiteRun",
    "TargetRequest",
    "Trace",
    "TraceError",
    "TrajectoryScore",
    "WorkflowValidator",
    "WorkflowVerdict",
    "build_trace",
    "load_scenarios",
    "run_suite",
    "score_paths",
]
