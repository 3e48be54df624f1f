"""A pydantic-ai agent whose model calls three tools in one response (pydantic-ai runs them concurrently,
"parallel tool calls"); instrumented as Langfuse's docs do it, with a scripted `FunctionModel`. The
tools answer at once, so their spans start within microseconds of one another: usually inside one
millisecond, the resolution at which Langfuse stores times."""

from __future__ import annotations

import asyncio
from typing import Any

from langfuse import get_client
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

langfuse = get_client()
Agent.instrument_all()

CALLED = ("zone_time", "weather", "air_quality")  # the model's order: not the alphabet's


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart("; ".join(str(p.content) for p in returned))])
    return ModelResponse(parts=[ToolCallPart(name, {"city": "Paris"}, tool_call_id=name) for name in CALLED])


city_agent = Agent(FunctionModel(_reply), name="city_agent")


@city_agent.tool_plain
async def zone_time(city: str) -> str:
    """The local time in a city."""
    await asyncio.sleep(0.002)  # as a real lookup would: the three calls overlap
    return f"{city}: 14:05"


@city_agent.tool_plain
async def weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(0.002)
    return f"{city}: sunny"


@city_agent.tool_plain
async def air_quality(city: str) -> str:
    """The air quality in a city."""
    await asyncio.sleep(0.002)
    return f"{city}: good"


def run(request: Any) -> object:
    return city_agent.run_sync(request.input).output
