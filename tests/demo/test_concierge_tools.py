"""The concierge's database (also the entity catalog) and its four tools."""

from __future__ import annotations

import json

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from demo_agents.concierge.database import DB_PATH, booking_reference, find, search, venues
from demo_agents.concierge.tools import (
    CONCIERGE_TOOLS,
    NO_MATCH,
    book_hotel,
    book_restaurant,
    search_hotels,
    search_restaurants,
)


def test_database_holds_ten_hotels_and_eleven_complete_restaurants() -> None:
    rows = venues()

    assert [v.domain for v in rows].count("hotel") == 10
    assert [v.domain for v in rows].count("restaurant") == 11
    assert len({v.name.lower() for v in rows}) == len(rows)  # names identify venues
    for venue in rows:
        assert venue.area in {"north", "south", "east", "west", "centre"}
        assert venue.pricerange in {"cheap", "moderate", "expensive"}
        assert venue.address and venue.postcode and venue.phone
        assert ("type" if venue.domain == "hotel" else "food") in venue.details


def test_the_database_file_is_an_entity_catalog_of_named_objects() -> None:
    catalog = json.loads(DB_PATH.read_text(encoding="utf-8"))

    assert isinstance(catalog, list) and all(isinstance(row["name"], str) for row in catalog)
    assert "The Golden Dragon" not in {row["name"] for row in catalog}  # the seed's invented name


def test_search_matches_every_constraint_in_file_order_case_insensitively() -> None:
    assert [v.name for v in search("hotel", {"area": "north", "pricerange": "moderate"})] == [
        "Acorn Guest House",
        "Ashley Hotel",
        "Hamilton Lodge",
    ]
    assert [v.name for v in search("restaurant", {"food": "Indian", "area": "north"})] == [
        "The Nirala",
        "Royal Spice",
    ]
    assert search("restaurant", {"food": "thai"}) == []
    assert len(search("hotel", {"bookday": "monday", "area": ""})) == 10  # booking slots do not filter


def test_find_is_by_name_and_optionally_by_domain() -> None:
    venue = find("  acorn GUEST house ")

    assert venue is not None and venue.phone == "01223 353888"
    assert find("Acorn Guest House", "restaurant") is None
    assert find("The Golden Dragon") is None


def test_search_tools_list_at_most_three_matches_name_first() -> None:
    lines = search_hotels.invoke({}).split("\n")
    centre = search_hotels.invoke({"area": "centre", "pricerange": "cheap"}).split("\n")

    assert lines[0] == "10 hotels match." and len(lines) == 4
    assert centre[0] == "1 hotels match." and len(centre) == 2
    assert centre[1].startswith("Alexander Bed and Breakfast | centre | cheap")
    assert "phone 01223 525725" in centre[1]
    assert search_restaurants.invoke({"food": "thai"}) == f"{NO_MATCH} restaurants for food=thai."


def test_booking_tools_return_a_stable_reference_and_default_what_is_missing() -> None:
    booked = book_hotel.invoke({"name": "acorn guest house", "bookday": "saturday", "bookpeople": "2"})

    reference = booking_reference("Acorn Guest House", "saturday", "2", "1")
    assert (
        booked == f"Booked Acorn Guest House for 2 people on saturday for 1 nights. Reference: {reference}."
    )
    assert book_hotel.invoke({"name": "The Golden Dragon"}).startswith("Cannot book")
    table = book_restaurant.invoke(
        {"name": "Meze Bar", "bookday": "friday", "bookpeople": "2", "booktime": "20:00"}
    )
    assert table.startswith("Booked a table at Meze Bar for 2 people on friday at 20:00. Reference: ")


@pytest.mark.parametrize("tool", CONCIERGE_TOOLS, ids=lambda t: t.name)
def test_tools_have_schemas_a_model_can_call(tool: object) -> None:
    schema = convert_to_openai_tool(tool)  # type: ignore[arg-type]

    assert schema["function"]["description"]
    assert set(schema["function"]["parameters"]["properties"]) <= {
        "name", "area", "pricerange", "type", "food", "bookday", "bookpeople", "bookstay", "booktime",
    }  # fmt: skip
