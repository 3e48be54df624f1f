"""The only package that imports `langfuse`: settings, tracing with in-process capture (and the SDK
client's lifetime after a run), experiments (a trace linked to its dataset item through span
attributes), and one connected project split by role (scores, span re-sending, trace read-back, prompt
management, datasets, score read-back).

Its names are imported on first use (evaluator._lazy): importing the package loads no SDK. It defers
httpx's command line (`_httpx_cli`) before any of its modules imports httpx."""

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names
from evaluator.langfuse import _httpx_cli

_httpx_cli.defer()

if TYPE_CHECKING:
    from evaluator.langfuse.connection import LangfuseConnection
    from evaluator.langfuse.datasets import DatasetItem, LangfuseDatasets, item_id, run_score_bodies
    from evaluator.langfuse.experiments import Experiment, ExperimentLink, experiment_id
    from evaluator.langfuse.experiments import available as experiments_available
    from evaluator.langfuse.judging import JudgeTracing
    from evaluator.langfuse.lifetime import one_command
    from evaluator.langfuse.log_lines import OwnPromptFetchLines, quiet_accounted_lines
    from evaluator.langfuse.prompts import LangfusePrompts
    from evaluator.langfuse.score_history import LangfuseScoreHistory
    from evaluator.langfuse.scores import LangfuseScores
    from evaluator.langfuse.settings import DEFAULT_BASE_URL, LangfuseSettings
    from evaluator.langfuse.span_outbox import AckingExporter, SpanResender
    from evaluator.langfuse.traces import LangfuseTraces
    from evaluator.langfuse.tracing import Captured, ScenarioSpan, Tracing

__all__ = [
    "DEFAULT_BASE_URL",
    "AckingExporter",
    "Captured",
    "DatasetItem",
    "Experiment",
    "ExperimentLink",
    "JudgeTracing",
    "LangfuseConnection",
    "LangfuseDatasets",
    "LangfusePrompts",
    "LangfuseScoreHistory",
    "LangfuseScores",
    "LangfuseSettings",
    "LangfuseTraces",
    "OwnPromptFetchLines",
    "ScenarioSpan",
    "SpanResender",
    "Tracing",
    "experiment_id",
    "experiments_available",
    "item_id",
    "one_command",
    "quiet_accounted_lines",
    "run_score_bodies",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "LangfuseConnection": "evaluator.langfuse.connection",
        **dict.fromkeys(
            ("DatasetItem", "LangfuseDatasets", "item_id", "run_score_bodies"), "evaluator.langfuse.datasets"
        ),
        **dict.fromkeys(("Experiment", "ExperimentLink", "experiment_id"), "evaluator.langfuse.experiments"),
        "JudgeTracing": "evaluator.langfuse.judging",
        "one_command": "evaluator.langfuse.lifetime",
        **dict.fromkeys(("OwnPromptFetchLines", "quiet_accounted_lines"), "evaluator.langfuse.log_lines"),
        "LangfusePrompts": "evaluator.langfuse.prompts",
        "LangfuseScoreHistory": "evaluator.langfuse.score_history",
        "LangfuseScores": "evaluator.langfuse.scores",
        **dict.fromkeys(("DEFAULT_BASE_URL", "LangfuseSettings"), "evaluator.langfuse.settings"),
        **dict.fromkeys(("AckingExporter", "SpanResender"), "evaluator.langfuse.span_outbox"),
        "LangfuseTraces": "evaluator.langfuse.traces",
        **dict.fromkeys(("Captured", "ScenarioSpan", "Tracing"), "evaluator.langfuse.tracing"),
        "experiments_available": "evaluator.langfuse.experiments:available",
    },
)
