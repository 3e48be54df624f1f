"""langgraph-supervisor over two `create_agent` workers, traced with Langfuse's CallbackHandler
(the one the run hands a target as `request.callbacks`):
`research_expert` searches (rightly), then `math_expert` makes the question's tool misuse
(`misuse.faulty_call`). The scripted models bind tools as real chat models do, so the handler records
their definitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph_supervisor import create_supervisor

from tests.frameworks.systems.misuse import faulty_call
from tests.frameworks.systems.scripted import ScriptedChat, call, question

AGENT_TOOLS = {"research_expert": ["web_search"], "math_expert": ["add"]}


class ToolChat(ScriptedChat):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # as ChatOpenAI does
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


@tool
def web_search(query: str) -> str:
    """Search the web."""
    return "Combined headcount of the FAANG companies in 2024: 1,977,586 employees."


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _answered(messages: Sequence[BaseMessage], call_id: str) -> bool:
    return any(isinstance(m, ToolMessage) and m.tool_call_id == call_id for m in messages)


def _research(messages: Sequence[BaseMessage]) -> AIMessage:
    if _answered(messages, "r1"):
        return AIMessage(content="Found the headcount.")
    return call("web_search", "r1", query="faang headcount")


def _math(messages: Sequence[BaseMessage]) -> AIMessage:
    if _answered(messages, "m1"):
        return AIMessage(content="The sum is done.")
    name, args = faulty_call(question(messages))
    return call(name, "m1", **args)


def _supervisor(messages: Sequence[BaseMessage]) -> AIMessage:
    back = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name == "transfer_back_to_supervisor")
    if back == 0:
        return call("transfer_to_research_expert", "h1")
    if back == 1:
        return call("transfer_to_math_expert", "h2")
    return AIMessage(content="Answer: done.")


research_agent = create_agent(
    model=ToolChat(script=_research), tools=[web_search], name="research_expert", system_prompt="Research."
)
math_agent = create_agent(  # the framework gives it web_search too; the team's declaration does not
    model=ToolChat(script=_math), tools=[add, web_search], name="math_expert", system_prompt="Do math."
)
app = create_supervisor(
    [research_agent, math_agent], model=ToolChat(script=_supervisor), prompt="Route the question."
).compile()


def run(text: str, callbacks: list[Any]) -> object:
    return app.invoke({"messages": [{"role": "user", "content": text}]}, config={"callbacks": callbacks})
