"""The judges' typed results. `QualityVerdict` and `CorrectnessVerdict` have the metric shape
(metrics.Verdict: `passed` is None, since judges inform and never decide pass or fail) and yield the
contract scores; `Judgement` is how one judgement went, scored or not (the result's `judge` field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.judge.model import TokenUsage
from evaluator.metrics import ScoreValue
from evaluator.prompts import ChatMessage, Prompt

__all__ = [
    "CorrectnessLabel",
    "CorrectnessVerdict",
    "DecidedBy",
    "JudgeOutcomeStatus",
    "Judgement",
    "QualityVerdict",
]

JudgeOutcomeStatus = Literal["scored", "unscored", "skipped"]
DecidedBy = Literal["judge", "cache", "miss", "exact match", "none"]
CorrectnessLabel = Literal["correct", "miss", "hallucination"]


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """How one judge did on one answer. Unscored: `reason` says why, and `messages` and `raw_reply`
    keep what was sent and what came back."""

    judge: str  # "quality" or "correctness"
    status: JudgeOutcomeStatus
    reason: str = ""
    decided_by: DecidedBy = "judge"
    prompt: Prompt | None = None
    model: str | None = None
    trace_id: str | None = None
    calls: int = 0  # model requests made (retries and the repair included)
    usage: TokenUsage = field(default_factory=TokenUsage)
    usage_reported: bool = True  # False: the endpoint reported no usage for any call (tokens not measured)
    failed: bool = False  # the endpoint gave no usable answer (after the retries)
    messages: Sequence[ChatMessage] = ()
    raw_reply: str | None = None
    # A judgement made of several (the per-agent judge's: one per agent): each with its own trace,
    # and, unscored, its own reason, messages and raw reply. `calls` and `usage` are their sums.
    parts: Sequence[Judgement] = ()

    @property
    def cached(self) -> bool:
        return self.decided_by == "cache"

    def prompt_json(self) -> dict[str, Any] | None:
        if self.prompt is None:
            return None
        return {"name": self.prompt.name, "version": self.prompt.version}

    def score_metadata(self) -> dict[str, Any]:
        """What every score of this judgement carries besides the scenario's metadata."""
        metadata: dict[str, Any] = {"judge": self.judge, "judge_decided_by": self.decided_by}
        if self.prompt is not None:
            metadata |= {"judge_prompt": self.prompt.name, "judge_prompt_version": self.prompt.version}
        if self.model is not None:
            metadata["judge_model"] = self.model
        if self.trace_id is not None:
            metadata["judge_trace_id"] = self.trace_id
        return metadata

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "status": self.status,
            "reason": self.reason,
            "decided_by": self.decided_by,
            "prompt": None
            if self.prompt is None
            else {**(self.prompt_json() or {}), "source": self.prompt.source},
            "model": self.model,
            "trace_id": self.trace_id,
            "cached": self.cached,
            "calls": self.calls,
            "tokens": self.usage.to_json() if self.usage_reported else None,
            "failed": self.failed,
        }
        if self.status == "unscored" and not self.parts:
            document["messages"] = [m.model_dump() for m in self.messages]
            document["raw_reply"] = self.raw_reply
        if self.parts:
            document["parts"] = {part.judge: part.to_json() for part in self.parts}
        return document


@dataclass(frozen=True, kw_only=True)
class QualityVerdict:
    answer_quality: float
    factual_correctness: float
    completeness: float
    reasoning: str
    judgement: Judgement

    @property
    def passed(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "answer_quality": self.answer_quality,
            "factual_correctness": self.factual_correctness,
            "completeness": self.completeness,
            "reasoning": self.reasoning,
            "prompt": self.judgement.prompt_json(),
            "model": self.judgement.model,
        }

    def scores(self) -> list[ScoreValue]:
        metadata = self.judgement.score_metadata()
        return [
            ScoreValue(name=f"quality_{name}", value=value, comment=self.reasoning, metadata=metadata)
            for name, value in (
                ("answer_quality", self.answer_quality),
                ("factual_correctness", self.factual_correctness),
                ("completeness", self.completeness),
            )
        ]

    def problems(self) -> list[str]:
        return []


@dataclass(frozen=True, kw_only=True)
class CorrectnessVerdict:
    verdict: CorrectnessLabel
    exact_match: bool
    reason: str
    judgement: Judgement

    @property
    def passed(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "exact_match": self.exact_match,
            "reason": self.reason,
            "prompt": self.judgement.prompt_json(),
            "model": self.judgement.model,
        }

    def scores(self) -> list[ScoreValue]:
        comment = "exact match" if self.exact_match else self.reason
        return [
            ScoreValue(
                name="correctness",
                value=self.verdict,
                comment=comment,
                metadata=self.judgement.score_metadata(),
            )
        ]

    def problems(self) -> list[str]:
        return []
