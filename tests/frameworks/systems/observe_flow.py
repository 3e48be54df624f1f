"""Plain `@observe` agents whose router names the route it took as trace metadata, as Langfuse's docs
set trace attributes (`propagate_attributes(metadata=...)`): the flow comes from there, not from the
first agent."""

from __future__ import annotations

from typing import Any

from langfuse import get_client, observe, propagate_attributes

langfuse = get_client()


@observe(as_type="tool")
def lookup_invoice(number: str) -> str:
    return f"Invoice {number}: paid"


@observe(as_type="agent")
def billing_agent(question: str) -> str:
    return lookup_invoice("42")


@observe()
def main(question: str) -> str:
    with propagate_attributes(metadata={"flow": "billing"}):
        return billing_agent(question)


def run(request: Any) -> object:
    return main(request.input)
