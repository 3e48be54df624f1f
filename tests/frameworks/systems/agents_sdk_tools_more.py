"""The OpenAI Agents SDK with OpenInference, for the per-agent figures by hand: `Triage agent` detects
the language, then hands off to `Math agent` (`Billing agent`, also a hand-off, never runs). The math
agent's model calls `add` and `lookup` in one response (parallel tool calls), then `fragile` (which
raises: the SDK reports the failure to the model), `now` with no arguments, `add` without `b`, and
`Research agent` as a tool (`agent.as_tool`). The research agent has a `lookup` of its own (the same
name, another schema: `query`, `limit`) and passes a string for `limit`. Scripted models."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
from langfuse import get_client
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

AGENT_TOOLS = {
    "Triage agent": ["detect_language"],
    "Math agent": ["add", "lookup", "fragile", "now"],
    "Research agent": ["lookup"],
    "Billing agent": ["refund"],
}
langfuse = get_client()
OpenAIAgentsInstrumentor().instrument()
Step = list[tuple[str, dict[str, Any], str]]  # one response's tool calls: (tool, arguments, call id)


def _answered(items: Any, call_id: str) -> bool:
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" and i.get("call_id") == call_id
        for i in items
    )


class ScriptedModel(Model):
    """Each response makes the first step's calls that are not answered yet, then says it is done."""

    def __init__(self, steps: list[Step]) -> None:
        self._steps = steps

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        step = next((s for s in self._steps if not all(_answered(input, c) for _, _, c in s)), None)
        output: list[Any] = [
            ResponseFunctionToolCall(type="function_call", name=n, arguments=json.dumps(a), call_id=c)
            for n, a, c in step or ()
        ]
        if step is None:
            text = ResponseOutputText(type="output_text", text="Done.", annotations=[])
            output = [
                ResponseOutputMessage(
                    type="message", id="m", role="assistant", status="completed", content=[text]
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

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
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: facts"


@function_tool(name_override="lookup")
def lookup_papers(query: str, limit: int) -> str:
    """Look papers up."""
    return f"{limit} papers on {query}"


@function_tool
def fragile(x: int) -> str:
    """A tool whose backend is down."""
    raise RuntimeError("backend down")


@function_tool
def now() -> str:
    """The time."""
    return "12:00"


research_agent = Agent(
    name="Research agent",
    instructions="Find papers.",
    tools=[lookup_papers],
    model=ScriptedModel([[("lookup", {"query": "BIRD", "limit": "five"}, "r1")]]),
)
billing_agent = Agent(name="Billing agent", instructions="Refund.", model=ScriptedModel([]))
math_agent = Agent(
    name="Math agent",
    instructions="Do math.",
    tools=[add, lookup, fragile, now, research_agent.as_tool(tool_name="ask_research", tool_description="")],
    model=ScriptedModel(
        [
            [("add", {"a": 2, "b": 3}, "m1"), ("lookup", {"topic": "sums"}, "m2")],
            [("fragile", {"x": 1}, "m3")],
            [("now", {}, "m4")],
            [("add", {"a": 1}, "m5")],
            [("ask_research", {"input": "papers on sums"}, "m6")],
        ]
    ),
)
triage_agent = Agent(
    name="Triage agent",
    instructions="Detect the language, then hand off.",
    tools=[detect_language],
    handoffs=[math_agent, billing_agent],
    model=ScriptedModel(
        [[("detect_language", {"text": "2 + 3"}, "t1")], [("transfer_to_math_agent", {}, "h1")]]
    ),
)


def run(request: Any) -> object:
    return asyncio.run(Runner.run(triage_agent, request.input)).final_output
