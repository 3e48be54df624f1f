"""The dialogue metrics in the metric family's shape (metrics/base.py): `DialogueMetric`, a session
metric: the dialogue's field `dialogue` of the result object, its `dialogue_<key>` session scores, its
run figures and run summary; it also declares the `turn_<key>` scores, which go on each turn's trace
(one metric, so that single-turn result objects get one `dialogue: null` field, not two).

The figures are computed by the dialogue runner (run/dialogue.py), which knows the dialogue's policy,
goal and entity catalog: a single trace's `evaluate` has nothing to say, so it is not implemented. The run's
dataset-level dictionary (`run_summary`, the run's `metrics.dialogue`) follows each metric's own rule
(`score_run`), and so do the run figures that reports and `compare` chart and gate: each is a mean of the
dialogues' figures (the unit `compare` pairs), and for the figures whose rule is the mean over every
measured turn (`MEAN_OVER_TURNS`) each dialogue weighs the turns that measured it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import (
    Direction,
    Figure,
    Gate,
    MetricBase,
    ScoreDefinition,
    ScoreValue,
    Verdict,
    at,
    number,
    number_at,
)
from evaluator.metrics.dialogue._dialogue import DialogueFigures
from evaluator.metrics.dialogue._figures import BOOLEAN_KEYS, DIALOGUE_KEYS, TURN_KEYS
from evaluator.metrics.dialogue._run import MEAN_OVER_TURNS, score_run

__all__ = ["HOW_TO_REPORT", "DialogueMetric", "DialogueVerdict"]

HOW_TO_REPORT = (
    "put them in the metadata of an observation of the turn's trace (keys intent, domain, acts, slots, "
    "action; renamed by [targets.X] state_keys), or return evaluator.Reply(output, state={...}); "
    "README, Dialogues"
)
OUTCOME_SCORE = "dialogue_pass"


def _number(value: Any) -> float | None:
    """A score's value as a number (a BOOLEAN score may come back as true / false)."""
    return float(value) if isinstance(value, int | float) else None


# The figures whose range is not 0-1: (how their description says it, their score config's bounds).
_RANGES: dict[str, tuple[str, tuple[float | None, float | None]]] = {
    "policy_violations": ("a count", (0.0, None)),
    "multi_turn_conversation_score": ("-1..1", (-1.0, 1.0)),
}


def _definition(name: str, key: str, level: str) -> ScoreDefinition:
    boolean = key in BOOLEAN_KEYS and (level == "turn" or key == "task_completion")
    what, bounds = _RANGES.get(key, ("0-1", (0.0, 1.0)))
    return ScoreDefinition(
        name=name,
        data_type="BOOLEAN" if boolean else "NUMERIC",
        description=f"{level} figure {key} ({'1/0' if boolean else what}; README, Dialogues)",
        bounds=bounds,
    )


@dataclass(frozen=True, kw_only=True)
class DialogueVerdict:
    """A dialogue's figures (`figures`), and the state keys its target never reported in any turn."""

    figures: DialogueFigures
    unreported: tuple[str, ...] = ()
    passed_all: bool | None = None  # the dialogue's status was `passed` (results.dialogue decides it)
    error: str | None = None  # why the dialogue ended an error (a turn's error, or turns left unrun)

    @property
    def passed(self) -> bool | None:
        """Informs: the dialogue's status is decided by its turns and its goal (results.dialogue)."""
        return None

    def to_json(self) -> dict[str, Any]:
        return dict(self.figures.metrics())

    def scores(self) -> list[ScoreValue]:
        """`dialogue_pass` (whether the dialogue passed: 0 with the error as its comment for a dialogue
        that ended an error, as a scenario's `workflow_pass`, so dashboards do not skip it), then
        `dialogue_<key>` for every figure the dialogue measured (the means of the per-turn keys and the
        per-dialogue keys)."""
        found = []
        if self.passed_all is not None:
            comment = f"error: {self.error}" if self.error else None
            found.append(
                ScoreValue(name=OUTCOME_SCORE, value=1.0 if self.passed_all else 0.0, comment=comment)
            )
        for key, value in self.figures.metrics().items():
            if value is None:
                continue
            comment = self.figures.task_completion.reason if key == "task_completion" else None
            found.append(ScoreValue(name=f"dialogue_{key}", value=float(value), comment=comment))
        return found

    def problems(self) -> list[str]:
        return []


def _turns_counted(counts: Callable[[Mapping[str, Any]], bool]) -> Callable[[Mapping[str, Any]], float]:
    """A dialogue's weight in a figure over its turns: its turns `counts` takes (1 for a result that
    keeps no turns, or when it takes none)."""

    def weight(document: Mapping[str, Any]) -> float:
        turns = document.get("turns")
        if not isinstance(turns, list):
            return 1.0
        return float(sum(isinstance(turn, Mapping) and counts(turn) for turn in turns)) or 1.0

    return weight


def _turns_measuring(key: str) -> Callable[[Mapping[str, Any]], float]:
    """The weight of a figure that is a mean over turns: the dialogue's turns that measured `key`."""
    return _turns_counted(lambda turn: number(at(turn, ("metrics", key))) is not None)


_turns_ran = _turns_counted(lambda turn: turn.get("status") != "not run")


def _violations_per_turn(document: Mapping[str, Any]) -> float | None:
    """A dialogue's policy violations over its turns that ran (None when it measured no compliance):
    weighed by those turns, the run's figure is violations / turns (`score_run`'s rule, where every
    dialogue measured compliance)."""
    violations = number_at("dialogue", "policy_violations")(document)
    return None if violations is None else violations / _turns_ran(document)


def _figure(
    key: str,
    label: str,
    *,
    gated: bool,
    threshold: float = 5.0,
    column: str | None = None,
    direction: Direction = "down",
    rate: bool = True,
    value: Callable[[Mapping[str, Any]], float | None] | None = None,
    weight: Callable[[Mapping[str, Any]], float] | None = None,
) -> Figure:
    """A dialogue figure; `column` (the headline ones): its column in the reports' history tables (the
    terminal's dialogue table, the HTML report's tables) and a trend chart in the HTML report.
    `direction`: the way it gets worse (`up` for the rates of what should not happen). `value` and
    `weight`: the dialogue's `key` figure and, for a mean over turns (`MEAN_OVER_TURNS`), the turns that
    measured it, unless given."""
    if weight is None and key in MEAN_OVER_TURNS:
        weight = _turns_measuring(key)
    return Figure(
        name=f"dialogue_{key}",
        value=value or number_at("dialogue", key),
        weight=weight,
        level="session",
        rate=rate,
        gate=Gate(label=f"dialogue {label}", direction=direction, threshold=threshold) if gated else None,
        label=column,
        chart=f"Dialogue {label}" if column else None,
    )


class DialogueMetric(MetricBase):
    """Per dialogue: the session scores and the result's `dialogue` field; per run: `score_run`."""

    key = "dialogue"
    level = "session"
    definitions = (
        ScoreDefinition(
            name=OUTCOME_SCORE,
            data_type="BOOLEAN",
            description="the dialogue passed (every turn, and its goal)",
        ),
        *(_definition(f"turn_{key}", key, "turn") for key in TURN_KEYS),
        *(_definition(f"dialogue_{key}", key, "dialogue") for key in (*TURN_KEYS, *DIALOGUE_KEYS)),
    )
    figures = (
        _figure("task_completion", "task completion", gated=True, column="task"),
        _figure("system_correctness", "system correctness", gated=True, column="sys ok"),
        _figure("jga", "joint goal accuracy", gated=True, column="JGA"),
        _figure("slot_accuracy", "slot accuracy", gated=True, column="slots"),
        _figure("intent_accuracy", "intent accuracy", gated=True),
        _figure("domain_accuracy", "domain accuracy", gated=True),
        _figure("policy_compliant", "policy compliance", gated=True, column="policy"),
        _figure("act_accuracy", "act accuracy", gated=True),
        _figure("slot_hallucination_rate", "slot hallucination rate", gated=True, direction="up"),
        _figure("entity_hallucination_rate", "entity hallucination rate", gated=True, direction="up"),
        # a rate of the dialogue's count, not a field of its own: violations / turns that ran
        _figure(
            "policy_violation_rate",
            "policy violation rate",
            gated=True,
            direction="up",
            value=_violations_per_turn,
            weight=_turns_ran,
        ),
        _figure("memory_transfer", "memory transfer", gated=False),
        # CRAG's mean(correct) - mean(hallucination), -1..1: compared in score units, not points
        _figure("multi_turn_conversation_score", "multi-turn conversation score", gated=False, rate=False),
        # the LLM judge's scores: 10 points, as `quality_drop` gates a single-turn answer's (0.1)
        _figure("response_quality", "response quality", gated=True, threshold=10.0),
        _figure("response_factual_correctness", "response factual correctness", gated=False),
        _figure("response_completeness", "response completeness", gated=False),
    )

    def passed_in(self, field: Mapping[str, Any]) -> bool | None:
        """Rebuilt from scores, the field has `pass` (from `dialogue_pass`)."""
        passed = field.get("pass")
        return passed if isinstance(passed, bool) else None

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        """The `dialogue` field from the session's `dialogue_<key>` scores (a key without a score: not
        measured), and `pass` from `dialogue_pass` (not from the 0 a dialogue that ended an error gets:
        its status says it, from its turns)."""
        found: dict[str, Any] = {
            key: _number(scores[f"dialogue_{key}"].get("value"))
            for key in (*TURN_KEYS, *DIALOGUE_KEYS)
            if f"dialogue_{key}" in scores
        }
        if OUTCOME_SCORE in scores and not str(scores[OUTCOME_SCORE].get("comment") or "").startswith(
            "error:"
        ):
            found["pass"] = _number(scores[OUTCOME_SCORE].get("value")) == 1.0
        return found or None

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        """The run's dataset-level figures (`score_run`: each metric's own rule), CRAG's scores
        dictionary, and the state keys no dialogue's target ever reported. None without a dialogue."""
        dialogues = [v for v in verdicts if isinstance(v, DialogueVerdict)]
        if not dialogues:
            return None
        run = score_run([v.figures for v in dialogues])
        never = set.intersection(*(set(v.unreported) for v in dialogues))
        return {**run.metrics, "crag": run.crag, "details": run.details, "unreported": sorted(never)}

    def summary_line(self, summary: Mapping[str, Any]) -> str | None:
        """One line: how many dialogues and turns, the headline figures, and (once) the keys no target
        reported with how to report them."""
        parts = [f"{summary.get('dialogues')} dialogues, {summary.get('turns')} turns"]
        for key, label in (
            ("task_completion", "task completion"),
            ("jga", "JGA"),
            ("slot_accuracy", "slot accuracy"),
            ("policy_violation_rate", "policy violations per turn"),
            ("system_correctness", "system correctness"),
        ):
            value = summary.get(key)
            parts.append(f"{label} {'not measured' if value is None else f'{value:.0%}'}")
        quality = summary.get("response_quality")
        if quality is not None:  # the LLM judge's (seed metric 11): a 0-1 score, not a rate
            parts.append(f"response quality {quality:.2f}")
        line = "dialogues: " + ", ".join(parts)
        never = summary.get("unreported") or []
        if never:
            line += f". Never reported: {', '.join(never)}: {HOW_TO_REPORT}"
        return line
