"""The dialogue metrics (evaluator/metrics/dialogue/), section by section in the package's module order:
_values (normalisation), _turn, _dialogue, _crag, _run.

Every seed example is quoted in its test's docstring with the arithmetic worked out by hand. Seeds:
seeds/dialogue-metrics-mas4cs.md ("MAS4CS", metrics 1-10) and seeds/crag-llm-judge-evaluator.md ("CRAG").
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from evaluator.config import CompareConfig
from evaluator.metrics.dialogue import (
    CRAG_SCORE_LABELS,
    DIALOGUE_KEYS,
    QUALITY_KEYS,
    RUN_KEYS,
    TURN_KEYS,
    CragTurn,
    CragVerdict,
    DialogueFigures,
    DialogueState,
    Goal,
    Hallucination,
    PolicyCheck,
    Turn,
    act_accuracy,
    apply_two_errors_rule,
    conversation_score,
    crag_scores,
    detail_means,
    domain_accuracy,
    entity_hallucination,
    intent_accuracy,
    joint_goal_accuracy,
    memory_transfer,
    normalise_policy,
    normalise_slots,
    policy_compliance,
    score_dialogue,
    score_run,
    score_turn,
    slot_accuracy,
    slot_hallucination,
    system_correct,
)
from evaluator.reports import RunRecord, compare_markdown, compare_runs
from evaluator.results import default_metrics, summarize, with_dialogues

S = DialogueState.of
# MAS4CS metric 10: "Hotel booking requires: name, bookday, bookpeople, bookstay; Restaurant booking
# requires: name, bookday, bookpeople, booktime".
POLICY = normalise_policy(
    {
        "book_hotel": ["name", "bookday", "bookpeople", "bookstay"],
        "book_restaurant": ["name", "bookday", "bookpeople", "booktime"],
    }
)
CATALOG = ("The Golden Dragon", "Curry Garden", "Acorn Guest House", "University Arms", "Ely")
NOT_JUDGED = Hallucination(value=None)
UNGUARDED = PolicyCheck(value=None, reason="")


def turn(
    expected: DialogueState | None = None,
    predicted: DialogueState | None = None,
    *,
    reply: str = "",
    tools: tuple[str, ...] | None = None,
    verdict: CragVerdict | None = None,
) -> Turn:
    return Turn(
        expected=expected or S(),
        predicted=predicted or S(),
        reply=reply,
        tool_outputs=tools,
        correctness=None if verdict is None else CragTurn(verdict=verdict),
    )


def dialogue(*turns: Turn, goal: Goal | None = None) -> DialogueFigures:
    return score_dialogue(turns, policy=POLICY, goal=goal, entities=CATALOG)


# --- _values: normalisation -----------------------------------------------------------------------


def test_slot_values_are_compared_with_case_and_whitespace_folded() -> None:
    """DESIGN.md's example expects `bookday: saturday` for a user who says "Saturday"; a number
    reported as a number is its text; an empty value is absent, and so is a domain left empty."""
    raw: Mapping[str, Mapping[str, object]] = {
        " Hotel ": {"BookDay": "  Saturday ", "bookpeople": 2, "bookstay": 2.0, "parking": "  "},
        "taxi": {"leaveat": None},
    }
    assert normalise_slots(raw) == {"hotel": {"bookday": "saturday", "bookpeople": "2", "bookstay": "2"}}


def test_normalisation_changes_nothing_but_case_and_whitespace() -> None:
    assert normalise_slots({"hotel": {"name": "the  Acorn"}}) == {"hotel": {"name": "the acorn"}}
    expected, predicted = S(slots={"hotel": {"name": "acorn"}}), S(slots={"hotel": {"name": "The Acorn"}})
    assert slot_accuracy(expected, predicted).value == 0.0


def test_multiwoz_conventions_are_read_as_they_mean() -> None:
    """MultiWOZ states mark an unfilled slot `none` or `not mentioned` (absent, as an empty value is;
    `dontcare` is a value), and MultiWOZ 2.2 names a slot with its domain's prefix and gives its value
    as a list. Worked by hand: expected hotel {area: centre}; reported area (prefixed, a list of one),
    parking none, stars not mentioned, internet dontcare: 2 reported pairs, 1 of them expected."""
    reported = {
        "hotel": {
            "hotel-area": ["Centre"],
            "parking": "none",
            "stars": "Not Mentioned",
            "internet": "dontcare",
        }
    }
    assert normalise_slots(reported) == {"hotel": {"area": "centre", "internet": "dontcare"}}
    expected, predicted = S(slots={"hotel": {"area": "centre"}}), S(slots=reported, domain="hotel")
    match = slot_accuracy(expected, predicted)
    assert (match.value, match.precision, match.predicted) == (1.0, 0.5, 2)
    assert joint_goal_accuracy(expected, predicted).value == 0.0  # dontcare is a pair the turn lacks
    assert slot_hallucination(expected, predicted).hallucinated == ("hotel-internet=dontcare",)
    del reported["hotel"]["internet"]
    assert joint_goal_accuracy(expected, S(slots=reported)).value == 1.0
    # only the slot's own domain's prefix is taken off, and an empty list is no value
    assert normalise_slots({"hotel": {"restaurant-area": "north", "type": []}}) == {
        "hotel": {"restaurant-area": "north"}
    }


# --- _turn: domain accuracy (MAS4CS metric 1) -------------------------------------------------------


def test_domain_accuracy_seed_example() -> None:
    """MAS4CS 1: "predicted domain: `hotel`; ground truth active intent: `find_restaurant` (restaurant
    domain); mismatch -> incorrect (0)". The expected domain is the intent's part after its last "_"."""
    figure = domain_accuracy(S(intent="find_restaurant"), S(domain="hotel"))
    assert figure.value == 0.0
    assert domain_accuracy(S(intent="find_restaurant"), S(domain="Restaurant")).value == 1.0


def test_a_given_domain_wins_over_the_intents() -> None:
    assert domain_accuracy(S(intent="find_restaurant", domain="hotel"), S(domain="hotel")).value == 1.0


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [
        (S(), S(domain="hotel")),  # nothing expected
        (S(intent="find_hotel"), S(intent="find_hotel")),  # no domain reported
        (S(intent=["find_hotel", "find_restaurant"]), S(domain="hotel")),  # intents of two domains
    ],
)
def test_domain_accuracy_not_measured(expected: DialogueState, predicted: DialogueState) -> None:
    assert domain_accuracy(expected, predicted).value is None


# --- _turn: intent accuracy (MAS4CS metric 2) ------------------------------------------------------


def test_intent_accuracy_seed_example() -> None:
    """MAS4CS 2: "predicted find_restaurant, ground truth find_restaurant: match -> correct (1). If
    predicted find_hotel -> incorrect (0)"."""
    assert intent_accuracy(S(intent="find_restaurant"), S(intent="find_restaurant")).value == 1.0
    assert intent_accuracy(S(intent="find_restaurant"), S(intent="find_hotel")).value == 0.0


def test_intent_recall_and_precision_seed_examples() -> None:
    """MAS4CS 2: "Missing prediction (predicted: find_hotel, truth: [find_hotel, book_hotel]): Recall
    drops (0.5), precision stays perfect (1.0)"; "Extra prediction (predicted: [find_hotel,
    book_hotel], truth: find_hotel): Precision drops (0.5), recall stays perfect (1.0)". Both are
    exact-set mismatches: accuracy 0. Missing: 1 hit / 2 expected = 0.5, 1 hit / 1 predicted = 1.0."""
    missing = intent_accuracy(S(intent=["find_hotel", "book_hotel"]), S(intent="find_hotel"))
    assert (missing.value, missing.recall, missing.precision) == (0.0, 0.5, 1.0)
    extra = intent_accuracy(S(intent="find_hotel"), S(intent=["find_hotel", "book_hotel"]))
    assert (extra.value, extra.recall, extra.precision) == (0.0, 1.0, 0.5)


def test_intent_accuracy_not_measured() -> None:
    assert intent_accuracy(S(intent="find_hotel"), S(domain="hotel")).value is None
    assert intent_accuracy(S(domain="hotel"), S(intent="find_hotel")).value is None


# --- _turn: act-type accuracy (MAS4CS metric 3) ----------------------------------------------------


def test_act_accuracy_seed_example() -> None:
    """MAS4CS 3: "predicted [Restaurant-Inform], ground truth [Restaurant-Inform]: match -> correct (1).
    If predicted [Restaurant-Request] -> incorrect (0)"."""
    assert act_accuracy(S(acts=["Restaurant-Inform"]), S(acts=["Restaurant-Inform"])).value == 1.0
    assert act_accuracy(S(acts=["Restaurant-Inform"]), S(acts=["Restaurant-Request"])).value == 0.0


def test_act_recall_precision_f1_seed_examples() -> None:
    """MAS4CS 3: "Missing act (predicted: [Restaurant-Inform], truth: [Restaurant-Inform,
    Restaurant-Request]): Recall = 0.5 (got 1/2), Precision = 1.0"; F1 = 2 x 0.5 x 1 / 1.5 = 2/3.
    "Extra act (predicted: [Hotel-Inform, Hotel-Request, Hotel-Book], truth: [Hotel-Inform,
    Hotel-Request]): Recall = 1.0, Precision = 0.67 (2/3 correct)"; F1 = 2 x 1 x 2/3 / (5/3) = 0.8.
    Accuracy is 0 for both: "accuracy=1.0 only when predicted and GT sets are identical"."""
    missing = act_accuracy(S(acts=["Restaurant-Inform", "Restaurant-Request"]), S(acts=["Restaurant-Inform"]))
    assert (missing.value, missing.recall, missing.precision) == (0.0, 0.5, 1.0)
    assert missing.f1 == pytest.approx(2 / 3)
    extra = act_accuracy(
        S(acts=["Hotel-Inform", "Hotel-Request"]), S(acts=["Hotel-Inform", "Hotel-Request", "Hotel-Book"])
    )
    assert (extra.value, extra.recall) == (0.0, 1.0)
    assert extra.precision == pytest.approx(2 / 3)
    assert extra.f1 == pytest.approx(0.8)


def test_general_acts_are_left_out() -> None:
    figure = act_accuracy(
        S(acts=["Hotel-Inform", "general-reqmore"]), S(acts=["hotel-inform", "general-bye"])
    )
    assert (figure.value, figure.recall, figure.precision) == (1.0, 1.0, 1.0)


def test_act_accuracy_with_no_domain_act() -> None:
    """Not measured when no domain act remains on either side; a domain act on one side only is a
    mismatch."""
    assert act_accuracy(S(acts=["general-thank"]), S(acts=["general-bye"])).value is None
    assert act_accuracy(S(acts=["general-thank"]), S(acts=[])).value is None
    one_sided = act_accuracy(S(acts=["general-thank"]), S(acts=["Hotel-Inform"]))
    assert (one_sided.value, one_sided.recall, one_sided.precision) == (0.0, None, 0.0)
    assert act_accuracy(S(acts=["Hotel-Inform"]), S()).value is None  # acts not reported


# --- _turn: slot accuracy and JGA (MAS4CS metrics 4, 5) ---------------------------------------------

RESTAURANT_TRUTH = S(slots={"restaurant": {"area": "centre", "pricerange": "expensive"}})


def test_slot_accuracy_seed_example() -> None:
    """MAS4CS 4: "predicted: restaurant-area = centre, restaurant-pricerange = expensive; ground truth:
    restaurant-area = centre, restaurant-pricerange = cheap; 1 correct out of 2 -> score = 0.5".
    Precision is also 1 / 2 predicted = 0.5, F1 = 0.5."""
    truth = S(slots={"restaurant": {"area": "centre", "pricerange": "cheap"}})
    predicted = S(slots={"restaurant": {"area": "centre", "pricerange": "expensive"}})
    figure = slot_accuracy(truth, predicted)
    assert (figure.value, figure.precision, figure.f1) == (0.5, 0.5, 0.5)
    assert (figure.correct, figure.expected, figure.predicted) == (1, 2, 2)


def test_slot_accuracy_is_a_recall_seed_examples() -> None:
    """MAS4CS 4: "Missing slots reduce accuracy: If truth has 3 slots, but we predict only 2 correct ones
    -> 2/3 = 0.67"; "Extra slots are ignored: If truth has 2 slots, and we predict those 2 plus 1
    hallucinated -> still 2/2 = 1.0". The extra pair shows in precision: 2 / 3, F1 = 2 x 1 x 2/3 / (5/3)
    = 0.8."""
    three = S(slots={"hotel": {"area": "north", "stars": "4", "parking": "yes"}})
    two = S(slots={"hotel": {"area": "north", "stars": "4"}})
    missing = slot_accuracy(three, two)
    assert missing.value == pytest.approx(2 / 3)
    assert missing.precision == 1.0
    extra = slot_accuracy(two, three)
    assert extra.value == 1.0
    assert extra.precision == pytest.approx(2 / 3)
    assert extra.f1 == pytest.approx(0.8)


def test_jga_seed_example() -> None:
    """MAS4CS 5: "predicted [restaurant-area, restaurant-pricerange] = [centre], [expensive]; ground truth
    the same -> correct (1). If instead predicted restaurant-pricerange = cheap -> incorrect (0)"."""
    assert joint_goal_accuracy(RESTAURANT_TRUTH, RESTAURANT_TRUTH).value == 1.0
    cheap = S(slots={"restaurant": {"area": "centre", "pricerange": "cheap"}})
    figure = joint_goal_accuracy(RESTAURANT_TRUTH, cheap)
    assert figure.value == 0.0
    assert figure.per_domain == {"restaurant": False}


def test_jga_fails_on_an_extra_pair_and_breaks_down_per_domain() -> None:
    """MAS4CS 5: "Both missing and extra predictions result in JGA = 0 for that turn"."""
    predicted = S(
        slots={"restaurant": {"area": "Centre", "pricerange": "expensive"}, "hotel": {"area": "centre"}}
    )
    figure = joint_goal_accuracy(RESTAURANT_TRUTH, predicted)
    assert figure.value == 0.0
    assert figure.per_domain == {"hotel": False, "restaurant": True}
    assert slot_accuracy(RESTAURANT_TRUTH, predicted).value == 1.0  # the extra pair is no recall loss


def test_an_empty_expected_state() -> None:
    """0 / 0 expected pairs: slot accuracy not measured; JGA compares two empty states (1) or an empty
    and a non-empty one (0)."""
    assert slot_accuracy(S(slots={}), S(slots={})).value is None
    assert joint_goal_accuracy(S(slots={}), S(slots={})).value == 1.0
    assert joint_goal_accuracy(S(slots={}), S(slots={"hotel": {"area": "north"}})).value == 0.0


def test_slots_not_reported_are_not_measured() -> None:
    assert slot_accuracy(RESTAURANT_TRUTH, S(domain="restaurant")).value is None
    assert joint_goal_accuracy(RESTAURANT_TRUTH, S(domain="restaurant")).value is None
    assert joint_goal_accuracy(S(intent="find_hotel"), RESTAURANT_TRUTH).value is None


# --- _turn: slot hallucination (MAS4CS metric 6) ---------------------------------------------------


def test_slot_hallucination_seed_example() -> None:
    """MAS4CS 6: "predicted slot: restaurant-area = north; span_info contains only south ->
    hallucination (1 hallucinated value)": 1 hallucinated / 1 predicted = 1.0."""
    figure = slot_hallucination(
        S(slots={"restaurant": {"area": "south"}}),
        S(domain="restaurant", slots={"restaurant": {"area": "north"}}),
    )
    assert figure.value == 1.0
    assert figure.hallucinated == ("restaurant-area=north",)


def test_slot_hallucination_seed_cases() -> None:
    """MAS4CS 6, "What Counts as Hallucination": Case 1 wrong domain ("User mentioned restaurant, system
    predicted hotel slots"), Case 2 wrong slot name ("Truth has area, system predicted parking"), Case 3
    wrong value ("Truth has area=centre, system predicted area=north"). Here the reported hotel state
    has 2 pairs, none in the expected state: 2 / 2 = 1.0; the restaurant state has the right area and a
    parking slot: 1 / 2 = 0.5; and a wrong value: 1 / 1."""
    truth = S(slots={"restaurant": {"area": "centre"}})
    case_1 = S(domain="hotel", slots={"hotel": {"area": "centre", "stars": "4"}})
    assert slot_hallucination(truth, case_1).value == 1.0
    case_2 = S(domain="restaurant", slots={"restaurant": {"area": "centre", "parking": "yes"}})
    assert slot_hallucination(truth, case_2).value == 0.5
    case_3 = S(domain="restaurant", slots={"restaurant": {"area": "north"}})
    assert slot_hallucination(truth, case_3).value == 1.0


def test_slot_hallucination_checks_the_reported_domain_only() -> None:
    """MAS4CS 6: "Hallucination is checked per active domain only ... This avoids penalizing correct
    cross-domain memory from previous turns". The wrong restaurant pair is not counted in a hotel turn:
    0 / 1 = 0.0."""
    truth = S(slots={"restaurant": {"area": "centre"}, "hotel": {"area": "centre"}})
    predicted = S(domain="hotel", slots={"restaurant": {"area": "north"}, "hotel": {"area": "centre"}})
    figure = slot_hallucination(truth, predicted)
    assert (figure.value, figure.checked) == (0.0, 1)


def test_slot_hallucination_not_measured() -> None:
    """No reported pair in the reported domain (0 / 0), no reported domain, no reported state."""
    truth = S(slots={"restaurant": {"area": "centre"}})
    assert slot_hallucination(truth, S(domain="hotel", slots={"restaurant": {"area": "x"}})).value is None
    assert slot_hallucination(truth, S(slots={"restaurant": {"area": "north"}})).value is None
    assert slot_hallucination(truth, S(domain="restaurant")).value is None


# --- _turn: entity hallucination (MAS4CS metric 9, example 3) --------------------------------------


def test_entity_hallucination_seed_example() -> None:
    """MAS4CS 9, example 3: "User: Find me an expensive restaurant in the center; System: I recommend
    The Golden Dragon, phone: 123-456-7890 ... Provides name/phone not in database; Hallucination
    detected: True". The turn's search returned Curry Garden only, so the catalogued name the reply
    gives came from no tool: 1 invented / 1 named = 1.0."""
    figure = entity_hallucination(
        "I recommend The Golden Dragon, phone: 123-456-7890",
        ['[{"name": "Curry Garden", "pricerange": "expensive", "area": "centre"}]'],
        CATALOG,
    )
    assert figure.value == 1.0
    assert figure.hallucinated == ("The Golden Dragon",)


def test_entity_hallucination_rate_over_the_names_the_reply_gives() -> None:
    """Two catalogued names in the reply, one returned by the turn's tool: 1 / 2 = 0.5. "Ely" is not in
    "likely" (whole words)."""
    figure = entity_hallucination(
        "Curry Garden or the golden dragon are likely fine.", ["Curry Garden (centre)"], CATALOG
    )
    assert (figure.value, figure.checked, figure.hallucinated) == (0.5, 2, ("The Golden Dragon",))


def test_a_name_split_across_two_tool_outputs_was_not_returned() -> None:
    """Tool outputs are searched one by one: "Curry" in one and "Garden" in the next return no "Curry
    Garden"."""
    figure = entity_hallucination("Try Curry Garden.", ["Curry", "Garden"], CATALOG)
    assert (figure.value, figure.hallucinated) == (1.0, ("Curry Garden",))
    assert entity_hallucination("Try Curry Garden.", ["Curry", "Curry Garden"], CATALOG).value == 0.0


@pytest.mark.parametrize(
    ("tools", "catalog", "reply"),
    [
        (None, CATALOG, "The Golden Dragon"),  # the turn ran no tool: skipped
        (("Curry Garden",), (), "The Golden Dragon"),  # no catalog
        (("Curry Garden",), CATALOG, "Which area would you like?"),  # no name given: 0 / 0
    ],
)
def test_entity_hallucination_not_measured(
    tools: tuple[str, ...] | None, catalog: tuple[str, ...], reply: str
) -> None:
    assert entity_hallucination(reply, tools, catalog).value is None


# --- _turn: policy compliance (MAS4CS metric 8) ----------------------------------------------------

ALL_HOTEL_SLOTS = {"hotel": {"name": "hilton", "bookday": "saturday", "bookpeople": "2", "bookstay": "2"}}
NO_STAY = {"hotel": {"name": "hilton", "bookday": "saturday", "bookpeople": "2"}}


def test_policy_compliance_seed_example() -> None:
    """MAS4CS 8: "predicted action: book_hotel (normalized from intent); predicted state missing
    bookstay -> policy violation (0 = non-compliant)"."""
    figure = policy_compliance(S(action="book_hotel", slots=NO_STAY), POLICY)
    assert figure.value == 0.0
    assert (figure.guarded_by, figure.missing) == ("book_hotel", ("bookstay",))
    assert figure.reason == "book_hotel without bookstay"


def test_a_policy_may_name_its_slots_with_the_domain_prefix_as_the_seed_does() -> None:
    """MAS4CS 8: "the state must include required slots (e.g., `hotel-bookstay`, `hotel-bookday`,
    `hotel-bookpeople`, `hotel-name`)": those are the hotel state's bookstay, bookday, ... slots."""
    prefixed = normalise_policy(
        {"book_hotel": ["hotel-bookstay", "hotel-bookday", "hotel-bookpeople", "hotel-name"]}
    )
    assert prefixed == {"book_hotel": ("bookstay", "bookday", "bookpeople", "name")}
    assert policy_compliance(S(action="book_hotel", slots=NO_STAY), prefixed).missing == ("bookstay",)


def test_a_plain_book_action_is_guarded_in_the_reported_domain() -> None:
    assert policy_compliance(S(action="book", domain="hotel", slots=NO_STAY), POLICY).value == 0.0
    assert policy_compliance(S(action="book", domain="hotel", slots=ALL_HOTEL_SLOTS), POLICY).value == 1.0


def test_blocking_and_asking_is_compliant() -> None:
    """DESIGN.md: "blocking and asking is compliant": the state lacks bookstay, the system requests it."""
    figure = policy_compliance(S(action="request", domain="hotel", slots=NO_STAY), POLICY)
    assert (figure.value, figure.guarded_by) == (1.0, None)


@pytest.mark.parametrize(
    "predicted",
    [
        S(domain="hotel", slots=NO_STAY),  # no action reported
        S(action="book", slots=NO_STAY),  # guarded per domain, no domain reported
        S(action="book_hotel", domain="hotel"),  # guarded, no state reported
    ],
)
def test_policy_compliance_not_measured(predicted: DialogueState) -> None:
    assert policy_compliance(predicted, POLICY).value is None


# --- _turn: system correctness (MAS4CS metric 9) ---------------------------------------------------


def _correct(
    expected: DialogueState,
    predicted: DialogueState,
    *,
    reply: str = "",
    tools: tuple[str, ...] | None = None,
) -> float | None:
    return score_turn(
        turn(expected, predicted, reply=reply, tools=tools), policy=POLICY, entities=CATALOG
    ).system_correct.value


def test_system_correctness_seed_examples() -> None:
    """MAS4CS 9, "SystemCorrect_turn = 1 if (expected_action == actual_action AND no_hallucination AND
    policy_compliant)":
    1. "I want to book a hotel for 2 people" -> expected request, actual request -> TRUE.
    2. "Book the hotel, but I don't know how many nights" -> "Block booking, request required slot",
       actual request -> TRUE (blocking and asking is compliant: 1 AND 1 AND 1).
    3. "I recommend The Golden Dragon" with no database hit -> hallucination -> FALSE.
    4. "I want to book the Hilton for 2 people, Saturday, 2 nights" -> expected book, actual search
       -> FALSE."""
    two_people = {"hotel": {"bookpeople": "2"}}
    assert _correct(S(action="request"), S(action="request", domain="hotel", slots=two_people)) == 1.0
    assert _correct(S(action="request"), S(action="request", domain="hotel", slots=NO_STAY)) == 1.0
    dragon = _correct(
        S(action="inform"),
        S(action="inform", domain="restaurant"),
        reply="I recommend The Golden Dragon, phone: 123-456-7890",
        tools=("Curry Garden",),
    )
    assert dragon == 0.0
    assert _correct(S(action="book"), S(action="search", domain="hotel", slots=ALL_HOTEL_SLOTS)) == 0.0


def test_a_correct_turn_s_reason_names_only_what_was_measured() -> None:
    """A guarded action reported without slots leaves compliance not measured, and no tool ran: the
    turn is correct on its action alone, and says so (not "no hallucination, compliant")."""
    turn = Turn(expected=S(action="book_hotel"), predicted=S(action="book_hotel", domain="hotel"))
    figure = score_turn(turn, policy=POLICY).system_correct
    assert (figure.value, figure.reason) == (1.0, "right action")


def test_a_violation_makes_the_turn_incorrect_even_with_the_expected_action() -> None:
    figures = score_turn(turn(S(action="book_hotel"), S(action="book_hotel", slots=NO_STAY)), policy=POLICY)
    assert figures.system_correct.value == 0.0
    assert figures.system_correct.reason == "book_hotel without bookstay"


def test_system_correctness_not_measured() -> None:
    """An expected action the target did not report; nothing to judge at all."""
    assert _correct(S(action="request"), S(domain="hotel")) is None
    assert _correct(S(intent="find_hotel"), S(domain="hotel")) is None
    assert system_correct(S(), S(), entities=NOT_JUDGED, policy=UNGUARDED).value is None


# --- _turn: the figures of a turn -----------------------------------------------------------------


def test_turn_figures_carry_design_keys_and_none_for_what_was_not_reported() -> None:
    """A target that reports only its domain: every other key is None, never 0."""
    figures = score_turn(
        turn(S(intent="find_hotel", slots={"hotel": {"area": "north"}}), S(domain="hotel")), policy=POLICY
    )
    assert (
        tuple(figures.metrics())
        == TURN_KEYS
        == (
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
    )
    assert figures.metrics() == dict.fromkeys(TURN_KEYS) | {"domain_accuracy": 1.0}
    assert figures.details()["slot_accuracy"]["reason"] == "the target did not report its slots"


# --- _dialogue: means, memory transfer, violations, task completion --------------------------------


def test_dialogue_means_are_over_the_turns_that_measured_each_key() -> None:
    """Domain right at turn 0, not reported at turn 1, wrong at turn 2: (1 + 0) / 2 = 0.5, not 1 / 3.
    Acts never reported: None. Slots reported at turn 2 only: 1 / 1 expected pair."""
    figures = dialogue(
        turn(S(intent="find_hotel"), S(domain="hotel")),
        turn(S(intent="find_hotel"), S()),
        turn(
            S(intent="find_hotel", slots={"hotel": {"area": "north"}}),
            S(domain="restaurant", slots={"hotel": {"area": "north"}}),
        ),
    )
    assert figures.means["domain_accuracy"] == 0.5
    assert figures.means["act_accuracy"] is None
    assert figures.means["slot_accuracy"] == 1.0


def test_memory_transfer_seed_example() -> None:
    """MAS4CS 7: "earlier restaurant state: restaurant-area = north; later hotel search uses: hotel-area =
    north (carried over) -> correct transfer (1)". One opportunity (area), carried: 1 / 1."""
    restaurant = {"restaurant": {"area": "north", "food": "thai"}}
    both = restaurant | {"hotel": {"area": "north"}}
    figure = memory_transfer(
        [
            turn(S(intent="find_restaurant", slots=restaurant), S()),
            turn(S(intent="find_hotel", slots=both), S(slots=both)),
        ]
    )
    assert figure.value == 1.0
    assert [(t.turn, t.slot, t.value, t.source, t.target) for t in figure.transfers] == [
        (1, "area", "north", "restaurant", "hotel")
    ]


def test_dialogue_details_say_what_lies_behind_the_figures() -> None:
    north = {"restaurant": {"area": "north"}}
    kept = north | {"hotel": {"area": "north"}}
    figures = dialogue(
        turn(S(domain="restaurant", slots=north), verdict="hallucination"),
        turn(S(domain="hotel", slots=kept), S(slots=north), verdict="miss"),
        turn(verdict="correct"),
        goal=Goal.of(inform=["the address"]),
    )
    assert figures.details() == {
        "task_completion": {"reason": "no reply gave 'the address'"},
        "memory_transfer": {
            "reason": "",
            "transfers": [
                {
                    "turn": 1,
                    "slot": "area",
                    "value": "north",
                    "source": "restaurant",
                    "target": "hotel",
                    "carried": False,
                }
            ],
        },
        "crag": ["hallucination", "miss", "miss"],
    }


def test_memory_transfer_counts_each_opportunity() -> None:
    """The hotel takes over area and pricerange; the target keeps area and forgets pricerange: 1 / 2.
    Booking slots (bookday) are not transferable."""
    restaurant = {"restaurant": {"area": "north", "pricerange": "cheap", "bookday": "monday"}}
    hotel = restaurant | {"hotel": {"area": "north", "pricerange": "cheap", "bookday": "monday"}}
    reported = restaurant | {"hotel": {"area": "north"}}
    figure = memory_transfer(
        [
            turn(S(domain="restaurant", slots=restaurant)),
            turn(S(domain="hotel", slots=hotel), S(slots=reported)),
        ]
    )
    assert figure.value == 0.5
    assert [(t.slot, t.carried) for t in figure.transfers] == [("area", True), ("pricerange", False)]


def test_memory_transfer_not_measured_without_opportunity() -> None:
    """No change of domain; a change whose new domain takes nothing over (DESIGN.md: not measured; the
    seed's note says 0.0); a change at a turn that reported no state."""
    north = {"restaurant": {"area": "north"}}
    same_domain = [
        turn(S(domain="restaurant", slots=north)),
        turn(S(domain="restaurant", slots=north), S(slots=north)),
    ]
    assert memory_transfer(same_domain).value is None
    south = north | {"hotel": {"area": "south"}}
    no_reuse = [
        turn(S(domain="restaurant", slots=north)),
        turn(S(domain="hotel", slots=south), S(slots=south)),
    ]
    assert memory_transfer(no_reuse).value is None
    kept = north | {"hotel": {"area": "north"}}
    unreported = [
        turn(S(domain="restaurant", slots=north)),
        turn(S(domain="hotel", slots=kept), S(domain="hotel")),
    ]
    assert memory_transfer(unreported).value is None


def test_policy_violations_are_counted() -> None:
    """MAS4CS 8: "Violations_dialogue = count of turns where Compliance_turn = 0": 2 of 3 turns."""
    figures = dialogue(
        turn(predicted=S(action="book_hotel", slots=NO_STAY)),
        turn(predicted=S(action="request", slots=NO_STAY)),
        turn(predicted=S(action="book", domain="hotel", slots={"hotel": {"name": "hilton"}})),
    )
    assert figures.policy_violations == 2
    assert dialogue(turn(predicted=S(domain="hotel"))).policy_violations is None


def test_task_completion_seed_example_1() -> None:
    """MAS4CS 10, example 1: "I want to book the University Arms Hotel for 2 people, 2 nights, starting
    Saturday" -> "Booking confirmed"; "Final slots: {hotel: {name, bookday, bookpeople, bookstay}};
    Action: book_hotel -> Task Completion = TRUE (all slots + booking action)"."""
    final = {"hotel": {"name": "university arms", "bookday": "Saturday", "bookpeople": "2", "bookstay": "2"}}
    figures = dialogue(
        turn(predicted=S(domain="hotel", action="book_hotel", slots=final)), goal=Goal.of(book=["hotel"])
    )
    assert figures.task_completion.value == 1.0


def test_task_completion_seed_example_2() -> None:
    """MAS4CS 10, example 2: "I need the hotel name to complete your booking"; "That's all, goodbye";
    "Final slots: {hotel: {bookpeople, bookstay, bookday}}; Action: request_info -> FALSE (missing
    required slot: name)". No booking action either."""
    state = {"hotel": {"bookpeople": "2", "bookstay": "2", "bookday": "Saturday"}}
    figures = dialogue(
        turn(predicted=S(domain="hotel", action="request_info", slots=state)),
        turn(predicted=S(domain="general", action="bye", slots=state)),
        goal=Goal.of(book=["hotel"]),
    )
    assert figures.task_completion.value == 0.0
    assert figures.task_completion.reason == "no booking action; hotel booked without name"


def test_task_completion_seed_example_3() -> None:
    """MAS4CS 10, example 3: "Great choice! The Hilton is available. Would you like to proceed?";
    "Actually, never mind. Goodbye"; "Final slots: {hotel: {name: Hilton, bookpeople, bookstay,
    bookday}}; Action: inform -> FALSE (user had all slots but no booking action occurred)"."""
    figures = dialogue(
        turn(predicted=S(domain="hotel", action="inform", slots=ALL_HOTEL_SLOTS)),
        goal=Goal.of(book=["hotel"]),
    )
    assert (figures.task_completion.value, figures.task_completion.reason) == (0.0, "no booking action")


def test_task_completion_policy_gate() -> None:
    """MAS4CS 10, "Step 0 (Policy gate): If any policy violation detected -> TaskCompletion = FALSE
    immediately": a premature booking at turn 0, then a full one."""
    figures = dialogue(
        turn(predicted=S(domain="hotel", action="book_hotel", slots=NO_STAY)),
        turn(predicted=S(domain="hotel", action="book_hotel", slots=ALL_HOTEL_SLOTS)),
        goal=Goal.of(book=["hotel"]),
    )
    assert (figures.task_completion.value, figures.task_completion.reason) == (
        0.0,
        "policy gate: 1 violation(s)",
    )


def test_task_completion_needs_every_goal_domain_reported() -> None:
    figures = dialogue(
        turn(predicted=S(domain="hotel", action="book_hotel", slots=ALL_HOTEL_SLOTS)),
        goal=Goal.of(book=["hotel", "taxi"]),
    )
    assert (figures.task_completion.value, figures.task_completion.reason) == (
        0.0,
        "taxi was never the reported domain",
    )


def test_task_completion_inform_goal() -> None:
    """An information goal: every listed value appears in some reply (case and punctuation folded)."""
    goal = Goal.of(inform=["01223 356555", "the address"])
    done = dialogue(turn(reply="Call 01223-356555."), turn(reply="The address is 2 Hills Road."), goal=goal)
    assert done.task_completion.value == 1.0
    short = dialogue(turn(reply="Call 01223-356555."), goal=goal)
    assert (short.task_completion.value, short.task_completion.reason) == (0.0, "no reply gave 'the address'")


def test_task_completion_not_measured() -> None:
    """No goal; a booking goal when the target never reported its state (nothing failed that it did
    report)."""
    assert dialogue(turn(predicted=S(action="book_hotel")), goal=None).task_completion.value is None
    unreported = dialogue(
        turn(predicted=S(domain="hotel", action="book_hotel")), goal=Goal.of(book=["hotel"])
    )
    assert unreported.task_completion.value is None
    assert unreported.task_completion.reason == "the target never reported its slots"


def test_a_reported_failure_decides_though_another_key_went_unreported() -> None:
    """No slots were ever reported, but the reported actions show no booking: not completed."""
    figures = dialogue(turn(predicted=S(domain="hotel", action="inform")), goal=Goal.of(book=["hotel"]))
    assert (figures.task_completion.value, figures.task_completion.reason) == (0.0, "no booking action")


def test_system_correctness_is_correct_turns_over_turns() -> None:
    """MAS4CS 9: "SystemCorrectness = (correct_turns) / (total_turns)": right, wrong, right, and a turn
    with nothing to judge (not counted): 2 / 3."""
    figures = dialogue(
        turn(S(action="request"), S(action="request")),
        turn(S(action="book"), S(action="search")),
        turn(S(action="inform"), S(action="inform")),
        turn(S(), S()),
    )
    assert figures.system_correctness == pytest.approx(2 / 3)
    assert figures.means["system_correct"] == pytest.approx(2 / 3)


def test_dialogue_figures_keys() -> None:
    figures = dialogue(turn(S(intent="find_hotel"), S(domain="hotel")))
    assert tuple(figures.metrics()) == (*TURN_KEYS, *DIALOGUE_KEYS)
    assert DIALOGUE_KEYS == (
        "task_completion",
        "memory_transfer",
        "policy_violations",
        "system_correctness",
        "multi_turn_conversation_score",
        "response_quality",
        "response_factual_correctness",
        "response_completeness",
    )
    assert figures.metrics() == dict.fromkeys(figures.metrics()) | {"domain_accuracy": 1.0}


def _judged(answer: float, factual: float, complete: float) -> Turn:
    quality = dict(zip(QUALITY_KEYS, (answer, factual, complete), strict=True))
    return Turn(expected=S(), predicted=S(), quality=quality)


def test_response_quality_is_the_mean_over_the_turns_the_judge_scored() -> None:
    """MAS4CS 11, step 2, worked by hand: turns scored 0.8 and 0.6 (answer quality), one turn the judge
    did not score (left out, not a 0): (0.8 + 0.6) / 2 = 0.7; factual (1.0 + 0.5) / 2 = 0.75;
    completeness (0.6 + 1.0) / 2 = 0.8."""
    figures = dialogue(_judged(0.8, 1.0, 0.6), turn(), _judged(0.6, 0.5, 1.0))
    assert figures.metrics()["response_quality"] == pytest.approx(0.7)
    assert figures.metrics()["response_factual_correctness"] == pytest.approx(0.75)
    assert figures.metrics()["response_completeness"] == pytest.approx(0.8)
    assert dialogue(turn(), turn()).metrics()["response_quality"] is None  # no turn scored


def test_run_response_quality_is_the_mean_of_the_dialogue_means() -> None:
    """MAS4CS 11, step 3: dialogue A (0.8, 0.6 -> 0.7) and dialogue B (0.4) give (0.7 + 0.4) / 2 =
    0.55, not the mean over turns (0.6); a dialogue with no scored turn is left out."""
    a = dialogue(_judged(0.8, 1.0, 1.0), _judged(0.6, 1.0, 1.0))
    b = dialogue(_judged(0.4, 0.0, 1.0))
    run = score_run([a, b, dialogue(turn())])
    assert run.metrics["response_quality"] == pytest.approx(0.55)
    assert run.metrics["response_factual_correctness"] == pytest.approx(0.5)
    assert run.metrics["response_completeness"] == pytest.approx(1.0)


def test_recall_precision_and_f1_are_averaged_as_their_figures_are() -> None:
    """MAS4CS 3 and 4 average the turns' F1 (and precision) too, dialogue by dialogue, then by each
    figure's dataset rule. Worked by hand. Dialogue A, turn 0: acts {inform, request} expected,
    {inform} reported (recall 1/2, precision 1, F1 2/3); slots {area, pricerange} expected, {area}
    reported (precision 1, F1 2/3). Turn 1: acts {inform} for {inform, book} (1, 1/2, 2/3); slots
    {area} for {area, stars} (precision 1/2, F1 2/3). Dialogue B, one turn: acts right (1, 1, 1);
    slots area north for south (precision 0, F1 0). Run: acts by the mean of the dialogue means
    (recall (3/4 + 1) / 2, F1 (2/3 + 1) / 2); slots by the mean over the three turns."""
    area, cheap = {"area": "centre"}, {"pricerange": "cheap"}
    a = dialogue(
        turn(
            S(acts=["Hotel-Inform", "Hotel-Request"], slots={"hotel": {**area, **cheap}}),
            S(acts=["Hotel-Inform"], slots={"hotel": area}),
        ),
        turn(
            S(acts=["Hotel-Inform"], slots={"hotel": area}),
            S(acts=["Hotel-Inform", "Hotel-Book"], slots={"hotel": {**area, "stars": "4"}}),
        ),
    )
    b = dialogue(
        turn(
            S(acts=["Hotel-Inform"], slots={"hotel": {"area": "north"}}),
            S(acts=["Hotel-Inform"], slots={"hotel": {"area": "south"}}),
        )
    )
    means = detail_means(a.turns)
    assert means["act_accuracy"] == pytest.approx({"recall": 0.75, "precision": 0.75, "f1": 2 / 3})
    assert means["slot_accuracy"] == pytest.approx({"precision": 0.75, "f1": 2 / 3})
    assert means["intent_accuracy"] == {"recall": None, "precision": None, "f1": None}  # never expected
    run = score_run([a, b]).details
    assert run["act_accuracy"] == pytest.approx({"recall": 0.875, "precision": 0.875, "f1": 5 / 6})
    assert run["slot_accuracy"] == pytest.approx({"precision": 0.5, "f1": 4 / 9})


def test_an_empty_dialogue_measures_nothing() -> None:
    figures = dialogue(goal=Goal.of(inform=["x"]))
    assert figures.metrics() == dict.fromkeys((*TURN_KEYS, *DIALOGUE_KEYS))
    assert figures.task_completion.reason == "no turn ran"


# --- _crag: the two-errors rule and the conversation score -----------------------------------------


def crag(*verdicts: CragVerdict) -> list[CragTurn]:
    return [CragTurn(verdict=v, exact_match=v == "correct") for v in verdicts]


def test_two_errors_rule_and_conversation_score() -> None:
    """CRAG: "After two consecutive incorrect responses, all subsequent turns are marked as missed";
    "multi_turn_conversation_score = mean(is_correct) - mean(is_hallucination) per conversation".
    [hallucination, hallucination, correct, correct]: turns 2 and 3 follow two errors -> missed.
    Score = 0/4 correct - 2/4 hallucinated = -0.5 (without the rule it would be 2/4 - 2/4 = 0)."""
    ruled = apply_two_errors_rule(crag("hallucination", "hallucination", "correct", "correct"))
    assert [t.verdict for t in ruled] == ["hallucination", "hallucination", "miss", "miss"]
    assert not any(t.exact_match for t in ruled)
    assert conversation_score(crag("hallucination", "hallucination", "correct", "correct")) == -0.5


def test_a_miss_is_an_error_and_a_correct_answer_resets_the_count() -> None:
    """[miss, hallucination, correct] -> [miss, hallucination, miss]: (0 - 1) / 3.
    [hallucination, correct, hallucination, correct] has no two errors in a row: (2 - 2) / 4 = 0."""
    assert conversation_score(crag("miss", "hallucination", "correct")) == pytest.approx(-1 / 3)
    alternating = crag("hallucination", "correct", "hallucination", "correct")
    assert apply_two_errors_rule(alternating) == tuple(alternating)
    assert conversation_score(alternating) == 0.0
    assert conversation_score([]) is None


def test_dialogue_crag_skips_turns_without_a_verdict() -> None:
    """Turns 0 and 2 are judged (the unjudged turn 1 does not break the run of errors): [hallucination,
    miss, correct] -> [hallucination, miss, miss]: (0 - 1) / 3."""
    figures = dialogue(turn(verdict="hallucination"), turn(), turn(verdict="miss"), turn(verdict="correct"))
    assert [t.verdict for t in figures.crag_turns] == ["hallucination", "miss", "miss"]
    assert figures.multi_turn_conversation_score == pytest.approx(-1 / 3)
    assert dialogue(turn(), turn()).multi_turn_conversation_score is None


def test_crag_scores_dictionary() -> None:
    """CRAG's scores dictionary over two conversations after the rule:
    A = [correct (exact), correct (judged), hallucination]  -> unchanged; score (2 - 1) / 3 = 1/3
    B = [miss, hallucination, correct (exact)]              -> [miss, hallucination, miss]; score -1/3
    total 6, correct 2 (1 exact), miss 2, hallucination 6 - 2 - 2 = 2;
    truthfulness (2 x 2 + 2) / 6 - 1 = 0; mean conversation score (1/3 - 1/3) / 2 = 0."""
    a = [
        CragTurn(verdict="correct", exact_match=True),
        CragTurn(verdict="correct"),
        CragTurn(verdict="hallucination"),
    ]
    b = [
        CragTurn(verdict="miss"),
        CragTurn(verdict="hallucination"),
        CragTurn(verdict="correct", exact_match=True),
    ]
    scores = crag_scores([a, b])
    assert scores is not None
    assert {k: scores[k] for k in ("total", "correct_exact", "correct", "miss", "hallucination")} == {
        "total": 6,
        "correct_exact": 1,
        "correct": 2,
        "miss": 2,
        "hallucination": 2,
    }
    assert scores["exact_match"] == pytest.approx(1 / 6)
    assert scores["accuracy"] == pytest.approx(1 / 3)
    assert scores["missing"] == pytest.approx(1 / 3)
    assert scores["hallucination_rate"] == pytest.approx(1 / 3)
    assert scores["truthfulness_score"] == pytest.approx(0.0)
    assert scores["mean_multi_turn_conversation_score"] == pytest.approx(0.0)
    assert crag_scores([[], []]) is None
    assert {key for key, _ in CRAG_SCORE_LABELS} == set(scores)  # every figure has its table column


# --- _run: each figure by its own dataset rule -----------------------------------------------------


def _short_right() -> DialogueFigures:
    """One turn, domain right, state right (slots 1/1, JGA 1), a premature booking (1 violation),
    memory transfer not measured, a booking goal (gated: not completed), CRAG correct."""
    state = {"hotel": {"area": "north"}}
    return dialogue(
        turn(
            S(intent="book_hotel", slots=state),
            S(domain="hotel", action="book", slots=state),
            verdict="correct",
        ),
        goal=Goal.of(book=["hotel"]),
    )


def _long_wrong() -> DialogueFigures:
    """Three turns routed to the wrong domain (domain 0, 0, 0), state wrong (slots 0, JGA 0), compliant,
    one memory-transfer opportunity carried (1 / 1), no goal, CRAG [hallucination, hallucination, correct]
    -> [h, h, miss]."""
    north = {"restaurant": {"area": "north"}}
    kept = north | {"hotel": {"area": "north"}}
    wrong = {"restaurant": {"area": "south"}}
    return dialogue(
        turn(
            S(intent="find_restaurant", slots=north),
            S(domain="hotel", action="search", slots=wrong),
            verdict="hallucination",
        ),
        turn(
            S(intent="find_hotel", slots=kept),
            S(domain="restaurant", action="search", slots={"hotel": {"area": "north"}}),
            verdict="hallucination",
        ),
        turn(
            S(intent="find_hotel", slots=kept),
            S(domain="restaurant", action="search", slots={}),
            verdict="correct",
        ),
    )


def test_run_figures_follow_each_metrics_own_rule() -> None:
    """MAS4CS step 3 (DESIGN.md, per run):
    domain accuracy, mean of dialogue means: (1 + 0) / 2 = 0.5 (over turns it would be 1/4);
    slot accuracy, mean over turns: (1 + 0 + 1/2 + 0) / 4 = 0.375 (mean of dialogue means would be
      (1 + 1/6) / 2 = 0.583): turn 1 of the long dialogue holds the hotel area only (1 of 2 pairs);
    JGA over turns: (1 + 0 + 0 + 0) / 4 = 0.25;
    policy violation rate = 1 violation / 4 turns = 0.25, total 1;
    memory transfer over dialogues with opportunities only: 1.0 (the short one has none);
    task completion = 0 completed / 1 dialogue with a goal = 0.0;
    multi-turn conversation score: short (1 - 0) / 1 = 1, long (0 - 2) / 3 = -2/3 -> mean 1/6."""
    short, long = _short_right(), _long_wrong()
    assert short.means["domain_accuracy"] == 1.0
    assert long.means["domain_accuracy"] == 0.0
    assert long.means["slot_accuracy"] == pytest.approx(1 / 6)
    run = score_run([short, long]).metrics
    assert run["domain_accuracy"] == 0.5
    assert run["slot_accuracy"] == pytest.approx(0.375)
    assert run["jga"] == 0.25
    assert (run["policy_violation_rate"], run["total_policy_violations"]) == (0.25, 1)
    assert run["memory_transfer"] == 1.0
    assert run["task_completion"] == 0.0
    assert run["multi_turn_conversation_score"] == pytest.approx(1 / 6)
    assert (run["dialogues"], run["turns"]) == (2, 4)


def test_run_crag_scores_use_the_ruled_turns() -> None:
    """Short [correct], long [h, h, correct] -> [h, h, miss]: total 4, correct 1, miss 1, hallucination
    2; truthfulness (2 + 1) / 4 - 1 = -0.25; mean conversation score (1 - 2/3) / 2 = 1/6."""
    crag_run = score_run([_short_right(), _long_wrong()]).crag
    assert crag_run is not None
    assert (crag_run["total"], crag_run["correct"], crag_run["miss"], crag_run["hallucination"]) == (
        4,
        1,
        1,
        2,
    )
    assert crag_run["truthfulness_score"] == pytest.approx(-0.25)
    assert crag_run["mean_multi_turn_conversation_score"] == pytest.approx(1 / 6)


def test_run_keys_and_an_empty_run() -> None:
    assert (
        *TURN_KEYS,
        "task_completion",
        "memory_transfer",
        "policy_violation_rate",
        "total_policy_violations",
        "system_correctness",
        "multi_turn_conversation_score",
        "response_quality",
        "response_factual_correctness",
        "response_completeness",
        "dialogues",
        "turns",
    ) == RUN_KEYS
    empty = score_run([])
    assert tuple(empty.metrics) == RUN_KEYS
    assert empty.metrics == dict.fromkeys(RUN_KEYS) | {"dialogues": 0, "turns": 0}
    assert empty.crag is None


def test_a_run_of_dialogues_that_report_nothing_measures_nothing() -> None:
    run = score_run([dialogue(turn(S(intent="find_hotel"), S()))])
    assert run.metrics == dict.fromkeys(RUN_KEYS) | {"dialogues": 1, "turns": 1}


def test_the_policy_violation_rate_counts_every_turn_that_ran() -> None:
    """DESIGN.md and MAS4CS 8: policy violation rate = violations / turns. Of two turns, one books
    without the stay (1 violation) and one reports no action (compliance not measured): 1 / 2 = 0.5,
    not 1 / 1 over the measured turn only. A run where no turn measured compliance has no rate."""
    booked = turn(predicted=S(action="book_hotel", slots=NO_STAY))
    silent = turn(predicted=S(domain="hotel"))
    run = score_run([dialogue(booked, silent)]).metrics
    assert (run["policy_violation_rate"], run["total_policy_violations"]) == (0.5, 1)
    unmeasured = score_run([dialogue(silent)]).metrics
    assert (unmeasured["policy_violation_rate"], unmeasured["total_policy_violations"]) == (None, None)


def _dialogue_doc(scenario: str, *, act: float, violations: int, hallucination: list[float | None]) -> dict:
    turns = [
        {"status": "not run", "metrics": {}}
        if value is None
        else {"status": "passed", "metrics": {"slot_hallucination_rate": value}}
        for value in hallucination
    ]
    ran = [v for v in hallucination if v is not None]
    dialogue = {"act_accuracy": act, "policy_violations": violations}
    dialogue["slot_hallucination_rate"] = sum(ran) / len(ran)
    return {
        "scenario_id": scenario,
        "kind": "dialogue",
        "status": "passed",
        "dialogue": dialogue,
        "turns": turns,
    }


def test_report_and_compare_show_and_gate_act_accuracy_the_hallucination_and_violation_rates() -> None:
    """DESIGN, Dialogues: `report` and `compare` show run.dialogue's figures and gate on them. By hand,
    dialogue A (act accuracy 0.5; slot hallucination 0.5 and 0.0 in its two turns that ran, a third not
    run; 1 violation) and B (act 1.0; one turn, 0.0; no violation): act accuracy = the mean of the
    dialogue means, (0.5 + 1) / 2 = 0.75; slot hallucination = the mean over measured turns,
    (0.5 + 0 + 0) / 3 = 0.1667; policy violation rate = violations / turns that ran = 1 / 3. A candidate
    whose B has a violation in its one turn: 2 / 3, a rise of 33 points, a regression (the rate of what
    should not happen gates upwards); its act accuracy rising is none."""
    metrics = with_dialogues(default_metrics())
    a = _dialogue_doc("a", act=0.5, violations=1, hallucination=[0.5, 0.0, None])
    b = _dialogue_doc("b", act=1.0, violations=0, hallucination=[0.0])
    run = summarize([a, b], metrics)
    assert run["dialogue_act_accuracy"] == 0.75
    assert run["dialogue_slot_hallucination_rate"] == round(0.5 / 3, 4)
    assert run["dialogue_policy_violation_rate"] == round(1 / 3, 4)

    worse = {**b, "dialogue": {**b["dialogue"], "policy_violations": 1, "act_accuracy": 1.0}}
    base = RunRecord(id="r1", name="r1", started_at="2026-11-29T00:00:00Z", results=(a, b))
    cand = RunRecord(id="r2", name="r2", started_at="2026-11-29T00:01:00Z", results=(a, worse))
    compared = compare_runs(base, cand, CompareConfig(), metrics=metrics)
    figures = {row["figure"]: (row["baseline"], row["candidate"]) for row in compared["figures"]}
    assert figures["dialogue_policy_violation_rate"] == (round(1 / 3, 4), round(2 / 3, 4))
    assert compared["verdict"] == "regression"
    assert compared["regressions"] == ["dialogue policy violation rate"]
    # B's own line names its rate as a rate (only a pass rate is a scenario's pass: workflow_pass)
    assert "dialogue_policy_violation_rate 0 -> 1" in compare_markdown(compared, metrics)
