"""The per-turn dialogue metrics (seed dialogue-metrics-mas4cs.md, metrics 1-6, 8, 9; DESIGN.md,
"Dialogues"). Each compares a turn's expected state with the state the target reported, after the
normalisation of `_values`, and is not measured (value None) when either side lacks what it needs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from evaluator.metrics.dialogue._figures import (
    Check,
    Hallucination,
    JointGoal,
    PolicyCheck,
    SetMatch,
    SlotMatch,
    TurnFigures,
    flag,
)
from evaluator.metrics.dialogue._text import mentioned
from evaluator.metrics.dialogue._values import DialogueState, Policy, Slots, Turn, domain_of

__all__ = [
    "act_accuracy",
    "domain_accuracy",
    "entity_hallucination",
    "expected_domain",
    "intent_accuracy",
    "joint_goal_accuracy",
    "policy_compliance",
    "score_turn",
    "slot_accuracy",
    "slot_hallucination",
    "system_correct",
]

_GENERAL_ACT = "general-"


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _f1(recall: float | None, precision: float | None) -> float | None:
    if recall is None or precision is None:
        return None
    total = recall + precision
    return 2 * recall * precision / total if total else 0.0


def expected_domain(expected: DialogueState) -> str | None:
    """The expected domain: the one given, else the domain every expected intent names (`book_hotel`
    -> `hotel`); None when neither is given or the intents name several domains."""
    if expected.domain is not None:
        return expected.domain
    domains = {domain_of(intent) for intent in expected.intents or ()}
    return domains.pop() if len(domains) == 1 else None


def domain_accuracy(expected: DialogueState, predicted: DialogueState) -> Check:
    """Seed metric 1: 1 when the reported domain is the expected domain (`expected_domain`), case
    insensitive. Not measured without an expected domain or a reported one."""
    wanted = expected_domain(expected)
    if wanted is None:
        return Check(value=None, reason="the turn expects no domain")
    if predicted.domain is None:
        return Check(value=None, reason="the target did not report its domain")
    return Check(value=flag(predicted.domain == wanted), reason=f"{predicted.domain} for {wanted}")


def _set_match(expected: frozenset[str], predicted: frozenset[str]) -> SetMatch:
    hits = len(expected & predicted)
    recall, precision = _ratio(hits, len(expected)), _ratio(hits, len(predicted))
    return SetMatch(
        value=flag(expected == predicted), recall=recall, precision=precision, f1=_f1(recall, precision)
    )


def intent_accuracy(expected: DialogueState, predicted: DialogueState) -> SetMatch:
    """Seed metric 2: 1 when the reported intents are exactly the expected ones (as sets); recall and
    precision kept (a missed intent lowers recall, an extra one precision). Not measured without
    expected intents or reported ones."""
    if expected.intents is None:
        return SetMatch(value=None, reason="the turn expects no intent")
    if predicted.intents is None:
        return SetMatch(value=None, reason="the target did not report its intent")
    return _set_match(expected.intents, predicted.intents)


def _domain_acts(acts: Iterable[str]) -> frozenset[str]:
    return frozenset(act for act in acts if not act.startswith(_GENERAL_ACT))


def act_accuracy(expected: DialogueState, predicted: DialogueState) -> SetMatch:
    """Seed metric 3: 1 when the reported dialogue acts are exactly the expected ones (as sets), once
    general-* acts (greet, thank, bye, reqmore, welcome) are left out of both; recall, precision and F1
    kept. Not measured without expected or reported acts, nor when no domain act remains on either
    side; a domain act on one side only is a mismatch (0)."""
    if expected.acts is None:
        return SetMatch(value=None, reason="the turn expects no acts")
    if predicted.acts is None:
        return SetMatch(value=None, reason="the target did not report its acts")
    wanted, given = _domain_acts(expected.acts), _domain_acts(predicted.acts)
    if not wanted and not given:
        return SetMatch(value=None, reason="no domain act on either side (general acts only)")
    return _set_match(wanted, given)


def _pairs(slots: Slots) -> set[tuple[str, str, str]]:
    return {(domain, name, value) for domain, pairs in slots.items() for name, value in pairs.items()}


def _states(expected: DialogueState, predicted: DialogueState) -> tuple[Slots, Slots] | str:
    """Both belief states, or why the turn cannot compare them."""
    if expected.slots is None:
        return "the turn expects no slots"
    if predicted.slots is None:
        return "the target did not report its slots"
    return expected.slots, predicted.slots


def slot_accuracy(expected: DialogueState, predicted: DialogueState) -> SlotMatch:
    """Seed metric 4: correct expected slot-value pairs / expected pairs of the accumulated state (a
    recall: extra predicted pairs do not lower it); precision = correct / predicted pairs and F1 kept.
    Not measured without both states, nor when the turn expects no pair (0 / 0)."""
    states = _states(expected, predicted)
    if isinstance(states, str):
        return SlotMatch(value=None, reason=states)
    wanted, given = _pairs(states[0]), _pairs(states[1])
    correct = len(wanted & given)
    recall, precision = _ratio(correct, len(wanted)), _ratio(correct, len(given))
    reason = "" if wanted else "the turn expects no slot-value pair"
    return SlotMatch(
        value=recall,
        precision=precision,
        f1=_f1(recall, precision),
        correct=correct,
        expected=len(wanted),
        predicted=len(given),
        reason=reason,
    )


def joint_goal_accuracy(expected: DialogueState, predicted: DialogueState) -> JointGoal:
    """Seed metric 5: 1 when every domain's slots are identical in both states (a missing and an extra
    pair both fail it); per domain of either state, whether it matched. Two empty states match. Not
    measured without both states."""
    states = _states(expected, predicted)
    if isinstance(states, str):
        return JointGoal(value=None, per_domain={}, reason=states)
    wanted, given = states
    per_domain = {d: dict(wanted.get(d, {})) == dict(given.get(d, {})) for d in sorted({*wanted, *given})}
    return JointGoal(value=flag(all(per_domain.values())), per_domain=per_domain)


def slot_hallucination(expected: DialogueState, predicted: DialogueState) -> Hallucination:
    """Seed metric 6 as DESIGN.md words it: the reported pairs of the turn's reported domain that the
    expected state lacks (wrong domain, wrong slot name or wrong value) / the reported pairs of that
    domain. Only the reported domain is checked, so a correct carry-over in another domain is not
    penalised. Not measured without both states or a reported domain, nor when that domain has no
    reported pair (0 / 0)."""
    states = _states(expected, predicted)
    if isinstance(states, str):
        return Hallucination(value=None, reason=states)
    if predicted.domain is None:
        return Hallucination(value=None, reason="the target did not report its domain")
    domain = predicted.domain
    wanted = states[0].get(domain, {})
    given = states[1].get(domain, {})
    wrong = tuple(f"{domain}-{name}={value}" for name, value in given.items() if wanted.get(name) != value)
    reason = "" if given else f"no reported slot in {domain}"
    return Hallucination(
        value=_ratio(len(wrong), len(given)), hallucinated=wrong, checked=len(given), reason=reason
    )


def entity_hallucination(
    reply: str, tool_outputs: Collection[str] | None, entities: Collection[str]
) -> Hallucination:
    """DESIGN.md's entity hallucination (seed metric 9, example 3): of the catalogued entity names the
    reply mentions (whole words, case folded), those that no tool output of this turn mentions, over
    all the catalogued names it mentions. Not measured when the turn ran no tool (a name may come from
    an earlier turn's search), without a catalog, or when the reply names no catalogued entity."""
    if tool_outputs is None:
        return Hallucination(value=None, reason="the turn ran no tool")
    if not entities:
        return Hallucination(value=None, reason="no entity catalog")
    named = sorted(set(mentioned([reply], entities)))
    returned = set(mentioned(tool_outputs, named))
    invented = tuple(name for name in named if name not in returned)
    reason = "" if named else "the reply names no catalogued entity"
    return Hallucination(
        value=_ratio(len(invented), len(named)), hallucinated=invented, checked=len(named), reason=reason
    )


def _guard(action: str, domain: str | None, policy: Policy) -> str | None:
    """The policy entry guarding `action`: the action itself (`book_hotel`), or the action in the
    reported domain (`book` in `hotel` -> `book_hotel`); None when none guards it."""
    if action in policy:
        return action
    scoped = f"{action}_{domain}" if domain is not None else None
    return scoped if scoped in policy else None


def _guarded_per_domain(action: str, policy: Policy) -> bool:
    return any(key.startswith(f"{action}_") for key in policy)


def policy_compliance(predicted: DialogueState, policy: Policy) -> PolicyCheck:
    """Seed metric 8: a turn whose reported action is guarded by the policy (`book_hotel`, or `book`
    while the reported domain is hotel) while the reported state of the guarded domain lacks one of the
    required slots is a violation (0); any other action is compliant (1), so blocking and asking for
    the missing slot (`request`) is compliant. Not measured without a reported action, without a
    reported domain when the action is guarded per domain, or without a reported state when guarded."""
    action = predicted.action
    if action is None:
        return PolicyCheck(value=None, reason="the target did not report its action")
    key = _guard(action, predicted.domain, policy)
    if key is None and predicted.domain is None and _guarded_per_domain(action, policy):
        return PolicyCheck(
            value=None, reason=f"{action} is guarded per domain and the domain was not reported"
        )
    if key is None:
        return PolicyCheck(value=flag(True), reason=f"no policy guards {action}")
    if predicted.slots is None:
        return PolicyCheck(
            value=None, reason=f"{key} is guarded and the target did not report its slots", guarded_by=key
        )
    held = predicted.slots.get(domain_of(key), {})
    missing = tuple(slot for slot in policy[key] if slot not in held)
    reason = f"{key} without {', '.join(missing)}" if missing else f"{key} with every required slot"
    return PolicyCheck(value=flag(not missing), reason=reason, guarded_by=key, missing=missing)


def system_correct(
    expected: DialogueState, predicted: DialogueState, *, entities: Hallucination, policy: PolicyCheck
) -> Check:
    """Seed metric 9: 1 when the reported action is the expected one (when the turn expects one), no
    entity was hallucinated and the turn was policy compliant. A part that was not measured (no tool,
    no guarded action) does not decide; not measured when the turn expects an action the target did not
    report, or when no part was measured."""
    if expected.action is not None and predicted.action is None:
        return Check(value=None, reason="the target did not report its action")
    parts = (  # (what was checked, whether it was measured, its failure or ""; texts made only on failure)
        (
            "right action",
            expected.action is not None,
            f"action {predicted.action} instead of {expected.action}"
            if predicted.action != expected.action
            else "",
        ),
        (
            "no hallucination",
            entities.value is not None,
            f"hallucinated {', '.join(entities.hallucinated)}" if entities.value else "",
        ),
        ("compliant", policy.value is not None, policy.reason if policy.value == 0.0 else ""),
    )
    checked = [(part, failure) for part, measured, failure in parts if measured]
    if not checked:
        return Check(value=None, reason="no expected action, tool or reported action to judge")
    failures = [failure for _, failure in checked if failure]
    if failures:
        return Check(value=0.0, reason="; ".join(failures))
    return Check(value=1.0, reason=", ".join(part for part, _ in checked))  # only what was measured


def score_turn(turn: Turn, *, policy: Policy, entities: Collection[str] = ()) -> TurnFigures:
    """Every per-turn figure of one turn. `policy` and `entities` (the catalog's names) are the
    dialogue's; an empty catalog leaves entity hallucination not measured."""
    expected, predicted = turn.expected, turn.predicted
    invented = entity_hallucination(turn.reply, turn.tool_outputs, entities)
    compliance = policy_compliance(predicted, policy)
    return TurnFigures(
        domain_accuracy=domain_accuracy(expected, predicted),
        intent_accuracy=intent_accuracy(expected, predicted),
        act_accuracy=act_accuracy(expected, predicted),
        slot_accuracy=slot_accuracy(expected, predicted),
        jga=joint_goal_accuracy(expected, predicted),
        slot_hallucination_rate=slot_hallucination(expected, predicted),
        entity_hallucination_rate=invented,
        policy_compliant=compliance,
        system_correct=system_correct(expected, predicted, entities=invented, policy=compliance),
    )
