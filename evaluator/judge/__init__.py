"""The LLM judges: the model client protocol with the OpenAI-compatible client and its recording fake,
what the judges are shown, their reply models with the tolerant reader and one repair, the one retry
policy and its shared limiter, the verdict cache, `Judges` (the runtime that puts them together), and the
built-in judge metrics: `QualityJudge`, `CorrectnessJudge` and the per-agent `AgentJudge`.

`OpenAIJudgeModel` is imported on first use (evaluator._lazy): the rest of the package loads no `openai`.
So are the per-agent judge's names (`agents`): a run without the per-agent analysis does not load it."""

from typing import TYPE_CHECKING

from evaluator._lazy import lazy_names
from evaluator.judge.cache import CacheKey, MemoryVerdictCache, VerdictCache
from evaluator.judge.correctness import CorrectnessJudge, crag_metrics
from evaluator.judge.crag import exact_match, miss_phrase, normalise
from evaluator.judge.fake import FakeJudgeModel, ModelCall
from evaluator.judge.judges import (
    NOTHING_TO_JUDGE,
    Decided,
    JudgeOutcome,
    Judges,
    JudgeSettings,
    overall_status,
)
from evaluator.judge.metric import JudgeMetric, JudgeRuntime, PromptRef, RuleJudge
from evaluator.judge.model import JudgeModel, ModelReply, TokenUsage
from evaluator.judge.quality import DIMENSIONS as QUALITY_DIMENSIONS
from evaluator.judge.quality import TURN_CRITERIA, QualityJudge, quality_means
from evaluator.judge.render import BLOCK_TAGS, Sources, history_block, sources_block, untrusted
from evaluator.judge.replies import AgentReply, CorrectnessReply, QualityReply, json_objects, read_reply
from evaluator.judge.retry import RateGate, RetryPolicy
from evaluator.judge.tracing import (
    NO_TRACING,
    GenerationRecord,
    JudgementTrace,
    JudgeTracer,
    UnrecordedJudgement,
)
from evaluator.judge.verdicts import CorrectnessVerdict, Judgement, QualityVerdict

if TYPE_CHECKING:
    from evaluator.judge.agents import AgentJudge, AgentJudgeVerdict, AgentRating, with_agent_judgement
    from evaluator.judge.openai_client import OpenAIJudgeModel

__all__ = [
    "BLOCK_TAGS",
    "NOTHING_TO_JUDGE",
    "NO_TRACING",
    "QUALITY_DIMENSIONS",
    "TURN_CRITERIA",
    "AgentJudge",
    "AgentJudgeVerdict",
    "AgentRating",
    "AgentReply",
    "CacheKey",
    "CorrectnessJudge",
    "CorrectnessReply",
    "CorrectnessVerdict",
    "Decided",
    "FakeJudgeModel",
    "GenerationRecord",
    "JudgeMetric",
    "JudgeModel",
    "JudgeOutcome",
    "JudgeRuntime",
    "JudgeSettings",
    "JudgeTracer",
    "Judgement",
    "JudgementTrace",
    "Judges",
    "MemoryVerdictCache",
    "ModelCall",
    "ModelReply",
    "OpenAIJudgeModel",
    "PromptRef",
    "QualityJudge",
    "QualityReply",
    "QualityVerdict",
    "RateGate",
    "RetryPolicy",
    "RuleJudge",
    "Sources",
    "TokenUsage",
    "UnrecordedJudgement",
    "VerdictCache",
    "crag_metrics",
    "exact_match",
    "history_block",
    "json_objects",
    "miss_phrase",
    "normalise",
    "overall_status",
    "quality_means",
    "read_reply",
    "sources_block",
    "untrusted",
    "with_agent_judgement",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        **dict.fromkeys(
            ("AgentJudge", "AgentJudgeVerdict", "AgentRating", "with_agent_judgement"),
            "evaluator.judge.agents",
        ),
        "OpenAIJudgeModel": "evaluator.judge.openai_client",
    },
)
