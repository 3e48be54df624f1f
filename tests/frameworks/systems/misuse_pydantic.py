"""pydantic-ai delegation (Langfuse's documented setup): `coordinator` looks a topic up (rightly),
then delegates to `math_agent` through its `ask_math` tool; `math_agent` makes the question's tool
misuse (`misuse.faulty_call`). Scripted `FunctionModel`s."""

from __future__ import annotations

import asyncio
from typing import Any

from langfuse import get_client
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.frameworks.systems.misuse import faulty_call

AGENT_TOOLS = {"coordinator": ["lookup"], "math_agent": ["add"]}
langfuse = get_client()
Agent.instrument_all()


def _returned(messages: list[ModelMessage], tool: str) -> bool:
    return any(
        isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name == tool
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def _prompt(messages: list[ModelMessage]) -> str:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return next(str(p.content) for p in first.parts if isinstance(p, UserPromptPart))


def _coordinate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not _returned(messages, "lookup"):
        return ModelResponse(parts=[ToolCallPart("lookup", {"topic": "arithmetic"})])
    if not _returned(messages, "ask_math"):
        return ModelResponse(parts=[ToolCallPart("ask_math", {"question": _prompt(messages)})])
    return ModelResponse(parts=[TextPart("Done.")])


def _calculate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    name, arguments = faulty_call(_prompt(messages))
    if _returned(messages, name):
        return ModelResponse(parts=[TextPart("The sum is done.")])
    return ModelResponse(parts=[ToolCallPart(name, arguments)])


math_agent = Agent(FunctionModel(_calculate), name="math_agent")
coordinator = Agent(FunctionModel(_coordinate), name="coordinator")


@math_agent.tool_plain
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@math_agent.tool_plain
def web_search(query: str) -> str:
    """Search the web."""
    return "5"


@coordinator.tool_plain
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: numbers"


@coordinator.tool
async def ask_math(ctx: RunContext[None], question: str) -> Any:
    """Ask the math agent."""
    return (await math_agent.run(question, usage=ctx.usage)).output


def run(text: str) -> object:
    # A loop of its own: run_sync would reuse a loop another framework (the Agents SDK) has wound down.
    return asyncio.run(coordinator.run(text)).output
