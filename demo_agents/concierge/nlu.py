"""The scripted triage's understanding of one customer message: keyword and regex rules, no model.

`understand(message, previous_intent, previous_domain)` returns what a triage LLM would: the intent
(`find_<domain>` or `book_<domain>`), the domain, the slots the message itself gives (values lower-case,
MultiWOZ slot names), the constraints it asks to reuse (`refs`: "the same area" -> area) and the venue
details it asks for (`requested`: phone, address, postcode).

Rules, in order:
- Venue names from db.json are found first and cut out of the text, so "Pizza Hut City Centre" sets the
  name (and the domain) but not `area = centre`.
- Domain: a named venue's domain, else the domain whose keyword comes first in the message ("a hotel near
  the restaurant" is about a hotel), else the previous turn's domain, else "" (unknown).
- Intent: `book_` when the message says book/reserve/reservation, or when the previous turn was a booking
  in the same domain and the message asks for no detail (the customer is completing the booking);
  otherwise `find_`. An unknown domain has no intent ("").
- Slots: area, pricerange, food (restaurants only), name, bookday, bookpeople, bookstay (hotels) and
  booktime (restaurants). Numbers may be digits or words up to ten. "I don't know how many nights" gives
  no bookstay: there is no number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from demo_agents.concierge.database import venues

NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "a": "1", "a single": "1",
}  # fmt: skip
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
DOMAIN_WORDS: Mapping[str, tuple[str, ...]] = {
    "hotel": ("hotel", "guesthouse", "guest house", "place to stay", "somewhere to stay", "room", "stay"),
    "restaurant": ("restaurant", "food", "eat", "dinner", "lunch", "table", "cuisine", "meal"),
}
AREAS = {
    "north": "north",
    "south": "south",
    "east": "east",
    "west": "west",
    "centre": "centre",
    "center": "centre",
}
PRICES = {
    "cheap": "cheap", "inexpensive": "cheap", "budget": "cheap", "moderate": "moderate",
    "moderately priced": "moderate", "mid-range": "moderate", "expensive": "expensive",
    "upscale": "expensive",
}  # fmt: skip
FOODS = (
    "italian",
    "indian",
    "chinese",
    "portuguese",
    "turkish",
    "modern european",
    "british",
    "french",
    "thai",
)
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
BOOK_WORDS = re.compile(r"\b(book|booking|reserve|reservation)\b")
REFS = {
    "area": re.compile(r"\bsame (area|part of town)\b"),
    "pricerange": re.compile(r"\bsame price( ?range)?\b"),
}
REQUESTED = {"phone": re.compile(r"\bphone\b|\bnumber\b(?! of)"), "address": re.compile(r"\baddress\b"),
             "postcode": re.compile(r"\bpost ?code\b")}  # fmt: skip
_PEOPLE = re.compile(rf"\b{_NUMBER} (?:people|persons?|guests?|adults?)\b|\bparty of {_NUMBER}\b")
_STAY = re.compile(rf"\b({_NUMBER}|a|a single) nights?\b")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_HOUR = re.compile(r"\b(\d{1,2}) ?(am|pm)\b")


@dataclass(frozen=True, kw_only=True)
class Understanding:
    """What triage makes of one message (see the module docstring for the rules)."""

    intent: str
    domain: str
    slots: Mapping[str, str] = field(default_factory=dict)
    refs: tuple[str, ...] = ()
    requested: tuple[str, ...] = ()


def understand(message: str, *, previous_intent: str = "", previous_domain: str = "") -> Understanding:
    text = f" {message.lower()} "
    named = find_venue_name(text)
    if named is not None:
        text = text.replace(named[0].lower(), " ")
    domain = named[1] if named else (mentioned_domain(text) or previous_domain)
    if not domain:
        return Understanding(intent="", domain="")
    requested = tuple(key for key, pattern in REQUESTED.items() if pattern.search(text))
    slots = {"name": named[0].lower()} if named else {}
    slots |= constraint_slots(text, domain) | booking_slots(text, domain)
    return Understanding(
        intent=f"{intent_verb(text, domain, previous_intent, requested)}_{domain}",
        domain=domain,
        slots=slots,
        refs=tuple(slot for slot, pattern in REFS.items() if pattern.search(text)),
        requested=requested,
    )


def find_venue_name(text: str) -> tuple[str, str] | None:
    """(name, domain) of the longest venue name in the text, with or without a leading "the"."""
    found = [
        (venue.name, venue.domain)
        for venue in venues()
        if _has_phrase(text, venue.name.lower()) or _has_phrase(text, venue.name.lower().removeprefix("the "))
    ]
    return max(found, key=lambda pair: len(pair[0]), default=None)


def mentioned_domain(text: str) -> str:
    """The domain whose keyword occurs first in the text; '' when none does."""
    positions = [
        (match.start(), domain)
        for domain, words in DOMAIN_WORDS.items()
        for word in words
        if (match := re.search(rf"\b{re.escape(word)}s?\b", text))
    ]
    return min(positions, default=(0, ""))[1]


def intent_verb(text: str, domain: str, previous_intent: str, requested: tuple[str, ...]) -> str:
    if BOOK_WORDS.search(text):
        return "book"
    if previous_intent == f"book_{domain}" and not requested:
        return "book"
    return "find"


def constraint_slots(text: str, domain: str) -> dict[str, str]:
    slots = {"area": _first(text, AREAS), "pricerange": _first(text, PRICES)}
    if domain == "restaurant":
        slots["food"] = _first(text, {food: food for food in FOODS})
    return {slot: value for slot, value in slots.items() if value}


def booking_slots(text: str, domain: str) -> dict[str, str]:
    slots = {"bookday": next((day for day in DAYS if _has_phrase(text, day)), "")}
    if people := _PEOPLE.search(text):
        slots["bookpeople"] = _number(people[1] or people[2])
    if domain == "hotel" and (stay := _STAY.search(text)):
        slots["bookstay"] = _number(stay[1])
    if domain == "restaurant":
        slots["booktime"] = clock_time(text)
    return {slot: value for slot, value in slots.items() if value}


def clock_time(text: str) -> str:
    """'19:30' from "19:30" or "7:30"; '19:00' from "7pm"; '' when the text names no time."""
    if clock := _CLOCK.search(text):
        return f"{int(clock[1]):02d}:{clock[2]}"
    if hour := _HOUR.search(text):
        value = int(hour[1]) % 12 + (12 if hour[2] == "pm" else 0)
        return f"{value:02d}:00"
    return ""


def _first(text: str, words: Mapping[str, str]) -> str:
    """The value of the earliest of `words` in the text (longer phrases win at the same place)."""
    hits = [(m.start(), -len(word), value) for word, value in words.items() if (m := _phrase(text, word))]
    return min(hits, default=(0, 0, ""))[2]


def _phrase(text: str, phrase: str) -> re.Match[str] | None:
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text)


def _has_phrase(text: str, phrase: str) -> bool:
    return _phrase(text, phrase) is not None


def _number(word: str) -> str:
    return NUMBER_WORDS.get(word, word)
