"""pydantic-ai delegation with a retried tool, for the per-agent figures by hand: `coordinator` looks
a topic up, then delegates to `math_agent` (its `ask_math` tool) and to `writer` (`ask_writer`).
`math_agent`'s `add` raises `ModelRetry` on a negative number: its first call fails (an ERROR
observation), the model calls it again rightly. `writer` calls no tool; `auditor` never runs.
Scripted `FunctionModel`s, which report usage."""

from __future__ import annotations

import asyncio
from typing import Any

from langfuse import get_client
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

AGENT_TOOLS = {
    "coordinator": ["lookup", "ask_math", "ask_writer"],
    "math_agent": ["add"],
    "writer": [],
    "auditor": ["audit"],
}
langfuse = get_client()
Agent.instrument_all()


def _returned(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def _coordinate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    done = {part.tool_name for part in _returned(messages)}
    for name, arguments in (
        ("lookup", {"topic": "sums"}),
        ("ask_math", {"question": "Add 2 and 3."}),
        ("ask_writer", {"text": "Write the answer up."}),
    ):
        if name not in done:
            return ModelResponse(parts=[ToolCallPart(name, arguments)])
    return ModelResponse(parts=[TextPart("Done.")])


def _calculate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls = sum(1 for m in messages if isinstance(m, ModelResponse))
    if calls == 0:
        return ModelResponse(parts=[ToolCallPart("add", {"a": 2, "b": -3}, tool_call_id="m1")])
    if calls == 1:  # told to retry
        return ModelResponse(parts=[ToolCallPart("add", {"a": 2, "b": 3}, tool_call_id="m2")])
    return ModelResponse(parts=[TextPart("5")])


def _write(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("The sum is 5.")])


math_agent = Agent(FunctionModel(_calculate), name="math_agent")
writer = Agent(FunctionModel(_write), name="writer")
auditor = Agent(FunctionModel(_write), name="auditor")
coordinator = Agent(FunctionModel(_coordinate), name="coordinator")


@math_agent.tool_plain(retries=2)
def add(a: int, b: int) -> int:
    """Add two non-negative integers."""
    if b < 0:
        raise ModelRetry("b must not be negative")
    return a + b


@coordinator.tool_plain
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: numbers"


@coordinator.tool
async def ask_math(ctx: RunContext[None], question: str) -> Any:
    """Ask the math agent."""
    return (await math_agent.run(question, usage=ctx.usage)).output


@coordinator.tool
async def ask_writer(ctx: RunContext[None], text: str) -> Any:
    """Ask the writer."""
    return (await writer.run(text, usage=ctx.usage)).output


def run(request: Any) -> object:
    return asyncio.run(coordinator.run(request.input)).output
