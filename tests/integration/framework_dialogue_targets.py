"""Dialogue targets on real frameworks, built the way each framework's docs build a multi-turn
conversation, with scripted models: a LangGraph prebuilt agent whose memory is its checkpointer (keyed
by the dialogue's session id) and which returns the graph's whole final state, as LangGraph's examples
do; and an OpenAI Agents SDK triage desk that continues each turn as the SDK's docs do, from
`result.to_input_list()` with `result.last_agent` (instrumented as Langfuse's docs do it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langfuse import get_client
from langgraph.checkpoint.memory import InMemorySaver
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

from evaluator.run import TargetRequest
from tests.frameworks.systems.scripted import ScriptedChat, call

histories: list[tuple[Mapping[str, str], ...]] = []  # what each call of `concierge` received, in order


def _latest(messages: Sequence[BaseMessage]) -> tuple[str, list[BaseMessage]]:
    """The latest user message and the messages since it (this turn's)."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    return str(messages[start].content).lower(), list(messages[start:])


@tool
def search_hotels(area: str) -> str:
    """Search the hotels of an area."""
    return "Acorn Guest House (phone 01223 356555); Hamilton Lodge"


def _concierge(messages: Sequence[BaseMessage]) -> AIMessage:
    """Searches when asked for hotels (then names both, not the phone number); else answers alone."""
    asked, turn = _latest(messages)
    if "hotels" not in asked:
        return AIMessage(content="The Acorn Guest House is nicer.")
    if any(isinstance(m, ToolMessage) for m in turn):
        return AIMessage(content="Found: Acorn Guest House and Hamilton Lodge.")
    return call("search_hotels", f"s{len(messages)}", area="north")


_agent = create_agent(
    ScriptedChat(script=_concierge), tools=[search_hotels], checkpointer=InMemorySaver(), name="concierge"
)


def concierge(request: TargetRequest) -> object:
    histories.append(request.history)
    config = {"configurable": {"thread_id": request.session_id}, "callbacks": request.callbacks}
    return _agent.invoke({"messages": [{"role": "user", "content": request.input}]}, config=config)


langfuse = get_client()
OpenAIAgentsInstrumentor().instrument()


class _Desk(Model):
    """The triage agent hands every request to refunds; the refund agent looks an order up when the
    latest user message names one, else answers alone."""

    def __init__(self, role: str) -> None:
        self._role = role

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        items = [input] if isinstance(input, str) else list(input)
        start = max(i for i, item in enumerate(items) if isinstance(item, str) or item.get("role") == "user")
        turn = items[start:]
        asked = str(turn[0] if isinstance(turn[0], str) else turn[0].get("content")).lower()
        looked_up = any(
            isinstance(item, dict)
            and item.get("type") == "function_call"
            and item.get("name") == "lookup_order"
            for item in turn
        )
        if self._role == "triage":
            return _response(_call("transfer_to_refund_agent", f"h{len(items)}"))
        if "order" in asked and not looked_up:
            return _response(_call("lookup_order", f"l{len(items)}", order_id="42"))
        return _response(_message("Refund started." if looked_up else "It arrives in 5 days."))

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the desk runs without streaming")


def _call(name: str, call_id: str, **args: Any) -> ResponseFunctionToolCall:
    arguments = json.dumps(args)
    return ResponseFunctionToolCall(type="function_call", name=name, arguments=arguments, call_id=call_id)


def _message(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        type="message", id="m1", role="assistant", status="completed", content=content
    )


def _response(item: Any) -> ModelResponse:
    return ModelResponse(output=[item], usage=Usage(), response_id=None)


@function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return "a kettle, delivered"


refund_agent = Agent(
    name="Refund agent", instructions="Refunds.", tools=[lookup_order], model=_Desk("refund")
)
triage_agent = Agent(
    name="Triage agent", instructions="Route.", handoffs=[refund_agent], model=_Desk("triage")
)
_conversations: dict[str, tuple[Agent[Any], list[Any]]] = {}


def refunds(request: TargetRequest) -> object:
    """The SDK's multi-turn loop: the next turn starts at the agent that answered the last one."""
    agent, items = _conversations.get(request.session_id, (triage_agent, []))
    # A loop of its own, closed after: run_sync leaves the default loop open (a ResourceWarning later).
    result = asyncio.run(Runner.run(agent, [*items, {"role": "user", "content": request.input}]))
    _conversations[request.session_id] = (result.last_agent, result.to_input_list())
    return result.final_output
