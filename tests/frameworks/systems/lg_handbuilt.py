"""A hand-built LangGraph supervisor (LangGraph's multi-agent tutorial): a `supervisor` node routes with
`Command` to `researcher` or `writer` nodes, each running a LangChain 1.x `create_agent` inside the node
function, and back; traced with a CallbackHandler created at import time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

from tests.frameworks.systems.scripted import ScriptedChat, call, tool_results

langfuse_handler = CallbackHandler()


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return "Text-to-SQL: DIN-SQL reaches 85.3% on Spider."


def _researcher(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "web_search")
    return AIMessage(content=f"Research: {found[-1]}") if found else call("web_search", "s1", query="sql")


def _writer(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(content="A short poem about the sea.")


def _route(messages: Sequence[BaseMessage]) -> AIMessage:
    workers = [m for m in messages if isinstance(m, HumanMessage) and m.name in ("researcher", "writer")]
    if workers:
        return AIMessage(content="FINISH")
    asked = str(messages[-1].content).lower()
    return AIMessage(content="writer" if "poem" in asked else "researcher")


router_model = ScriptedChat(script=_route)
research_agent = create_agent(ScriptedChat(script=_researcher), tools=[web_search])
writer_agent = create_agent(ScriptedChat(script=_writer), tools=[])


def supervisor(state: MessagesState) -> Command[Literal["researcher", "writer", "__end__"]]:
    choice = str(router_model.invoke(state["messages"]).content)
    return Command(goto="__end__" if choice == "FINISH" else choice)


def researcher(state: MessagesState) -> Command[Literal["supervisor"]]:
    result = research_agent.invoke(state)
    reply = HumanMessage(content=result["messages"][-1].content, name="researcher")
    return Command(update={"messages": [reply]}, goto="supervisor")


def writer(state: MessagesState) -> Command[Literal["supervisor"]]:
    result = writer_agent.invoke(state)
    reply = HumanMessage(content=result["messages"][-1].content, name="writer")
    return Command(update={"messages": [reply]}, goto="supervisor")


builder = StateGraph(MessagesState)
builder.add_node("supervisor", supervisor)
builder.add_node("researcher", researcher)
builder.add_node("writer", writer)
builder.add_edge(START, "supervisor")
graph = builder.compile()


def run(request: Any) -> object:
    return graph.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
