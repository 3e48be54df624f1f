"""The trace each concierge turn writes through the real Langfuse SDK: agents, tools, the reported
state (DESIGN.md's reading: the last observation by end time carrying each key), the dialogue memory
keyed on the session, and the two flaws, with policy v2's fix."""

from __future__ import annotations

from tests.demo.concierge_tracing import traced_dialogue

V2 = {"agents/concierge-policy": 2}
BOOKING = [
    "I want to book a hotel for 2 people on Saturday",
    "The Acorn Guest House, but I don't know how many nights yet",
    "Three nights, please.",
]
SAME_AREA = ["I'm looking for a cheap restaurant in the south", "I also need a hotel in the same area"]


def test_a_booking_turn_nests_every_agent_below_the_supervisor() -> None:
    (turn,) = traced_dialogue(["Please book the Lensfield Hotel for 3 people on Friday for 2 nights"])

    assert turn.named("agent") == ["supervisor", "triage", "memory", "policy", "action"]
    assert turn.named("tool") == ["book_hotel"]
    assert turn.parent_name("supervisor") == "concierge-test#0"
    assert {turn.parent_name(a) for a in ("triage", "memory", "policy", "action")} == {"supervisor"}
    assert turn.parent_name("book_hotel") == "action"
    assert "Reference:" in turn.reply


def test_each_turn_reports_its_state_as_supervisor_metadata() -> None:
    search, details = traced_dialogue(
        ["Are there any cheap hotels in the east?", "What is the address and postcode of Autumn House?"]
    )

    assert search.state() == {
        "intent": "find_hotel",
        "domain": "hotel",
        "acts": ["Hotel-Inform"],
        "slots": {"hotel": {"area": "east", "pricerange": "cheap"}},
        "action": "search",
    }
    assert search.named("agent") == ["supervisor", "triage", "memory", "action"]  # no policy: no booking
    assert details.state()["slots"] == {
        "hotel": {"area": "east", "pricerange": "cheap", "name": "autumn house"}
    }
    assert details.state()["action"] == "inform"
    assert "710 newmarket road" in details.reply and "cb58rs" in details.reply


def test_a_turn_without_a_domain_asks_and_reports_no_domain_acts() -> None:
    (turn,) = traced_dialogue(["Hello, can you help me?"])

    assert turn.state() == {"intent": "", "domain": "", "acts": [], "slots": {}, "action": "request"}
    assert turn.named("tool") == []


def test_memory_is_per_session_and_starts_afresh_at_turn_zero() -> None:
    first = traced_dialogue(["Find me a cheap restaurant in the centre"])
    second = traced_dialogue(["I want an expensive restaurant serving indian food"])

    assert first[0].state()["slots"] == {"restaurant": {"area": "centre", "pricerange": "cheap"}}
    assert second[0].state()["slots"] == {"restaurant": {"food": "indian", "pricerange": "expensive"}}


def test_the_policy_flaw_books_without_the_number_of_nights() -> None:
    _, named, _ = traced_dialogue(BOOKING)
    state = named.state()

    assert state["action"] == "book" and state["acts"] == ["Booking-Book"]
    assert "bookstay" not in state["slots"]["hotel"]  # booked anyway: a policy violation
    assert named.named("tool") == ["book_hotel"] and "for 1 nights" in named.reply


def test_policy_v2_asks_for_the_nights_and_books_once_it_has_them() -> None:
    asked, named, booked = traced_dialogue(BOOKING, pins=V2)

    assert (asked.state()["action"], named.state()["action"], booked.state()["action"]) == (
        "request",
        "request",
        "book",
    )
    assert named.named("tool") == [] and "the number of nights" in named.reply
    assert booked.state()["slots"]["hotel"]["bookstay"] == "3" and "for 3 nights" in booked.reply


def test_the_memory_flaw_drops_the_area_from_restaurant_to_hotel_under_every_policy() -> None:
    for pins in (None, V2):
        restaurant, hotel = traced_dialogue(SAME_AREA, pins=pins)

        assert restaurant.state()["slots"] == {"restaurant": {"area": "south", "pricerange": "cheap"}}
        assert hotel.state()["domain"] == "hotel"
        assert "hotel" not in hotel.state()["slots"]  # expected {"hotel": {"area": "south"}}
        assert "Lensfield Hotel" not in hotel.reply  # the only hotel in the south


def test_the_area_does_cross_from_hotel_to_restaurant() -> None:
    _, restaurant = traced_dialogue(
        ["I need a moderately priced hotel in the north", "I'd also like a restaurant in the same area"]
    )

    assert restaurant.state()["slots"]["restaurant"] == {"area": "north"}
    assert "Golden Wok" in restaurant.reply
