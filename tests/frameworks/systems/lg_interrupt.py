"""Human-in-the-loop in a tool (LangGraph's "Add human intervention" docs): a prebuilt agent's
`book_hotel` tool calls `interrupt()` to ask for approval; the graph, checkpointed, pauses there, and the
target resumes it with `Command(resume=...)`, which runs the tool again from its start: one tool call,
run twice. Traced with a CallbackHandler made at import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command, interrupt

from tests.frameworks.systems.scripted import ScriptedChat, call, tool_results

langfuse_handler = CallbackHandler()


@tool
def book_hotel(hotel_name: str) -> str:
    """Book a hotel, once a human approves."""
    answer = interrupt(f"Book {hotel_name}? (yes/no)")
    return f"Booked a stay at {hotel_name}." if answer == "yes" else "Booking cancelled."


def _travel(messages: Sequence[BaseMessage]) -> AIMessage:
    booked = tool_results(messages, "book_hotel")
    return (
        AIMessage(content=booked[-1]) if booked else call("book_hotel", "b1", hotel_name="McKittrick Hotel")
    )


travel_agent = create_react_agent(
    ScriptedChat(script=_travel), tools=[book_hotel], checkpointer=InMemorySaver(), name="travel_agent"
)


def run(request: Any) -> object:
    """Asks, pauses at the approval, and resumes with "yes" (a human approving), on one thread."""
    config = {"configurable": {"thread_id": request.scenario_id}, "callbacks": [langfuse_handler]}
    travel_agent.invoke({"messages": [{"role": "user", "content": request.input}]}, config=config)
    return travel_agent.invoke(Command(resume="yes"), config=config)
