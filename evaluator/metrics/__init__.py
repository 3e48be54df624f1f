"""The metric shape (`base`: every metric, rule check or judge, declares its key, stage, level, scores and
figures), the `MetricSet` of a run, and the rule checks: `workflow`, `trajectory`, `answer`.

The per-agent analysis's names (`agents`: `PerAgentMetric` and its types) are imported on first use
(evaluator._lazy): a run whose targets declare no `agent_tools` or `tool_schemas` does not load it."""

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names
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
    weighted_mean,
)
from evaluator.metrics.metric_set import MetricSet
from evaluator.metrics.trajectory import TrajectoryMetric, TrajectoryScore, score_paths, score_trajectory
from evaluator.metrics.workflow import KindVerdict, WorkflowValidator, WorkflowVerdict, validate_kind

if TYPE_CHECKING:
    from evaluator.metrics.agents import (
        AgentWeights,
        OverallWeights,
        PerAgentMetric,
        PerAgentVerdict,
        ScoreWeights,
        TargetAgents,
    )

__all__ = [
    "AgentWeights",
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
    "OverallWeights",
    "PerAgentMetric",
    "PerAgentVerdict",
    "ScoreDefinition",
    "ScoreValue",
    "ScoreWeights",
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
    "weighted_mean",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    dict.fromkeys(
        (
            "AgentWeights",
            "OverallWeights",
            "PerAgentMetric",
            "PerAgentVerdict",
            "ScoreWeights",
            "TargetAgents",
        ),
        "evaluator.metrics.agents",
    ),
)
