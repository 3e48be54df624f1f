"""LangChain 1.x `create_agent` with a guardrail middleware (LangChain's middleware docs): a
`before_agent` hook that ends the run at once, with a refusal, when the request is off-topic; otherwise
`support_agent` looks the order up with its tool. Run alone, or as a sub-agent an `orchestrator` calls
from a tool (LangChain's multi-agent docs). Traced with a CallbackHandler made at import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.runtime import Runtime

from tests.frameworks.systems.scripted import ScriptedChat, call, question, tool_results

langfuse_handler = CallbackHandler()


class OnTopicGuard(AgentMiddleware):  # type: ignore[type-arg]
    """Ends the run before the model is called when the request is not about an order."""

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if "order" in str(state["messages"][-1].content).lower():
            return None
        return {"messages": [AIMessage(content="I can only help with orders.")], "jump_to": "end"}


@tool
def lookup_order(order_id: str) -> str:
    """An order's status."""
    return "Order 42 shipped yesterday."


def _support(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "lookup_order")
    return AIMessage(content=found[-1]) if found else call("lookup_order", "o1", order_id="42")


support_agent = create_agent(
    ScriptedChat(script=_support), tools=[lookup_order], middleware=[OnTopicGuard()], name="support_agent"
)


def run(request: Any) -> object:
    result = support_agent.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
    return result["messages"][-1].content


@tool
def ask_support(query: str) -> str:
    """Ask the support agent."""
    result = support_agent.invoke({"messages": [{"role": "user", "content": query}]})
    return str(result["messages"][-1].content)


def _orchestrator(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "ask_support")
    return (
        AIMessage(content=f"Support says: {found[-1]}")
        if found
        else call("ask_support", "s1", query=question(messages))
    )


orchestrator = create_agent(ScriptedChat(script=_orchestrator), tools=[ask_support], name="orchestrator")


def run_as_subagent(request: Any) -> object:
    result = orchestrator.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
    return result["messages"][-1].content
