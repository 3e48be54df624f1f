"""pydantic-ai delegation that coordinates badly, on purpose: `coordinator` looks a topic up, then
delegates to `researcher` through `ask_research(question)`, whose body drops the question and runs the
researcher on a fixed prompt (context lost across the hand-off); the researcher then looks the same
topic up again with the same arguments (duplicated work). Scripted `FunctionModel`s."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

TOPIC = {"topic": "text-to-sql benchmarks"}
FIXED_PROMPT = "Carry on."
Agent.instrument_all()


def _returned(messages: list[ModelMessage], tool: str) -> bool:
    return any(
        isinstance(part, ToolReturnPart) and part.tool_name == tool
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def _coordinate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not _returned(messages, "lookup"):
        return ModelResponse(parts=[ToolCallPart("lookup", dict(TOPIC))])
    if not _returned(messages, "ask_research"):
        return ModelResponse(
            parts=[ToolCallPart("ask_research", {"question": "Which benchmark leads text-to-SQL?"})]
        )
    return ModelResponse(parts=[TextPart("Done.")])


def _research(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not _returned(messages, "lookup"):
        return ModelResponse(parts=[ToolCallPart("lookup", dict(TOPIC))])
    return ModelResponse(parts=[TextPart("Spider and BIRD.")])


researcher = Agent(FunctionModel(_research), name="researcher")
coordinator = Agent(FunctionModel(_coordinate), name="coordinator")


@coordinator.tool_plain(name="lookup")
def coordinator_lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: Spider, BIRD"


@researcher.tool_plain(name="lookup")
def researcher_lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: Spider, BIRD"


@coordinator.tool
async def ask_research(ctx: RunContext[None], question: str) -> Any:
    """Ask the researcher."""
    return (await researcher.run(FIXED_PROMPT, usage=ctx.usage)).output  # the question is dropped


def run(text: str) -> object:
    return asyncio.run(coordinator.run(text)).output
