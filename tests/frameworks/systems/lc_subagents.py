"""LangChain 1.x sub-agents as tools (LangChain's multi-agent docs): an `orchestrator` made with
`create_agent(name=...)` calls tools that invoke `research_agent` and `math_agent`; traced with a
CallbackHandler created at import time and passed to the outer call only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler

from tests.frameworks.systems.scripted import ScriptedChat, call, question, tool_results

langfuse_handler = CallbackHandler()


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return "The Eiffel Tower is 330 m tall."


@tool
def calculator(expression: str) -> str:
    """Evaluate arithmetic."""
    return "42"


def _worker(tool_name: str, **args: Any) -> Any:
    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        found = tool_results(messages, tool_name)
        return AIMessage(content=found[-1]) if found else call(tool_name, "t1", **args)

    return script


research_agent = create_agent(
    ScriptedChat(script=_worker("web_search", query="eiffel")), tools=[web_search], name="research_agent"
)
math_agent = create_agent(
    ScriptedChat(script=_worker("calculator", expression="6*7")), tools=[calculator], name="math_agent"
)


@tool
def research(query: str) -> str:
    """Research a question with the research agent."""
    result = research_agent.invoke({"messages": [{"role": "user", "content": query}]})
    return str(result["messages"][-1].content)


@tool
def compute(query: str) -> str:
    """Compute with the math agent."""
    result = math_agent.invoke({"messages": [{"role": "user", "content": query}]})
    return str(result["messages"][-1].content)


def _orchestrator(messages: Sequence[BaseMessage]) -> AIMessage:
    done = tool_results(messages, "research") + tool_results(messages, "compute")
    if done:
        return AIMessage(content=f"Answer: {done[-1]}")
    asked = question(messages)
    return call("compute", "c1", query=asked) if "compute" in asked else call("research", "r1", query=asked)


orchestrator = create_agent(
    ScriptedChat(script=_orchestrator), tools=[research, compute], name="orchestrator"
)


def run(request: Any) -> object:
    result = orchestrator.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
    return result["messages"][-1].content
