"""Rule-based answer checks, before any judge (seed evaluation-and-feedback-spec.md, "Simple cases"):
every `expected.answer.contains` string must occur in the final answer (case-sensitive).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import MetricContext, ScoreDefinition, ScoreValue


def answer_text(answer: Any) -> str:
    """The answer as text: a string as it is, anything else as JSON (None: empty)."""
    if answer is None:
        return ""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class AnswerCheck:
    contains: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.missing

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.passed, "contains": list(self.contains), "missing": list(self.missing)}

    def scores(self) -> list[ScoreValue]:
        comment = f"missing: {', '.join(repr(s) for s in self.missing)}" if self.missing else None
        return [ScoreValue(name="answer_contains", value=float(self.passed), comment=comment)]

    def problems(self) -> list[str]:
        return [f"answer lacks {', '.join(repr(s) for s in self.missing)}"] if self.missing else []


def check_answer(contains: tuple[str, ...], answer: Any) -> AnswerCheck:
    text = answer_text(answer)
    return AnswerCheck(contains=contains, missing=tuple(s for s in contains if s not in text))


class AnswerContainsMetric:
    """`answer.contains`, for scenarios that list strings the answer must hold."""

    key = "answer"
    definitions = (
        ScoreDefinition(
            name="answer_contains",
            data_type="BOOLEAN",
            description="Every expected string occurs in the answer (comment: the missing ones)",
        ),
    )
    figures: Mapping[str, tuple[str, ...]] = {}

    def evaluate(self, context: MetricContext) -> AnswerCheck | None:
        spec = context.scenario.expected.answer
        if spec is None or not spec.contains:
            return None
        return check_answer(spec.contains, context.answer)
