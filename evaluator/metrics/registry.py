"""The metrics every scenario is checked with, in the order their fields appear in the result object."""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.metrics.answer import AnswerContainsMetric
from evaluator.metrics.base import Metric, MetricContext, ScoreDefinition, Verdict
from evaluator.metrics.trajectory import TrajectoryMetric
from evaluator.metrics.workflow import WorkflowValidator

__all__ = ["METRICS", "metric_definitions", "run_metrics"]

METRICS: tuple[Metric, ...] = (WorkflowValidator(), TrajectoryMetric(), AnswerContainsMetric())


def run_metrics(context: MetricContext, metrics: Sequence[Metric] = METRICS) -> dict[str, Verdict]:
    """Each applicable metric's verdict, by its key (a metric that does not apply is left out)."""
    verdicts: dict[str, Verdict] = {}
    for metric in metrics:
        verdict = metric.evaluate(context)
        if verdict is not None:
            verdicts[metric.key] = verdict
    return verdicts


def metric_definitions(metrics: Sequence[Metric] = METRICS) -> tuple[ScoreDefinition, ...]:
    return tuple(d for metric in metrics for d in metric.definitions)
