"""The built-in metrics of a run, as a `MetricSet` built from the configuration: the rule checks
(workflow, trajectory, answer), then the judges (quality, correctness) with their configured prompts,
source budget and miss phrases. Commands build it once per run (and `report`, `compare` once per
command) and pass it on; `extra` metrics follow the built-in ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from evaluator.config import Config, JudgeConfig
from evaluator.judge import CorrectnessJudge, QualityJudge
from evaluator.metrics import AnswerContainsMetric, Metric, MetricSet, TrajectoryMetric, WorkflowValidator


def builtin_metrics(config: Config | None = None, *, extra: Sequence[Metric] = ()) -> MetricSet:
    """The built-in metrics with `config`'s judge settings (the defaults without one), then `extra`."""
    judge = config.settings.judge if config is not None else JudgeConfig()
    return MetricSet(
        (
            WorkflowValidator(),
            TrajectoryMetric(),
            AnswerContainsMetric(),
            QualityJudge(prompt=judge.quality_prompt, source_budget_chars=judge.source_budget_chars),
            CorrectnessJudge(prompt=judge.correctness_prompt, miss_phrases=judge.miss_phrases),
            *extra,
        )
    )


@cache
def default_metrics() -> MetricSet:
    """The built-in metrics with the default settings: for library callers that give no set."""
    return builtin_metrics()
