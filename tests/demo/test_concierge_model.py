"""The concierge's scripted rules: the triage's language rules (nlu.py), the model's rules per prompt
sentence (the table in model.py), and the prompt files that carry those sentences."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from demo_agents.concierge.model import (
    ACTION_RULE,
    AREA_FROM_HOTEL_RULE,
    HOTEL_COMPLETE_RULE,
    HOTEL_NAME_DAY_RULE,
    MEMORY_RULE,
    NO_INSTRUCTIONS_REPLY,
    POLICY_RULE,
    PRICE_CARRY_RULE,
    RESTAURANT_RULE,
    TRIAGE_RULE,
    ScriptedConciergeModel,
    decide,
    remember,
)
from demo_agents.concierge.nlu import Understanding, clock_time, understand
from demo_agents.research.text import normalize_space
from tests.demo.tracing import PROMPTS


def _system(name: str, version: int = 1) -> str:
    prompt = PROMPTS.get(name, version=version)
    return normalize_space(" ".join(m.content for m in prompt.messages if m.role == "system"))


def test_triage_reads_the_design_example() -> None:
    first = understand("I want to book a hotel for 2 people on Saturday")
    second = understand(
        "The Acorn Guest House, but I don't know how many nights yet",
        previous_intent="book_hotel",
        previous_domain="hotel",
    )

    assert first == Understanding(
        intent="book_hotel", domain="hotel", slots={"bookday": "saturday", "bookpeople": "2"}
    )
    assert second == Understanding(intent="book_hotel", domain="hotel", slots={"name": "acorn guest house"})


@pytest.mark.parametrize(
    ("message", "intent", "slots"),
    [
        (
            "I need a cheap restaurant in the center",
            "find_restaurant",
            {"pricerange": "cheap", "area": "centre"},
        ),
        (
            "Any moderately priced indian food?",
            "find_restaurant",
            {"pricerange": "moderate", "food": "indian"},
        ),
        (
            "What is the phone number of Pizza Hut City Centre?",
            "find_restaurant",
            {"name": "pizza hut city centre"},
        ),
        (
            "Reserve a table for a party of three at 7:30",
            "book_restaurant",
            {"bookpeople": "3", "booktime": "07:30"},
        ),
        ("A room for one night", "find_hotel", {"bookstay": "1"}),
        ("I need a hotel near the restaurant", "find_hotel", {}),
    ],
)
def test_triage_slot_and_intent_rules(message: str, intent: str, slots: dict[str, str]) -> None:
    found = understand(message)

    assert (found.intent, dict(found.slots)) == (intent, slots)


def test_triage_keeps_the_previous_domain_and_booking_and_sees_references_and_requests() -> None:
    completing = understand("For two people, 3 nights", previous_intent="book_hotel", previous_domain="hotel")
    asking = understand("What is their address?", previous_intent="book_hotel", previous_domain="hotel")
    reuse = understand("A hotel in the same area and the same price range", previous_domain="restaurant")

    assert (completing.intent, dict(completing.slots)) == ("book_hotel", {"bookpeople": "2", "bookstay": "3"})
    assert (asking.intent, asking.requested) == ("find_hotel", ("address",))
    assert (reuse.domain, reuse.refs) == ("hotel", ("area", "pricerange"))
    assert understand("Hello, can you help me?") == Understanding(intent="", domain="")
    assert understand("I don't know how many nights", previous_domain="hotel").slots == {}


def test_clock_times() -> None:
    assert [clock_time(t) for t in ("at 19:30", "7pm", "12am", "noon")] == ["19:30", "19:00", "00:00", ""]


def test_policy_v1_books_a_hotel_with_name_and_day_v2_needs_people_and_nights() -> None:
    slots = {"name": "acorn guest house", "bookday": "saturday", "bookpeople": "2"}
    context = {"intent": "book_hotel", "domain": "hotel", "slots": slots}

    assert decide(context, f"{POLICY_RULE} {HOTEL_NAME_DAY_RULE}") == {"decision": "book", "missing": []}
    assert decide(context, f"{POLICY_RULE} {HOTEL_COMPLETE_RULE}") == {
        "decision": "request",
        "missing": ["bookstay"],
    }
    restaurant = {"domain": "restaurant", "slots": {"name": "meze bar", "bookday": "friday"}}
    assert decide(restaurant, RESTAURANT_RULE)["missing"] == ["booktime", "bookpeople"]


def test_memory_carries_the_price_range_both_ways_but_the_area_only_from_hotel_to_restaurant() -> None:
    system = f"{MEMORY_RULE} {PRICE_CARRY_RULE} {AREA_FROM_HOTEL_RULE}"
    restaurant = {"restaurant": {"area": "south", "pricerange": "cheap"}}
    hotel = {"hotel": {"area": "north", "pricerange": "moderate"}}
    both = ["area", "pricerange"]

    to_hotel = remember({"state": restaurant, "domain": "hotel", "slots": {}, "refs": both}, system)
    to_restaurant = remember({"state": hotel, "domain": "restaurant", "slots": {}, "refs": both}, system)

    assert to_hotel == {**restaurant, "hotel": {"pricerange": "cheap"}}  # the memory flaw: area lost
    assert to_restaurant == {**hotel, "restaurant": {"area": "north", "pricerange": "moderate"}}
    stated = remember(
        {"state": hotel, "domain": "restaurant", "slots": {"area": "east"}, "refs": ["area"]}, system
    )
    assert stated["restaurant"] == {"area": "east"}  # what the customer says wins over a copy


def _invoke(system: str, context: dict[str, object], *extra: ToolMessage) -> AIMessage:
    messages = [SystemMessage(system), HumanMessage(json.dumps(context)), *extra]
    reply = ScriptedConciergeModel().invoke(messages)
    assert isinstance(reply, AIMessage)
    return reply


def test_action_calls_one_tool_then_answers_from_its_result() -> None:
    context = {"task": "book", "domain": "hotel", "slots": {"name": "lensfield hotel", "bookday": "friday"}}

    first = _invoke(ACTION_RULE, context)
    (call,) = first.tool_calls
    result = ToolMessage("Booked Lensfield Hotel ... Reference: 1234ABCD.", tool_call_id=call["id"] or "")
    answer = _invoke(ACTION_RULE, context, result)

    assert (call["name"], call["args"]) == ("book_hotel", {"name": "lensfield hotel", "bookday": "friday"})
    assert answer.content == "Your booking is confirmed. Booked Lensfield Hotel ... Reference: 1234ABCD."
    request = {"task": "request", "domain": "hotel", "slots": {}, "missing": ["name", "bookstay"]}
    asked = _invoke(ACTION_RULE, request)
    assert (
        not asked.tool_calls
        and asked.content == "To book the hotel I still need its name and the number of nights."
    )


def test_unknown_prompts_and_garbled_context_are_answered_not_crashed() -> None:
    assert _invoke("Be helpful.", {}).content == NO_INSTRUCTIONS_REPLY
    reply = ScriptedConciergeModel().invoke([SystemMessage(TRIAGE_RULE), HumanMessage("not json")])
    assert json.loads(str(reply.content))["intent"] == ""


@pytest.mark.parametrize(
    ("name", "version", "rules", "absent"),
    [
        ("agents/concierge-triage", 1, [TRIAGE_RULE], []),
        ("agents/concierge-memory", 1, [MEMORY_RULE, PRICE_CARRY_RULE, AREA_FROM_HOTEL_RULE], []),
        ("agents/concierge-policy", 1, [POLICY_RULE, HOTEL_NAME_DAY_RULE], [HOTEL_COMPLETE_RULE]),
        ("agents/concierge-policy", 2, [POLICY_RULE, HOTEL_COMPLETE_RULE], [HOTEL_NAME_DAY_RULE]),
        ("agents/concierge-policy", 1, [RESTAURANT_RULE], []),
        ("agents/concierge-policy", 2, [RESTAURANT_RULE], []),
        ("agents/concierge-action", 1, [ACTION_RULE], []),
    ],
)
def test_prompt_files_carry_the_sentences_the_model_recognises(
    name: str, version: int, rules: list[str], absent: list[str]
) -> None:
    system = _system(name, version)

    assert all(rule in system for rule in rules)
    assert not any(rule in system for rule in absent)
    assert PROMPTS.get(name).version == 1  # production is v1: v2 is the candidate
