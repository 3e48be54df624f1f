"""The OpenAI Agents SDK with OpenInference: a triage agent detects the language (rightly), then hands
off to `Math agent`, which makes the question's tool misuse (`misuse.faulty_call`). Scripted models."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
from langfuse import get_client
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from tests.frameworks.systems.misuse import faulty_call

AGENT_TOOLS = {"Triage agent": ["detect_language"], "Math agent": ["add"]}
langfuse = get_client()
OpenAIAgentsInstrumentor().instrument()


def _answered(items: Any, call_id: str) -> bool:
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" and i.get("call_id") == call_id
        for i in items
    )


def _question(items: Any) -> str:
    return items if isinstance(items, str) else str(items[0].get("content", ""))


def _call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", name=name, arguments=json.dumps(args), call_id=call_id
    )


def _message(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        type="message", id="m", role="assistant", status="completed", content=content
    )


class TriageModel(Model):
    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        if not _answered(input, "t1"):
            item: Any = _call("detect_language", {"text": _question(input)}, "t1")
        else:
            item = _call("transfer_to_math_agent", {}, "h1")
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the example runs without streaming")


class MathModel(Model):
    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        if _answered(input, "m1"):
            item: Any = _message("The sum is done.")
        else:
            name, arguments = faulty_call(_question(input))
            item = _call(name, arguments, "m1")
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the example runs without streaming")


@function_tool
def detect_language(text: str) -> str:
    """The language of a text."""
    return "English"


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function_tool
def web_search(query: str) -> str:
    """Search the web."""
    return "5"


math_agent = Agent(name="Math agent", instructions="Do math.", tools=[add, web_search], model=MathModel())
triage_agent = Agent(
    name="Triage agent",
    instructions="Detect the language, then hand off.",
    tools=[detect_language],
    handoffs=[math_agent],
    model=TriageModel(),
)


def run(text: str) -> object:
    # A loop of its own, closed after: run_sync leaves the default loop open (a ResourceWarning later).
    return asyncio.run(Runner.run(triage_agent, text)).final_output
