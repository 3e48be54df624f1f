"""The per-dialogue metrics (seed dialogue-metrics-mas4cs.md, metrics 7-10 and the dialogue step of
1-6; seed crag-llm-judge-evaluator.md for the conversation score; DESIGN.md, "Dialogues").

`turns` are the turns that ran, in order (a dialogue that stopped on an error passes the turns before
it). Every figure is None when the dialogue did not measure it, never 0.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from evaluator.metrics.dialogue._crag import apply_two_errors_rule, conversation_score
from evaluator.metrics.dialogue._figures import (
    DIALOGUE_KEYS,
    QUALITY_KEYS,
    TURN_KEYS,
    Check,
    TurnFigures,
    flag,
)
from evaluator.metrics.dialogue._text import mentioned
from evaluator.metrics.dialogue._turn import expected_domain, score_turn
from evaluator.metrics.dialogue._values import CragTurn, Goal, Policy, Turn, normalise_label

__all__ = [
    "DETAIL_PARTS",
    "TRANSFERABLE_SLOTS",
    "DialogueFigures",
    "MemoryTransfer",
    "Transfer",
    "detail_means",
    "mean_measured",
    "memory_transfer",
    "policy_violations",
    "response_quality",
    "score_dialogue",
    "system_correctness",
    "task_completion",
    "turn_means",
]

TRANSFERABLE_SLOTS = ("area", "pricerange")
"""The seed's default: search constraints carry over a change of domain; booking slots do not."""


def mean_measured(values: Sequence[float | None]) -> float | None:
    """The mean of the values that were measured; None when none was."""
    measured = [value for value in values if value is not None]
    return sum(measured) / len(measured) if measured else None


def turn_means(turns: Sequence[TurnFigures]) -> dict[str, float | None]:
    """Seed step 2 of metrics 1-6: per per-turn key, the mean over the turns that measured it."""
    return {key: mean_measured([turn.figure(key).value for turn in turns]) for key in TURN_KEYS}


DETAIL_PARTS: Mapping[str, tuple[str, ...]] = {
    "intent_accuracy": ("recall", "precision", "f1"),
    "act_accuracy": ("recall", "precision", "f1"),
    "slot_accuracy": ("precision", "f1"),
}
"""The per-turn details that seeds 2-4 also average (the slot accuracy is itself the recall)."""


def detail_means(turns: Sequence[TurnFigures]) -> dict[str, dict[str, float | None]]:
    """Per key of `DETAIL_PARTS`, each part's mean over the turns that measured that part."""
    return {
        key: {part: mean_measured([getattr(turn.figure(key), part) for turn in turns]) for part in parts}
        for key, parts in DETAIL_PARTS.items()
    }


@dataclass(frozen=True, kw_only=True)
class Transfer:
    """One memory-transfer opportunity: at `turn` the expected domain changed from `source` to
    `target`, whose expected state takes over `slot` = `value`; `carried` when the reported state of
    `target` holds it."""

    turn: int
    slot: str
    value: str
    source: str
    target: str
    carried: bool

    def to_json(self) -> dict[str, Any]:
        """Its fields by name, as `dataclasses.asdict` gives them, written out: `asdict` copies each value
        deeply (6 µs an opportunity), and a dialogue's details are written twice (stored, then the run's)."""
        return {
            "turn": self.turn,
            "slot": self.slot,
            "value": self.value,
            "source": self.source,
            "target": self.target,
            "carried": self.carried,
        }


@dataclass(frozen=True, kw_only=True)
class MemoryTransfer:
    """Memory transfer: carried / opportunities (None without any), and every opportunity."""

    value: float | None
    transfers: tuple[Transfer, ...] = ()
    reason: str = ""


def _opportunities(turns: Sequence[Turn], index: int, slots: Collection[str]) -> list[Transfer]:
    """The turn's transfer opportunities: the (slot, value) pairs its new expected domain takes over
    from the previous turn's expected domain, each with whether the reported state carried it."""
    before, now = expected_domain(turns[index - 1].expected), expected_domain(turns[index].expected)
    reported = turns[index].predicted.slots
    if before is None or now is None or before == now or reported is None:
        return []
    source = (turns[index - 1].expected.slots or {}).get(before, {})
    target = (turns[index].expected.slots or {}).get(now, {})
    carried = reported.get(now, {})
    return [
        Transfer(
            turn=index, slot=slot, value=value, source=before, target=now, carried=carried.get(slot) == value
        )
        for slot in slots
        if (value := source.get(slot)) is not None and target.get(slot) == value
    ]


def memory_transfer(turns: Sequence[Turn], *, slots: Collection[str] = TRANSFERABLE_SLOTS) -> MemoryTransfer:
    """Seed metric 7 as DESIGN.md words it: at each turn whose expected domain differs from the
    previous turn's, each transferable slot that the new domain's expected state takes over (same
    value) from the previous domain's expected state (at the previous turn) is an opportunity; it is
    carried when the target's reported state of the new domain holds that value. Value = carried /
    opportunities. A turn that reported no state counts no opportunity; not measured without any."""
    names = [normalise_label(slot) for slot in slots]
    transfers = tuple(t for index in range(1, len(turns)) for t in _opportunities(turns, index, names))
    if not transfers:
        return MemoryTransfer(value=None, reason="no change of domain takes a constraint over")
    return MemoryTransfer(value=sum(t.carried for t in transfers) / len(transfers), transfers=transfers)


def policy_violations(turns: Sequence[TurnFigures]) -> int | None:
    """Seed metric 8, step 2: the turns that violated the policy; None when no turn measured it."""
    checked = [turn.policy_compliant.value for turn in turns if turn.policy_compliant.value is not None]
    return sum(value == 0.0 for value in checked) if checked else None


def _unreported(what: str) -> tuple[list[str], list[str]]:
    return [], [f"the target never reported its {what}"]


def _domain_gaps(turns: Sequence[Turn], goal: Goal) -> tuple[list[str], list[str]]:
    domains = {t.predicted.domain for t in turns if t.predicted.domain is not None}
    if not domains:
        return _unreported("domain")
    return [f"{d} was never the reported domain" for d in goal.book if d not in domains], []


def _action_gaps(turns: Sequence[Turn]) -> tuple[list[str], list[str]]:
    actions = [t.predicted.action for t in turns if t.predicted.action is not None]
    if not actions:
        return _unreported("action")
    return ([] if any(action.startswith("book") for action in actions) else ["no booking action"]), []


def _slot_gaps(turns: Sequence[Turn], goal: Goal, policy: Policy) -> tuple[list[str], list[str]]:
    final = next((t.predicted.slots for t in reversed(turns) if t.predicted.slots is not None), None)
    if final is None:
        return _unreported("slots")
    lacking = {d: [s for s in policy.get(f"book_{d}", ()) if s not in final.get(d, {})] for d in goal.book}
    return [f"{d} booked without {', '.join(slots)}" for d, slots in lacking.items() if slots], []


def _booking_gaps(turns: Sequence[Turn], goal: Goal, policy: Policy) -> tuple[list[str], list[str]]:
    """(What fails a booking goal, what could not be checked): each of its three conditions is checked
    on its own, so a failure the target did report decides even when another key went unreported."""
    parts = (_domain_gaps(turns, goal), _action_gaps(turns), _slot_gaps(turns, goal, policy))
    return [f for failed, _ in parts for f in failed], [u for _, unknown in parts for u in unknown]


def task_completion(
    turns: Sequence[Turn], figures: Sequence[TurnFigures], *, goal: Goal | None, policy: Policy
) -> Check:
    """Seed metric 10 with DESIGN.md's gate: any policy violation -> 0 first. A `book` goal needs every
    goal domain to have been the reported domain at some turn, a reported action starting with "book",
    and the last reported state holding every slot the policy requires for `book_<domain>` (none when
    the policy has no entry). An `inform` goal needs every listed value mentioned by some reply (whole
    words, case and punctuation folded). Not measured without a goal or a turn, or (when nothing
    failed) when the target never reported a key a `book` goal needs (its domain, action or slots)."""
    if goal is None:
        return Check(value=None, reason="the dialogue has no goal")
    if not turns:
        return Check(value=None, reason="no turn ran")
    violations = policy_violations(figures)
    if violations:
        return Check(value=0.0, reason=f"policy gate: {violations} violation(s)")
    failures, unknown = _booking_gaps(turns, goal, policy) if goal.book else ([], [])
    given = mentioned([turn.reply for turn in turns], goal.inform)
    failures += [f"no reply gave {value!r}" for value in goal.inform if value not in given]
    if failures:
        return Check(value=0.0, reason="; ".join(failures))
    if unknown:
        return Check(value=None, reason="; ".join(unknown))
    return Check(value=flag(True), reason="goal completed")


def system_correctness(turns: Sequence[TurnFigures]) -> float | None:
    """Seed metric 9, dialogue step: correct turns / turns, over the turns that measured it."""
    return mean_measured([turn.system_correct.value for turn in turns])


def response_quality(turns: Sequence[Turn]) -> dict[str, float | None]:
    """Seed metric 11, dialogue step: per quality key, the mean of the judge's scores over the turns it
    scored (a turn the judge did not score, or that was not judged, is left out); None when none was."""
    scored = [turn.quality for turn in turns if turn.quality is not None]
    return {key: mean_measured([quality.get(key) for quality in scored]) for key in QUALITY_KEYS}


@dataclass(frozen=True, kw_only=True)
class DialogueFigures:
    """Every figure of one dialogue: its turns' figures, the means of the per-turn keys (`means`), the
    per-dialogue figures, and the CRAG verdicts after the two-errors rule (`crag_turns`)."""

    turns: tuple[TurnFigures, ...]
    means: Mapping[str, float | None]
    task_completion: Check
    memory_transfer: MemoryTransfer
    policy_violations: int | None
    system_correctness: float | None
    crag_turns: tuple[CragTurn, ...]
    multi_turn_conversation_score: float | None
    response_quality: Mapping[str, float | None] = field(default_factory=dict)  # by QUALITY_KEYS

    def metrics(self) -> dict[str, float | int | None]:
        """The dialogue's figures by key: the per-turn keys' means, then `DIALOGUE_KEYS`."""
        own: dict[str, float | int | None] = {
            "task_completion": self.task_completion.value,
            "memory_transfer": self.memory_transfer.value,
            "policy_violations": self.policy_violations,
            "system_correctness": self.system_correctness,
            "multi_turn_conversation_score": self.multi_turn_conversation_score,
            **{key: self.response_quality.get(key) for key in QUALITY_KEYS},
        }
        return {**self.means, **{key: own[key] for key in DIALOGUE_KEYS}}

    @cached_property
    def turn_detail_means(self) -> dict[str, dict[str, float | None]]:
        """`detail_means` of its turns, worked out once: the result object and the run's figures both
        read them (and a result object is written twice: stored, then in the run's output)."""
        return detail_means(self.turns)

    def details(self) -> dict[str, Any]:
        """What lies behind the dialogue figures, JSON-ready: why the task was (not) completed, each
        memory-transfer opportunity, and the CRAG verdicts after the two-errors rule."""
        return {
            "task_completion": {"reason": self.task_completion.reason},
            "memory_transfer": {
                "reason": self.memory_transfer.reason,
                "transfers": [transfer.to_json() for transfer in self.memory_transfer.transfers],
            },
            "crag": [turn.verdict for turn in self.crag_turns],
        }


def score_dialogue(
    turns: Sequence[Turn],
    *,
    policy: Policy,
    goal: Goal | None = None,
    entities: Collection[str] = (),
    transferable: Collection[str] = TRANSFERABLE_SLOTS,
) -> DialogueFigures:
    """Every figure of a dialogue from its turns (the turns that ran, in order)."""
    figures = tuple(score_turn(turn, policy=policy, entities=entities) for turn in turns)
    judged = [turn.correctness for turn in turns if turn.correctness is not None]
    return DialogueFigures(
        turns=figures,
        means=turn_means(figures),
        task_completion=task_completion(turns, figures, goal=goal, policy=policy),
        memory_transfer=memory_transfer(turns, slots=transferable),
        policy_violations=policy_violations(figures),
        system_correctness=system_correctness(figures),
        crag_turns=apply_two_errors_rule(judged),
        multi_turn_conversation_score=conversation_score(judged),
        response_quality=response_quality(turns),
    )
