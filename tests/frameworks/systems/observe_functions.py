"""Plain `@observe` functions, as Langfuse's docs decorate them: a plain `@observe()` on the entry
point, agents and tools typed with `as_type`, and the client made at import time."""

from __future__ import annotations

from typing import Any

from langfuse import get_client, observe

langfuse = get_client()


@observe(as_type="tool")
def search_flights(destination: str) -> str:
    return f"LH123 to {destination}"


@observe(as_type="tool")
def search_hotels(city: str) -> str:
    return f"Hotel Adlon in {city}"


@observe(as_type="agent")
def flight_agent(question: str) -> str:
    return search_flights("Berlin")


@observe(as_type="agent")
def hotel_agent(question: str) -> str:
    return search_hotels("Berlin")


@observe()
def main(question: str) -> str:
    answer = flight_agent(question)
    if "hotel" in question:
        answer += "; " + hotel_agent(question)
    return answer


def run(request: Any) -> object:
    return main(request.input)
