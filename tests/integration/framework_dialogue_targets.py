"""Dialogue targets on real frameworks, built the way each framework's docs build a multi-turn
conversation, with scripted models: a LangGraph prebuilt agent whose memory is its checkpointer (keyed
by the dialogue's session id) and which returns the graph's whole final state, as LangGraph's examples
do; the same agent pausing at an `interrupt()` in one turn and resumed with `Command(resume=...)` in the
next; and an OpenAI Agents SDK triage desk that continues each turn as the SDK's docs do, from
`result.to_input_list()` with `result.last_agent` (instrumented as Langfuse's docs do it); and a
pydantic-ai agent given `message_history=result.all_messages()` each turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import Agent, Model, Runner, function_tool
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langfuse import get_client
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from openai.types.responses import ResponseFunctionToolCall
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    ModelMessage,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.messages import ModelResponse as PydanticResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from evaluator.run import TargetRequest
from tests.frameworks.systems.agents_sdk import model_response, reply_message
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


@tool
def book_hotel(hotel: str) -> str:
    """Book a hotel, once the user approves."""
    return f"Booked {hotel}." if interrupt(f"Book {hotel}?") == "yes" else "Booking cancelled."


def _concierge(messages: Sequence[BaseMessage]) -> AIMessage:
    """Books when asked to (its answer the tool's), searches when asked for hotels (then names both,
    not the phone number); else answers alone."""
    asked, turn = _latest(messages)
    if "book" in asked:
        booked = [m for m in turn if isinstance(m, ToolMessage)]
        return (
            AIMessage(content=str(booked[-1].content)) if booked else call("book_hotel", "b1", hotel="Acorn")
        )
    if "hotels" not in asked:
        return AIMessage(content="The Acorn Guest House is nicer.")
    if any(isinstance(m, ToolMessage) for m in turn):
        return AIMessage(content="Found: Acorn Guest House and Hamilton Lodge.")
    return call("search_hotels", f"s{len(messages)}", area="north")


_agent = create_agent(
    ScriptedChat(script=_concierge),
    tools=[search_hotels, book_hotel],
    checkpointer=InMemorySaver(),
    name="concierge",
)


def concierge(request: TargetRequest) -> object:
    histories.append(request.history)
    config = {"configurable": {"thread_id": request.session_id}, "callbacks": request.callbacks}
    return _agent.invoke({"messages": [{"role": "user", "content": request.input}]}, config=config)


def approving(request: TargetRequest) -> object:
    """The human-in-the-loop turn: a "yes" or "no" resumes the paused graph; a paused graph answers
    with its question."""
    config = {"configurable": {"thread_id": request.session_id}, "callbacks": request.callbacks}
    answer = request.input.lower()
    given = Command(resume=answer) if answer in ("yes", "no") else {"messages": [("user", request.input)]}
    state = _agent.invoke(given, config=config)  # type: ignore[arg-type]
    paused = state.get("__interrupt__")
    return str(paused[0].value) if paused else state["messages"][-1].content


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
            return model_response(_call("transfer_to_refund_agent", f"h{len(items)}"))
        if "order" in asked and not looked_up:
            return model_response(_call("lookup_order", f"l{len(items)}", order_id="42"))
        return model_response(reply_message("Refund started." if looked_up else "It arrives in 5 days."))

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the desk runs without streaming")


def _call(name: str, call_id: str, **args: Any) -> ResponseFunctionToolCall:
    arguments = json.dumps(args)
    return ResponseFunctionToolCall(type="function_call", name=name, arguments=arguments, call_id=call_id)


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


PydanticAgent.instrument_all()


def _helper(messages: list[ModelMessage], info: AgentInfo) -> PydanticResponse:
    """Calls get_weather or joke_factory as the latest user message asks, once, then answers with
    what it returned; thanks needs no tool."""
    parts = [part for message in messages for part in message.parts]
    start = max(i for i, part in enumerate(parts) if isinstance(part, UserPromptPart))
    asked, turn = str(parts[start].content).lower(), parts[start:]
    returned = [part for part in turn if isinstance(part, ToolReturnPart)]
    if returned:
        return PydanticResponse(parts=[TextPart(f"Here: {returned[-1].content}")])
    if "weather" in asked:
        return PydanticResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="w")])
    if "joke" in asked:
        return PydanticResponse(parts=[ToolCallPart("joke_factory", {"count": 1}, tool_call_id="j")])
    return PydanticResponse(parts=[TextPart("You're welcome.")])


def _jokes(messages: list[ModelMessage], info: AgentInfo) -> PydanticResponse:
    return PydanticResponse(parts=[TextPart("Why did the chicken cross the road?")])


joke_agent = PydanticAgent(FunctionModel(_jokes), name="joke_agent")
helper_agent = PydanticAgent(FunctionModel(_helper), name="helper")


@helper_agent.tool_plain
def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}"


@helper_agent.tool
async def joke_factory(ctx: RunContext[None], count: int) -> str:
    """Jokes, from the joke agent."""
    return (await joke_agent.run(f"{count} joke", usage=ctx.usage)).output


_histories: dict[str, list[ModelMessage]] = {}


def helper(request: TargetRequest) -> object:
    """pydantic-ai's multi-turn pattern: the earlier turns' messages go back in as the history."""
    history = _histories.get(request.session_id)
    # A loop of its own, closed after, as `refunds` runs its agents (run_sync leaves one open).
    result = asyncio.run(helper_agent.run(request.input, message_history=history))
    _histories[request.session_id] = result.all_messages()
    return result.output
