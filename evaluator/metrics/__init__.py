"""Pure checks, one shape: context in, typed verdict out, plus the scores it yields (`base`)."""

from evaluator.metrics.answer import (
    AnswerCheck,
    AnswerContainsMetric,
    answer_text,
    check_answer,
    final_answer,
)
from evaluator.metrics.base import DataType, Metric, MetricContext, ScoreDefinition, ScoreValue, Verdict
from evaluator.metrics.registry import METRICS, metric_definitions, run_metrics
from evaluator.metrics.trajectory import TrajectoryMetric, TrajectoryScore, score_paths, score_trajectory
from evaluator.metrics.workflow import KindVerdict, WorkflowValidator, WorkflowVerdict, validate_kind

__all__ = [
    "METRICS",
    "AnswerCheck",
    "AnswerContainsMetric",
    "DataType",
    "KindVerdict",
    "Metric",
    "MetricContext",
    "ScoreDefinition",
    "ScoreValue",
    "TrajectoryMetric",
    "TrajectoryScore",
    "Verdict",
    "WorkflowValidator",
    "WorkflowVerdict",
    "answer_text",
    "check_answer",
    "final_answer",
    "metric_definitions",
    "run_metrics",
    "score_paths",
    "score_trajectory",
    "validate_kind",
]
