"""Evaluate multi-agent LLM systems through their Langfuse traces.

The package is layered, imports pointing down only (tests/unit/test_layering.py):

    errors, config, _time, _yaml, _problems     the exception tree, settings, plumbing
    scenarios/                                  scenario files, target catalogs, the loader
    trace/                                      the normalized trace and its sources
    metrics/                                    the metric shape, MetricSet, the rule checks
    prompts/                                    prompt files, the library, push
    judge/                                      the judge metrics and the runtime they share
    results/                                    result values, the JSON contract, scores, the run's metrics
    storage/                                    SQLite store, the outbox and its delivery
    langfuse/                                   the only package importing `langfuse`
    run/                                        targets, the staged pipeline, run_suite, verify
    reports/                                    history and console output
    cli/                                        typer commands only

The names below are imported on first use (evaluator._lazy), so that `evaluator` (and the `evaluator`
command, which starts by importing it) costs nothing until they are needed: a Ctrl-C while the command
starts is then caught by the command, not shown as a traceback from the middle of an import. So are
`evaluator.langfuse`'s and `evaluator.run`'s, and `evaluator.judge.OpenAIJudgeModel`: a command loads the
Langfuse SDK and `openai` only when it uses them. And so are the per-agent analysis's and the dialogues'
names of `evaluator.metrics`, `evaluator.judge` and `evaluator.results`: a run loads that code only when
a target declares `agent_tools` or `tool_schemas`, or a scenario is a dialogue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names

if TYPE_CHECKING:
    from evaluator.errors import ConfigError, EvaluatorError, InputError, ScenarioError, TraceError
    from evaluator.metrics import (
        Figure,
        Gate,
        MetricBase,
        MetricSet,
        TrajectoryScore,
        WorkflowValidator,
        WorkflowVerdict,
        score_paths,
    )
    from evaluator.results import ScenarioResult, builtin_metrics
    from evaluator.run import Reply, SuiteOptions, SuiteRun, TargetRequest, run_suite
    from evaluator.scenarios import Scenario, load_scenarios
    from evaluator.trace import Trace, build_trace

_HOMES = {  # each public name -> the module it comes from
    **dict.fromkeys(
        ("ConfigError", "EvaluatorError", "InputError", "ScenarioError", "TraceError"), "evaluator.errors"
    ),
    **dict.fromkeys(
        (
            "Figure",
            "Gate",
            "MetricBase",
            "MetricSet",
            "TrajectoryScore",
            "WorkflowValidator",
            "WorkflowVerdict",
            "score_paths",
        ),
        "evaluator.metrics",
    ),
    **dict.fromkeys(("ScenarioResult", "builtin_metrics"), "evaluator.results"),
    **dict.fromkeys(("Reply", "SuiteOptions", "SuiteRun", "TargetRequest", "run_suite"), "evaluator.run"),
    **dict.fromkeys(("Scenario", "load_scenarios"), "evaluator.scenarios"),
    **dict.fromkeys(("Trace", "build_trace"), "evaluator.trace"),
}

__all__ = [
    "ConfigError",
    "EvaluatorError",
    "Figure",
    "Gate",
    "InputError",
    "MetricBase",
    "MetricSet",
    "Reply",
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
    "builtin_metrics",
    "load_scenarios",
    "run_suite",
    "score_paths",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
