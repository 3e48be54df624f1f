"""The one shape every check has, as in pydantic_evals: a context in, a typed verdict out, plus the
score definitions the check yields. A new metric family is one module with a `Metric` and its verdict,
added to the registry; the pass rule, scores, the summary, the report columns and verify read verdicts
through this shape only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evaluator.scenarios import Scenario
from evaluator.trace import Trace

__all__ = ["DataType", "Metric", "MetricContext", "ScoreDefinition", "ScoreValue", "Verdict"]

DataType = Literal["BOOLEAN", "NUMERIC", "CATEGORICAL"]


@dataclass(frozen=True, kw_only=True)
class ScoreDefinition:
    """What a score name means: Langfuse shows it with this type, range (0-1 for NUMERIC) and
    description; CATEGORICAL scores list their categories."""

    name: str
    data_type: DataType
    description: str
    categories: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ScoreValue:
    """One score a verdict yields: a value of its definition's type (BOOLEAN as 1.0 / 0.0, CATEGORICAL
    as the category's name); `metadata` is added to the score's own (a judge's prompt, model, trace)."""

    name: str
    value: float | str
    comment: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class MetricContext:
    """Everything a check may look at: the scenario's expectations, the normalized trace, the answer."""

    scenario: Scenario
    trace: Trace
    answer: Any  # the final answer the system gave


class Verdict(Protocol):
    """A check's typed result."""

    @property
    def passed(self) -> bool | None:
        """Whether the scenario passes on this check; None for a check that informs but never decides."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The verdict's field in the result object (DESIGN.md, Result object)."""
        ...

    def scores(self) -> list[ScoreValue]:
        """The scores it yields, by the names of its metric's definitions."""
        ...

    def problems(self) -> list[str]:
        """What went wrong, as short phrases for the summary ([] when nothing did)."""
        ...


class Metric(Protocol):
    """A check: `evaluate` is pure and fast, never touches Langfuse, and returns None when the scenario
    does not ask for it."""

    @property
    def key(self) -> str:
        """The verdict's field in the result object."""
        ...

    @property
    def definitions(self) -> tuple[ScoreDefinition, ...]:
        """Every score its verdicts can yield."""
        ...

    @property
    def figures(self) -> Mapping[str, tuple[str, ...]]:
        """Numbers the history averages: a column name -> its path inside the verdict's JSON."""
        ...

    def evaluate(self, context: MetricContext) -> Verdict | None: ...
