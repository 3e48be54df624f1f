"""The figures the dialogue metrics produce. Every figure has a `value` (a float; BOOLEAN keys as 1.0
or 0.0) that is None when the turn did not measure it (a key the target never reported, a ratio over
nothing), never 0; and its `details` (recall, precision, F1, the JGA breakdown, the policy reason) as
JSON-ready data for the result object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "BOOLEAN_KEYS",
    "DIALOGUE_KEYS",
    "QUALITY_KEYS",
    "RUN_KEYS",
    "TURN_KEYS",
    "Check",
    "Figure",
    "Hallucination",
    "JointGoal",
    "PolicyCheck",
    "SetMatch",
    "SlotMatch",
    "TurnFigures",
    "flag",
]

TURN_KEYS = (
    "domain_accuracy",
    "intent_accuracy",
    "act_accuracy",
    "slot_accuracy",
    "jga",
    "slot_hallucination_rate",
    "entity_hallucination_rate",
    "policy_compliant",
    "system_correct",
)
QUALITY_KEYS = ("response_quality", "response_factual_correctness", "response_completeness")
"""Seed metric 11 (LLM-judged response quality), per dialogue: the means of the quality judge's
`answer_quality`, `factual_correctness` and `completeness` over the turns it scored."""
DIALOGUE_KEYS = (
    "task_completion",
    "memory_transfer",
    "policy_violations",
    "system_correctness",
    "multi_turn_conversation_score",
    *QUALITY_KEYS,
)
RUN_KEYS = (
    *TURN_KEYS,
    "task_completion",
    "memory_transfer",
    "policy_violation_rate",
    "total_policy_violations",
    "system_correctness",
    "multi_turn_conversation_score",
    *QUALITY_KEYS,
    "dialogues",
    "turns",
)
BOOLEAN_KEYS = frozenset(
    {"domain_accuracy", "intent_accuracy", "act_accuracy", "jga", "policy_compliant", "system_correct"}
    | {"task_completion"}
)
"""The keys whose turn (or dialogue) value is 1.0 / 0.0: BOOLEAN scores. Their means are NUMERIC."""


def flag(condition: bool) -> float:
    return 1.0 if condition else 0.0


class Figure(Protocol):
    @property
    def value(self) -> float | None: ...
    @property
    def reason(self) -> str: ...

    def details(self) -> dict[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class Check:
    """A yes/no figure (or a ratio) with the reason behind it."""

    value: float | None
    reason: str = ""

    def details(self) -> dict[str, Any]:
        return {"reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class SetMatch:
    """Labels compared as sets: `value` 1.0 only for identical sets; recall = |P & E| / |E| and
    precision = |P & E| / |P| kept for diagnosis (None over an empty set), F1 their harmonic mean."""

    value: float | None
    recall: float | None = None
    precision: float | None = None
    f1: float | None = None
    reason: str = ""

    def details(self) -> dict[str, Any]:
        return {"recall": self.recall, "precision": self.precision, "f1": self.f1, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class SlotMatch:
    """Slot-value pairs: `value` is the recall (correct / expected pairs), precision = correct /
    predicted pairs (None when nothing was predicted), F1 their harmonic mean; the counts behind them."""

    value: float | None
    precision: float | None = None
    f1: float | None = None
    correct: int = 0
    expected: int = 0
    predicted: int = 0
    reason: str = ""

    def details(self) -> dict[str, Any]:
        return {
            "recall": self.value,
            "precision": self.precision,
            "f1": self.f1,
            "correct": self.correct,
            "expected": self.expected,
            "predicted": self.predicted,
            "reason": self.reason,
        }


@dataclass(frozen=True, kw_only=True)
class JointGoal:
    """Joint goal accuracy and, per domain of either state, whether that domain's slots were identical."""

    value: float | None
    per_domain: Mapping[str, bool]
    reason: str = ""

    def details(self) -> dict[str, Any]:
        return {"per_domain": dict(self.per_domain), "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class Hallucination:
    """A hallucination rate: `hallucinated` (pairs as `domain-slot=value`, or entity names) over the
    `checked` items it was measured on."""

    value: float | None
    hallucinated: tuple[str, ...] = ()
    checked: int = 0
    reason: str = ""

    def details(self) -> dict[str, Any]:
        return {"hallucinated": list(self.hallucinated), "checked": self.checked, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class PolicyCheck:
    """Policy compliance: the guarded action the turn took (None: no policy guards it), the required
    slots its state lacked, and the reason in words."""

    value: float | None
    reason: str
    guarded_by: str | None = None
    missing: tuple[str, ...] = ()

    def details(self) -> dict[str, Any]:
        return {"reason": self.reason, "guarded_by": self.guarded_by, "missing": list(self.missing)}


@dataclass(frozen=True, kw_only=True)
class TurnFigures:
    """Every per-turn figure of one turn, one field per key of `TURN_KEYS`."""

    domain_accuracy: Check
    intent_accuracy: SetMatch
    act_accuracy: SetMatch
    slot_accuracy: SlotMatch
    jga: JointGoal
    slot_hallucination_rate: Hallucination
    entity_hallucination_rate: Hallucination
    policy_compliant: PolicyCheck
    system_correct: Check

    def figure(self, key: str) -> Figure:
        figure: Figure = getattr(self, key)
        return figure

    def metrics(self) -> dict[str, float | None]:
        """Key -> value (None: not measured), for the result object's `metrics`."""
        return {key: self.figure(key).value for key in TURN_KEYS}

    def details(self) -> dict[str, dict[str, Any]]:
        """Key -> details, for the result object's `details`."""
        return {key: self.figure(key).details() for key in TURN_KEYS}
