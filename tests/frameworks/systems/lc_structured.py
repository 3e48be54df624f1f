"""LangChain 1.x `create_agent` with a structured response (LangChain's structured output docs): a
`weather_agent` calls `get_weather`, then answers with a `WeatherReport` through `response_format`
(the scripted model has no native structured output, so the agent uses its tool strategy: the model
calls a `WeatherReport` tool and the report lands in the state's `structured_response`); traced with a
CallbackHandler made at import. The target returns the agent's whole final state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from pydantic import BaseModel

from tests.frameworks.systems.scripted import ScriptedChat, call, tool_results

langfuse_handler = CallbackHandler()


class WeatherReport(BaseModel):
    city: str
    temperature_celsius: int
    summary: str


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return "Paris: 21 degrees Celsius, sunny."


def _weather(messages: Sequence[BaseMessage]) -> AIMessage:
    if tool_results(messages, "get_weather"):
        report = {"city": "Paris", "temperature_celsius": 21, "summary": "Sunny and mild"}
        return call("WeatherReport", "w2", **report)
    return call("get_weather", "w1", city="Paris")


weather_agent = create_agent(
    ScriptedChat(script=_weather), tools=[get_weather], response_format=WeatherReport, name="weather_agent"
)


def run(request: Any) -> object:
    return weather_agent.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
