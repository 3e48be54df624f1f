"""A dialogue's result (DESIGN.md, "Dialogues", Result object): its turns as they ran, each with the state
the target reported, its single-turn verdicts and its per-turn dialogue figures, and the dialogue's own
figures. `ScenarioResult.dialogue` holds it; `to_json` gives the `kind: dialogue` fields.

A turn's status: `error` (the target raised or timed out: the dialogue ends there), `not run` (a turn
after it), `passed` when its single-turn checks passed and no expected key it measured (intent, domain,
acts, JGA, action, policy compliance) failed, else `failed`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evaluator.metrics import dialogue as dm

if TYPE_CHECKING:
    from evaluator.results.model import ScenarioResult

__all__ = ["DECIDING_KEYS", "DialogueOutcome", "TurnOutcome", "TurnStatus", "turn_status"]

TurnStatus = Literal["passed", "failed", "error", "not run"]
DECIDING_KEYS = ("intent_accuracy", "domain_accuracy", "act_accuracy", "jga", "policy_compliant")
"""The per-turn figures that fail a turn when measured and 0 (the action is checked on its own)."""
_SINGLE_TURN_FIELDS = (
    "workflow",
    "handoffs",
    "trajectory",
    "answer",
    "quality",
    "correctness",
    "judge_status",
)


def turn_status(
    result: ScenarioResult, figures: dm.TurnFigures, *, action_matched: bool | None
) -> TurnStatus:
    """The turn's status from its single-turn result and its dialogue figures (module docstring)."""
    if result.status == "error":
        return "error"
    failed = [key for key in DECIDING_KEYS if figures.figure(key).value == 0.0]
    if result.status == "failed" or failed or action_matched is False:
        return "failed"
    return "passed"


@dataclass(frozen=True, kw_only=True)
class TurnOutcome:
    """One turn of a dialogue. `result` is its single-turn result (None: not run); `state` what was
    read of its state (None: not run or errored); `figures` its dialogue figures (None likewise)."""

    turn: int
    input: str
    expected: Mapping[str, Any]
    status: TurnStatus
    result: ScenarioResult | None = None
    state: Mapping[str, Any] | None = None
    figures: dm.TurnFigures | None = None

    def problems(self) -> list[str]:
        """What failed in this turn, as short phrases."""
        if self.result is None:
            return []
        found = self.result.problems()
        if self.figures is not None:
            found += [
                f"{key}: {self.figures.figure(key).details().get('reason') or 'mismatch'}"
                for key in (*DECIDING_KEYS, "system_correct")
                if self.figures.figure(key).value == 0.0
            ]
        return found

    def to_json(self) -> dict[str, Any]:
        single = self.result.to_json() if self.result is not None else {}
        return {
            "turn": self.turn,
            "trace_id": single.get("trace_id"),
            "input": self.input,
            "output": single.get("output"),
            "state": dict(self.state) if self.state is not None else None,
            "expected": dict(self.expected),
            "status": self.status,
            "metrics": self.figures.metrics() if self.figures is not None else dict.fromkeys(dm.TURN_KEYS),
            "details": self.figures.details() if self.figures is not None else {},
            **{key: single.get(key) for key in _SINGLE_TURN_FIELDS},
            **({"per_agent": single["per_agent"]} if single.get("per_agent") is not None else {}),
            "judge": single.get("judge"),  # how each judgement went: why `correctness` is null, say
            "error": single.get("error"),
        }


@dataclass(frozen=True, kw_only=True)
class DialogueOutcome:
    """A dialogue's turns (every turn of the scenario, in order) and its figures (None: no turn ran
    to the end)."""

    session_id: str
    turns: tuple[TurnOutcome, ...]
    figures: dm.DialogueFigures | None = None

    def metrics(self) -> dict[str, float | int | None]:
        if self.figures is None:
            return {}
        return self.figures.metrics()

    def failing_turns(self) -> list[TurnOutcome]:
        return [turn for turn in self.turns if turn.status in ("failed", "error")]

    def problems(self) -> list[str]:
        """What failed: each failing turn's problems (`turn N: ...`), then the goal's, if it failed."""
        found = [
            f"turn {turn.turn}: {problem}" for turn in self.failing_turns() for problem in turn.problems()
        ]
        completion = self.figures.task_completion if self.figures is not None else None
        if completion is not None and completion.value == 0.0:
            found.append(f"goal: {completion.reason}")
        return found

    def to_json(self) -> dict[str, Any]:
        """The result object's dialogue fields but `dialogue` (the dialogue metric's field: the
        figures by key, in the metric set's place); its details add the means of the turns' recall,
        precision and F1 (`means`)."""
        figures = self.figures
        return {
            "kind": "dialogue",
            "session_id": self.session_id,
            "dialogue_details": {**figures.details(), "means": figures.turn_detail_means} if figures else {},
            "turns": [turn.to_json() for turn in self.turns],
        }


ScoreType = Literal["BOOLEAN", "NUMERIC"]


def score_type(key: str) -> ScoreType:
    """A per-turn score's type: BOOLEAN for the yes/no keys, NUMERIC for the rates."""
    return "BOOLEAN" if key in dm.BOOLEAN_KEYS else "NUMERIC"


_TURN_SCORES = tuple((key, f"turn_{key}", score_type(key)) for key in dm.TURN_KEYS)
"""Each per-turn key with its score's name and type, spelled once, not for each turn's nine scores."""


def turn_scores(figures: dm.TurnFigures) -> Sequence[tuple[str, ScoreType, float, str]]:
    """(name, type, value, comment) of each `turn_<key>` a turn measured."""
    return [
        (name, data_type, value, str(figure.reason or ""))
        for key, name, data_type in _TURN_SCORES
        if (value := (figure := figures.figure(key)).value) is not None
    ]
