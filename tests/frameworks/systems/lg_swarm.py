"""LangGraph swarm (langgraph-swarm's README): `alice` (adds numbers) and `bob` (talks like a pirate)
hand over to each other with `create_handoff_tool`; traced with a CallbackHandler made at import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_swarm import create_handoff_tool, create_swarm

from tests.frameworks.systems.scripted import ScriptedChat, call, question, tool_results

langfuse_handler = CallbackHandler()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _alice(messages: Sequence[BaseMessage]) -> AIMessage:
    if "pirate" in question(messages).lower():
        return call("transfer_to_bob", "h1")
    found = tool_results(messages, "add")
    return AIMessage(content=f"The sum is {found[-1]}.") if found else call("add", "a1", a=2, b=3)


def _bob(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(content="Arr, ahoy matey!")


alice = create_agent(
    ScriptedChat(script=_alice),
    tools=[add, create_handoff_tool(agent_name="bob", description="Transfer to Bob, the pirate.")],
    name="alice",
)
bob = create_agent(
    ScriptedChat(script=_bob),
    tools=[create_handoff_tool(agent_name="alice", description="Transfer to Alice, the math expert.")],
    name="bob",
)
app = create_swarm([alice, bob], default_active_agent="alice").compile(checkpointer=InMemorySaver())


def run(request: Any) -> object:
    config = {"configurable": {"thread_id": request.scenario_id}, "callbacks": [langfuse_handler]}
    state = app.invoke({"messages": [{"role": "user", "content": request.input}]}, config=config)
    return next(m.content for m in reversed(state["messages"]) if not isinstance(m, ToolMessage))


def run_state(request: Any) -> object:
    """The swarm's whole final state, as langgraph-swarm's README prints it."""
    config = {"configurable": {"thread_id": request.scenario_id}, "callbacks": [langfuse_handler]}
    return app.invoke({"messages": [{"role": "user", "content": request.input}]}, config=config)
