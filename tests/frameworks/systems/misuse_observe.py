"""Plain Python with Langfuse's `@observe`: a `planner` agent looks a topic up (rightly, passing the
argument positionally), then a `calculator` agent runs the question's tool misuse
(`misuse.faulty_call`) through a dispatch loop that feeds a failing call's error back, as agent loops
do. Nothing records the tools' schemas: they come from `observe_tools.json`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langfuse import get_client, observe

from tests.frameworks.systems.misuse import faulty_call

AGENT_TOOLS = {"planner": ["lookup"], "calculator": ["add"]}
TOOL_SCHEMAS = Path(__file__).with_name("observe_tools.json")
langfuse = get_client()


@observe(as_type="tool")
def lookup(topic: str) -> str:
    return f"{topic}: numbers"


@observe(as_type="tool")
def add(a: int, b: int) -> int:
    return a + b


@observe(as_type="tool")
def web_search(query: str) -> str:
    return "5"


TOOLS: dict[str, Callable[..., Any]] = {"add": add, "web_search": web_search}


@observe(as_type="agent")
def planner(question: str) -> str:
    return lookup("arithmetic")


@observe(as_type="agent")
def calculator(question: str) -> str:
    name, arguments = faulty_call(question)
    try:
        return str(TOOLS[name](**arguments))
    except TypeError as exc:  # the model is told, as an agent loop would tell it
        return f"error: {exc}"


@observe()
def main(question: str) -> str:
    return planner(question) + "; " + calculator(question)


def run(text: str) -> object:
    return main(text)
