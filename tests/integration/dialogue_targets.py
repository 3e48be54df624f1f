"""Dialogue targets for the dialogue tests: a plain function and a stateful LangGraph graph (a real
checkpointer keyed by the request's session id, a scripted model)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from evaluator.run import Reply, TargetRequest
from tests.frameworks.systems.scripted import ScriptedChat

calls: list[dict[str, Any]] = []  # what each call received, in call order
release = threading.Event()  # what a hanging turn waits for
books = True  # False: the plain target never books (a regression for compare)
_calls_lock = threading.Lock()

DAYS = ("monday", "saturday", "sunday")


def _understood(text: str) -> dict[str, str]:
    """The hotel slots a user message gives (a scripted understanding, enough for the tests)."""
    words = text.lower().replace(",", " ").split()
    slots = {"bookday": next(day for day in DAYS if day in words)} if set(DAYS) & set(words) else {}
    if "people" in words:
        slots["bookpeople"] = words[words.index("people") - 1]
    if "acorn" in words:
        slots["name"] = "acorn guest house"
    if "nights" in words:
        slots["bookstay"] = words[words.index("nights") - 1]
    return slots


def plain(request: TargetRequest) -> object:
    """A plain function: turn 0 reports its state through `evaluator.Reply`, later turns through the
    metadata of an agent observation; 'crash' raises. It remembers nothing: its state is rebuilt from
    `request.history` each turn."""
    with _calls_lock:
        calls.append(
            {
                "input": request.input,
                "turn": request.turn,
                "session_id": request.session_id,
                "history": [dict(m) for m in request.history],
            }
        )
    if request.input == "crash":
        raise RuntimeError("the concierge crashed")
    if request.input == "hang":
        release.wait(30)
    slots: dict[str, str] = {}
    for message in [*request.history, {"role": "user", "content": request.input}]:
        if message["role"] == "user":
            slots |= _understood(message["content"])
    ready = {"name", "bookday", "bookpeople", "bookstay"} <= set(slots)
    action = "book" if books and "book it" in request.input.lower() else "request"
    state = {"intent": "book_hotel", "slots": {"hotel": slots}, "action": action}
    reply = f"Booked {slots.get('name', 'a hotel')}." if action == "book" else "How many nights?"
    if request.turn == 0:
        return Reply(reply, state=state)
    with request.langfuse.start_as_current_observation(as_type="agent", name="concierge") as agent:
        agent.update(metadata={**state, "domain": "hotel", "ready": ready})
    return reply


class GraphState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]
    slots: dict[str, str]


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    """The scripted model: the slots the latest user message gives, as JSON."""
    latest = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
    return AIMessage(content=json.dumps(_understood(latest)))


_model = ScriptedChat(script=_script)


def _track(state: GraphState) -> dict[str, Any]:
    found = json.loads(str(_model.invoke(state["messages"]).content))
    slots = {**state.get("slots", {}), **found}
    missing = [s for s in ("bookday", "bookpeople", "name") if s not in slots]
    reply = f"Which {missing[0]}?" if missing else f"Booked {slots['name']}."
    return {"slots": slots, "messages": [AIMessage(content=reply)]}


_builder = StateGraph(GraphState)
_builder.add_node("track", _track)
_builder.add_edge(START, "track")
graph = _builder.compile(checkpointer=InMemorySaver())


def stateful(request: TargetRequest) -> str:
    """The LangGraph target: only the new message goes in; the graph's memory of the earlier turns is
    its checkpointer's, keyed by the dialogue's session id. Its state goes on its agent observation
    under the name `belief_state` (renamed back by the target's `state_keys`)."""
    config = {"configurable": {"thread_id": request.session_id}, "callbacks": request.callbacks}
    with request.langfuse.start_as_current_observation(as_type="agent", name="concierge") as agent:
        result = graph.invoke({"messages": [HumanMessage(content=request.input)]}, config=config)
        action = "book" if "name" in result["slots"] else "request"
        agent.update(
            metadata={"belief_state": {"hotel": result["slots"]}, "domain": "hotel", "action": action}
        )
    return str(result["messages"][-1].content)


@tool
def search_hotels(area: str) -> str:
    """Search the hotels of an area."""
    return json.dumps([{"name": "Acorn Guest House", "area": area}])


def searcher(request: TargetRequest) -> str:
    """Searches once, then names the hotel the search returned and one it did not (an invented one on
    turn 0; on turn 1, with no search, a name from the earlier turn)."""
    if request.turn == 0:
        search_hotels.invoke({"area": "north"}, config={"callbacks": request.callbacks})
        return "Try the Acorn Guest House or the Hamilton Lodge."
    return "The Acorn Guest House it is."


@tool
def list_hotels(area: str) -> dict[str, str]:
    """List the hotels of an area, one a line (as a search tool prints a table)."""
    return {"content": f"1 hotel matches.\nAcorn Guest House | {area} | cheap"}


def lister(request: TargetRequest) -> str:
    """Names the hotel its tool listed on a line of its own (the tool output, written as JSON, holds it
    after an escaped newline)."""
    list_hotels.invoke({"area": "north"}, config={"callbacks": request.callbacks})
    return "The Acorn Guest House is in the north."
