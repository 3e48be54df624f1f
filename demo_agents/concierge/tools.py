"""The action agent's four tools, over `db.json`: search and book, per domain.

Every result is text a model can read. A search lists at most RESULT_LIMIT venues, one line each, name
first (`Venue.render`), after a count ("3 hotels match."); an empty search says `NO_MATCH...`. A booking
returns a reference number, or says why it could not book (unknown venue).

The booking tools take every booking slot as optional: they book what they are given and default what is
missing (one night, one person), as a permissive back end does. Checking that the booking is complete is
the policy agent's job, and the point of the demo's policy flaw (README).
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.tools import BaseTool, StructuredTool

from demo_agents.concierge.database import booking_reference, find, search

NO_MATCH = "No matching"
RESULT_LIMIT = 3
_ARGUMENT_HINT = "Invalid arguments. Call this tool with string arguments, as its schema says."


def _search(domain: str, constraints: dict[str, str]) -> str:
    found = search(domain, constraints)
    if not found:
        given = ", ".join(f"{k}={v}" for k, v in constraints.items() if v) or "no constraints"
        return f"{NO_MATCH} {domain}s for {given}."
    lines = [v.render() for v in found[:RESULT_LIMIT]]
    return f"{len(found)} {domain}s match.\n" + "\n".join(lines)


def _search_hotels(name: str = "", area: str = "", pricerange: str = "", type: str = "") -> str:
    """Search the hotel database.

    Args:
        name: The hotel's name, when the customer named one.
        area: north, south, east, west or centre.
        pricerange: cheap, moderate or expensive.
        type: hotel or guesthouse.
    """
    return _search("hotel", {"name": name, "area": area, "pricerange": pricerange, "type": type})


def _search_restaurants(name: str = "", area: str = "", pricerange: str = "", food: str = "") -> str:
    """Search the restaurant database.

    Args:
        name: The restaurant's name, when the customer named one.
        area: north, south, east, west or centre.
        pricerange: cheap, moderate or expensive.
        food: The cuisine, for example italian or indian.
    """
    return _search("restaurant", {"name": name, "area": area, "pricerange": pricerange, "food": food})


def _book_hotel(name: str, bookday: str = "", bookpeople: str = "1", bookstay: str = "1") -> str:
    """Book a hotel room.

    Args:
        name: The hotel's name.
        bookday: The day of arrival.
        bookpeople: How many people.
        bookstay: How many nights.
    """
    venue = find(name, "hotel")
    if venue is None:
        return f"Cannot book: there is no hotel named {name!r}."
    reference = booking_reference(venue.name, bookday, bookpeople, bookstay)
    return (
        f"Booked {venue.name} for {bookpeople} people on {bookday} for {bookstay} nights. "
        f"Reference: {reference}."
    )


def _book_restaurant(name: str, bookday: str = "", bookpeople: str = "1", booktime: str = "") -> str:
    """Book a restaurant table.

    Args:
        name: The restaurant's name.
        bookday: The day.
        bookpeople: How many people.
        booktime: The time, for example 19:00.
    """
    venue = find(name, "restaurant")
    if venue is None:
        return f"Cannot book: there is no restaurant named {name!r}."
    reference = booking_reference(venue.name, bookday, bookpeople, booktime)
    return (
        f"Booked a table at {venue.name} for {bookpeople} people on {bookday} at {booktime}. "
        f"Reference: {reference}."
    )


def _make_tool(func: Callable[..., str], name: str) -> BaseTool:
    # A wrong argument from a real model goes back to it as a message it can act on, not a crash.
    return StructuredTool.from_function(
        func, name=name, parse_docstring=True, handle_validation_error=_ARGUMENT_HINT
    )


search_hotels = _make_tool(_search_hotels, "search_hotels")
search_restaurants = _make_tool(_search_restaurants, "search_restaurants")
book_hotel = _make_tool(_book_hotel, "book_hotel")
book_restaurant = _make_tool(_book_restaurant, "book_restaurant")
CONCIERGE_TOOLS: tuple[BaseTool, ...] = (search_hotels, search_restaurants, book_hotel, book_restaurant)
SEARCH_TOOL = {"hotel": "search_hotels", "restaurant": "search_restaurants"}
BOOK_TOOL = {"hotel": "book_hotel", "restaurant": "book_restaurant"}
