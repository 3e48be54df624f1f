"""The run-level (dataset) dialogue figures: each metric by its own rule (seed dialogue-metrics-mas4cs.md,
step 3 of each metric; DESIGN.md, "Dialogues"), so two figures of one run may average differently:

    domain_accuracy, intent_accuracy, act_accuracy
        the mean of the dialogue means (each dialogue weighs the same, however long)
    slot_accuracy, jga, slot_hallucination_rate, entity_hallucination_rate
        the mean over every turn of the run that measured it (each turn weighs the same)
    policy_compliant, system_correct
        the mean over every turn that measured it (DESIGN.md names no rule: the per-turn default)
    policy_violation_rate = total violations / turns (DESIGN.md and seed 8: every turn that ran; None
        when no turn measured compliance);
        total_policy_violations beside it
    memory_transfer      the mean of the dialogue figures, over the dialogues with an opportunity
    task_completion      completed / dialogues whose goal was measured
    system_correctness   the mean of the dialogue figures (as the seed's evaluator does)
    multi_turn_conversation_score  the mean over the dialogues with a CRAG verdict
    response_quality, response_factual_correctness, response_completeness
        the mean of the dialogue means (seed metric 11, step 3), over the dialogues the quality judge
        scored a turn of
    dialogues, turns     how many dialogues, and turns that ran
    crag                 CRAG's scores dictionary over every judged turn (`crag_scores`)
    details              the means of the turns' recall, precision and F1 (intent, acts, slots), each
        by its figure's rule (intent and acts: of the dialogue means; slots: over every turn)

A figure no dialogue measured is None, never 0; an empty run has every figure None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.metrics.dialogue._crag import crag_scores
from evaluator.metrics.dialogue._dialogue import DETAIL_PARTS, DialogueFigures, detail_means, mean_measured
from evaluator.metrics.dialogue._figures import QUALITY_KEYS

__all__ = ["MEAN_OF_DIALOGUE_MEANS", "MEAN_OVER_TURNS", "RunFigures", "score_run"]

MEAN_OF_DIALOGUE_MEANS = ("domain_accuracy", "intent_accuracy", "act_accuracy")
MEAN_OVER_TURNS = (
    "slot_accuracy",
    "jga",
    "slot_hallucination_rate",
    "entity_hallucination_rate",
    "policy_compliant",
    "system_correct",
)


@dataclass(frozen=True, kw_only=True)
class RunFigures:
    """The run's figures by key (`RUN_KEYS`), and CRAG's scores dictionary (None: no turn judged)."""

    metrics: Mapping[str, float | int | None]
    crag: Mapping[str, float | int] | None
    details: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)  # see the module


def _over_turns(dialogues: Sequence[DialogueFigures], key: str) -> float | None:
    return mean_measured([turn.figure(key).value for d in dialogues for turn in d.turns])


def _violations(dialogues: Sequence[DialogueFigures]) -> tuple[float | None, int | None]:
    """(violations / turns, total violations): every turn is in the denominator, as DESIGN.md and
    the seed define the rate; not measured when no turn of the run measured compliance."""
    counted = [d.policy_violations for d in dialogues if d.policy_violations is not None]
    turns = sum(len(d.turns) for d in dialogues)
    if not counted or not turns:
        return None, None
    return sum(counted) / turns, sum(counted)


def score_run(dialogues: Sequence[DialogueFigures]) -> RunFigures:
    """Every run-level figure of the dialogues of a run."""
    figures: dict[str, float | int | None] = {}
    for key in MEAN_OF_DIALOGUE_MEANS:
        figures[key] = mean_measured([d.means[key] for d in dialogues])
    for key in MEAN_OVER_TURNS:
        figures[key] = _over_turns(dialogues, key)
    figures["task_completion"] = mean_measured([d.task_completion.value for d in dialogues])
    figures["memory_transfer"] = mean_measured([d.memory_transfer.value for d in dialogues])
    figures["policy_violation_rate"], figures["total_policy_violations"] = _violations(dialogues)
    figures["system_correctness"] = mean_measured([d.system_correctness for d in dialogues])
    figures["multi_turn_conversation_score"] = mean_measured(
        [d.multi_turn_conversation_score for d in dialogues]
    )
    for key in QUALITY_KEYS:
        figures[key] = mean_measured([d.response_quality.get(key) for d in dialogues])
    figures["dialogues"] = len(dialogues)
    figures["turns"] = sum(len(d.turns) for d in dialogues)
    return RunFigures(
        metrics=figures, crag=crag_scores([d.crag_turns for d in dialogues]), details=_details(dialogues)
    )


def _details(dialogues: Sequence[DialogueFigures]) -> dict[str, dict[str, float | None]]:
    """`detail_means` at the run's level, each key by its figure's rule."""
    by_dialogue = [d.turn_detail_means for d in dialogues]
    over_turns = detail_means([turn for d in dialogues for turn in d.turns])
    return {
        key: over_turns[key]
        if key in MEAN_OVER_TURNS
        else {part: mean_measured([means[key][part] for means in by_dialogue]) for part in parts}
        for key, parts in DETAIL_PARTS.items()
    }
