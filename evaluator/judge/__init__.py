"""The LLM judges: the model client protocol with the OpenAI-compatible client and its recording fake,
what the judges are shown, their reply models with the tolerant reader and one repair, the one retry
policy and its shared limiter, the verdict cache, and `Judges`, which puts them together."""

from evaluator.judge.cache import CacheKey, MemoryVerdictCache, VerdictCache
from evaluator.judge.crag import exact_match, miss_phrase, normalise
from evaluator.judge.fake import FakeJudgeModel, ModelCall
from evaluator.judge.judges import NOTHING_TO_JUDGE, JudgeOutcome, Judges, JudgeSettings, overall_status
from evaluator.judge.model import JudgeModel, ModelReply, TokenUsage
from evaluator.judge.openai_client import OpenAIJudgeModel
from evaluator.judge.render import BLOCK_TAGS, Sources, sources_block, untrusted
from evaluator.judge.replies import CorrectnessReply, QualityReply, json_objects, read_reply
from evaluator.judge.retry import RateGate, RetryPolicy
from evaluator.judge.tracing import NO_TRACING, GenerationRecord, JudgementTrace, JudgeTracer
from evaluator.judge.verdicts import CorrectnessVerdict, Judgement, QualityVerdict

__all__ = [
    "BLOCK_TAGS",
    "NOTHING_TO_JUDGE",
    "NO_TRACING",
    "CacheKey",
    "CorrectnessReply",
    "CorrectnessVerdict",
    "FakeJudgeModel",
    "GenerationRecord",
    "JudgeModel",
    "JudgeOutcome",
    "JudgeSettings",
    "JudgeTracer",
    "Judgement",
    "JudgementTrace",
    "Judges",
    "MemoryVerdictCache",
    "ModelCall",
    "ModelReply",
    "OpenAIJudgeModel",
    "QualityReply",
    "QualityVerdict",
    "RateGate",
    "RetryPolicy",
    "Sources",
    "TokenUsage",
    "VerdictCache",
    "exact_match",
    "json_objects",
    "miss_phrase",
    "normalise",
    "overall_status",
    "read_reply",
    "sources_block",
    "untrusted",
]
