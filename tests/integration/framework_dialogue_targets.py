"""Dialogue targets on real frameworks, built the way each framework's docs build a multi-turn
conversation, with scripted models: a LangGraph prebuilt agent whose memory is its checkpointer (keyed
by the dialogue's session id) and which returns the graph's whole final state, as LangGraph's examples
do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

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
