"""What the dialogue metrics read: a turn's state (expected, or as the target reported it), a turn as
evaluated, a dialogue's goal and policy, and the one normalisation every comparison goes through.

Normalisation (the seed names none; DESIGN.md's own example expects `bookday: saturday` for a user who
said "Saturday"): labels (intents, domains, acts, actions, slot names) and slot values are compared with
their case folded and their whitespace trimmed and collapsed, nothing else: `" Saturday "` is
`"saturday"`, but `"the acorn"` is not `"acorn"`. Three MultiWOZ conventions are read as they mean:
a slot whose value is empty, `none` or `not mentioned` is absent, not a pair (`dontcare` is a value);
a slot named with its domain's prefix (`hotel-area` in `hotel`, MultiWOZ 2.2's names) is that slot
(`area`); a value given as a list of one (MultiWOZ 2.2's `slot_values`) is that value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = [
    "CragTurn",
    "CragVerdict",
    "DialogueState",
    "Goal",
    "Policy",
    "Slots",
    "Turn",
    "domain_of",
    "normalise_label",
    "normalise_policy",
    "normalise_slots",
    "normalise_value",
]

Slots = Mapping[str, Mapping[str, str]]
"""A belief state: domain -> slot -> value, every part normalised."""

Policy = Mapping[str, tuple[str, ...]]
"""A guarded action (`book_hotel`) -> the slots its domain's state must hold before it."""

CragVerdict = Literal["correct", "miss", "hallucination"]


@lru_cache(maxsize=16_384)
def normalise_label(text: str) -> str:
    """Case folded, whitespace trimmed, inner runs of whitespace one space. Cached: a dialogue's turns
    carry the same names and values turn after turn (the state accumulates), in both their states."""
    return " ".join(text.split()).casefold()


ABSENT_VALUES = frozenset({"", "none", "not mentioned"})
"""Normalised values that mean "no value": the slot is absent from the state."""


def normalise_value(value: object) -> str:
    """A slot value as normalised text: None is "" (absent); a bool is "true" / "false"; an integral
    float is its integer (a target that reports 2.0 nights matches "2"); a list or tuple of one value
    is that value, an empty one is "" (absent); anything else its `str`."""
    if isinstance(value, str):  # most values are: straight to the label's normalisation
        return normalise_label(value)
    if value is None:
        return ""
    if isinstance(value, list | tuple) and len(value) <= 1:
        return normalise_value(value[0]) if value else ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return normalise_label(str(value))


def _slot_name(domain: str, name: str) -> str:
    """A slot's name without its domain's prefix (`hotel-area` in `hotel` is `area`)."""
    name = normalise_label(name)
    prefix = f"{domain}-"
    return name[len(prefix) :] if name.startswith(prefix) and len(name) > len(prefix) else name


def normalise_slots(raw: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, str]]:
    """A raw belief state normalised: names as labels (without their domain's prefix), values as
    values. A slot whose value means none (`ABSENT_VALUES`) is left out, and so is a domain left with
    no slot (an empty domain and an absent one are the same state). Two names that normalise alike keep
    the later value."""
    state: dict[str, dict[str, str]] = {}
    for raw_domain, slots in raw.items():
        domain = normalise_label(raw_domain)
        pairs = {_slot_name(domain, name): normalise_value(value) for name, value in slots.items()}
        kept = {name: value for name, value in pairs.items() if value not in ABSENT_VALUES}
        if kept:
            state.setdefault(domain, {}).update(kept)
    return state


def normalise_policy(raw: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """A raw policy (action -> required slots) with every name normalised, a slot's without the prefix
    of the action's domain (`book_hotel: [hotel-name]` requires `name`), as in a state."""
    policy: dict[str, tuple[str, ...]] = {}
    for raw_action, slots in raw.items():
        action = normalise_label(raw_action)
        policy[action] = tuple(_slot_name(domain_of(action), slot) for slot in slots)
    return policy


def domain_of(label: str) -> str:
    """The domain an intent or a guarded action names: its part after the last "_" (`book_hotel` ->
    `hotel`); a label without "_" is its own domain, as the seed's code does."""
    return label.rsplit("_", 1)[-1]


def _labels(values: str | Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    items = [values] if isinstance(values, str) else values
    return frozenset(normalise_label(v) for v in items)


def _label(value: str | None) -> str | None:
    return None if value is None else normalise_label(value)


@dataclass(frozen=True, kw_only=True)
class DialogueState:
    """A turn's state after the turn: what the scenario expects, or what the target reported. Every
    field None means "not given" (expected) or "not reported" (predicted); a reported empty set or
    empty state is a value. Build it with `DialogueState.of` to normalise raw values; the constructor
    takes values already normalised.

    `slots` is the state accumulated up to this turn (not the turn's new slots), per domain."""

    intents: frozenset[str] | None = None
    domain: str | None = None
    acts: frozenset[str] | None = None
    slots: Slots | None = None
    action: str | None = None

    @classmethod
    def of(
        cls,
        *,
        intent: str | Iterable[str] | None = None,
        domain: str | None = None,
        acts: str | Iterable[str] | None = None,
        slots: Mapping[str, Mapping[str, object]] | None = None,
        action: str | None = None,
    ) -> DialogueState:
        """The state of raw values, normalised; `intent` is one intent or several (a set)."""
        return cls(
            intents=_labels(intent),
            domain=_label(domain),
            acts=_labels(acts),
            slots=None if slots is None else normalise_slots(slots),
            action=_label(action),
        )


@dataclass(frozen=True, kw_only=True)
class CragTurn:
    """A turn's CRAG correctness verdict (seed crag-llm-judge-evaluator.md) and whether it was an exact
    match; only a `correct` verdict can be one."""

    verdict: CragVerdict
    exact_match: bool = False


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One evaluated turn: its expected and reported state, the reply the target gave, what its tools
    returned (None: the turn ran no tool; each output as text), its CRAG verdict (None: the turn
    was not judged, e.g. it has no ground truth), and the quality judge's scores of its reply by
    dialogue key (`QUALITY_KEYS`; None: not scored)."""

    expected: DialogueState
    predicted: DialogueState
    reply: str = ""
    tool_outputs: tuple[str, ...] | None = None
    correctness: CragTurn | None = None
    quality: Mapping[str, float] | None = None


@dataclass(frozen=True, kw_only=True)
class Goal:
    """What the customer came for: `book`, the domains they book in; `inform`, the values a reply must
    give them (a phone number, an address). Both may be given; both must then be met. Names are
    normalised by `Goal.of`; the constructor takes them normalised."""

    book: tuple[str, ...] = ()
    inform: tuple[str, ...] = ()

    @classmethod
    def of(cls, *, book: Iterable[str] = (), inform: Iterable[str] = ()) -> Goal:
        return cls(book=tuple(normalise_label(d) for d in book), inform=tuple(inform))
