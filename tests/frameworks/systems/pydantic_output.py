"""A pydantic-ai agent with an output function (pydantic-ai's "Output functions" docs): the model calls
the `get_weather` tool, then hands its answer to `save_report` through the output tool pydantic-ai
makes (`final_result`); instrumented as Langfuse's docs do it, with a scripted `FunctionModel`."""

from __future__ import annotations

from typing import Any

from langfuse import get_client
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

langfuse = get_client()
Agent.instrument_all()


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart) and last.tool_name == "get_weather":
        output_tool = info.output_tools[0].name
        return ModelResponse(parts=[ToolCallPart(output_tool, {"city": "Paris", "forecast": last.content})])
    return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"})])


def save_report(city: str, forecast: str) -> str:
    """Save the weather report of a city."""
    return f"{city}: {forecast}"


weather_agent = Agent(FunctionModel(_reply), name="weather_agent", output_type=save_report)


@weather_agent.tool_plain
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def run(request: Any) -> object:
    return weather_agent.run_sync(request.input).output
