"""langgraph-supervisor, as its README builds it: a supervisor over `research_expert` (web search) and
`math_expert` (add), traced with Langfuse's CallbackHandler created at import time; with the default
`output_mode` ("last_message": only a worker's last message joins the history) and with "full_history"
(every message of the worker's run joins it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.prebuilt import create_react_agent
from langgraph_supervisor import create_supervisor

from tests.frameworks.systems.scripted import ScriptedChat, call, question, tool_results

langfuse_handler = CallbackHandler()


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return "Combined headcount of the FAANG companies in 2024: 1,977,586 employees."


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def _research(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "web_search")
    return AIMessage(content=f"Found: {found[-1]}") if found else call("web_search", "w1", query="faang")


def _math(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "add")
    return AIMessage(content=f"The sum is {found[-1]}.") if found else call("add", "a1", a=2, b=3)


def _supervisor(messages: Sequence[BaseMessage]) -> AIMessage:
    if any(isinstance(m, ToolMessage) and "back to supervisor" in str(m.content).lower() for m in messages):
        last_worker = next(
            m
            for m in reversed(messages)
            if isinstance(m, AIMessage) and str(m.content).startswith(("Found", "The"))
        )
        return AIMessage(content=f"Answer: {last_worker.content}")
    asked = question(messages).lower()
    if asked.startswith("hello"):  # small talk: the supervisor answers itself, delegating nothing
        return AIMessage(content="Hello! Ask me about research or arithmetic.")
    if "add" in asked:
        return call("transfer_to_math_expert", "h1")
    return call("transfer_to_research_expert", "h1")


research_agent = create_react_agent(
    model=ScriptedChat(script=_research), tools=[web_search], name="research_expert", prompt="Research."
)
math_agent = create_react_agent(
    model=ScriptedChat(script=_math), tools=[add], name="math_expert", prompt="Do math."
)
app = create_supervisor(
    [research_agent, math_agent], model=ScriptedChat(script=_supervisor), prompt="Route the question."
).compile()
full_history_app = create_supervisor(
    [research_agent, math_agent],
    model=ScriptedChat(script=_supervisor),
    prompt="Route the question.",
    output_mode="full_history",
).compile()


def run(request: Any) -> object:
    """Returns the graph's whole final state, as LangGraph examples do."""
    return app.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )


def run_full_history(request: Any) -> object:
    return full_history_app.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
