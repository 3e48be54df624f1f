"""The metric shape (`base`: every metric, rule check or judge, declares its key, stage, level, scores and
figures), the `MetricSet` of a run, and the rule checks: `workflow`, `trajectory`, `answer`."""

from evaluator.metrics.agents import PerAgentMetric, PerAgentVerdict, TargetAgents
from evaluator.metrics.answer import (
    AnswerCheck,
    AnswerContainsMetric,
    answer_text,
    check_answer,
    final_answer,
)
from evaluator.metrics.base import (
    Breakdown,
    DataType,
    Figure,
    Gate,
    JudgeStatus,
    Level,
    Metric,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
    SessionContext,
    Stage,
    Unit,
    Verdict,
    at,
    number,
    number_at,
    session_id,
)
from evaluator.metrics.metric_set import MetricSet
from evaluator.metrics.trajectory import TrajectoryMetric, TrajectoryScore, score_paths, score_trajectory
from evaluator.metrics.workflow import KindVerdict, WorkflowValidator, WorkflowVerdict, validate_kind

__all__ = [
    "AnswerCheck",
    "AnswerContainsMetric",
    "Breakdown",
    "DataType",
    "Figure",
    "Gate",
    "JudgeStatus",
    "KindVerdict",
    "Level",
    "Metric",
    "MetricBase",
    "MetricContext",
    "MetricSet",
    "PerAgentMetric",
    "PerAgentVerdict",
    "ScoreDefinition",
    "ScoreValue",
    "SessionContext",
    "Stage",
    "TargetAgents",
    "TrajectoryMetric",
    "TrajectoryScore",
    "Unit",
    "Verdict",
    "WorkflowValidator",
    "WorkflowVerdict",
    "answer_text",
    "at",
    "check_answer",
    "final_answer",
    "number",
    "number_at",
    "score_paths",
    "score_trajectory",
    "session_id",
    "validate_kind",
]
