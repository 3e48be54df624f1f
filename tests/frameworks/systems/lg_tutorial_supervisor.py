"""LangGraph's multi-agent supervisor tutorial, built as its docs build it: a `supervisor` node asks the
model for a structured `Router` choice (`with_structured_output`) and routes with `Command(goto=...)`,
writing no message; the `researcher` and `coder` nodes each run a prebuilt agent and return its last
message as `HumanMessage(content=..., name=<node>)`; traced with a CallbackHandler made at import.
The graph's whole final state is the target's answer, as in the tutorial."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command

from tests.frameworks.systems.scripted import ScriptedChat, call, tool_results

langfuse_handler = CallbackHandler()

members = ["researcher", "coder"]
SUPERVISOR_PROMPT = (
    "You are a supervisor tasked with managing a conversation between the following workers: "
    f"{members}. Given the following user request, respond with the worker to act next. When finished, "
    "respond with FINISH."
)
RESEARCHER_PROMPT = "You are a researcher. DO NOT do any math."


class Router(TypedDict):
    """Worker to route to next. If no workers needed, route to FINISH."""

    next: Literal["researcher", "coder", "FINISH"]


@tool
def tavily_search(query: str) -> str:
    """Search the web."""
    return "GDP 2024: New York 2.3 trillion USD, California 3.9 trillion USD."


@tool
def python_repl_tool(code: str) -> str:
    """Execute python code and return what it prints."""
    return "3.1"


def _system(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")


def _supervise(messages: Sequence[BaseMessage]) -> AIMessage:
    done = {m.name for m in messages if isinstance(m, HumanMessage) and m.name in members}
    choice = next((member for member in members if member not in done), "FINISH")
    return AIMessage(content="", tool_calls=[{"name": "Router", "args": {"next": choice}, "id": "r1"}])


def _research(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "tavily_search")
    return AIMessage(content=found[-1]) if found else call("tavily_search", "s1", query="GDP NY CA")


def _code(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "python_repl_tool")
    if found:
        return AIMessage(content=f"The average GDP of New York and California is {found[-1]} trillion USD.")
    return call("python_repl_tool", "p1", code="print((2.3 + 3.9) / 2)")


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    """One model for all, as in the tutorial: who is asking shows in the system prompt."""
    system = _system(messages)
    if system.startswith("You are a supervisor"):
        return _supervise(messages)
    return _research(messages) if system == RESEARCHER_PROMPT else _code(messages)


llm = ScriptedChat(script=_script)


class State(MessagesState):
    next: str


def supervisor_node(state: State) -> Command[Literal["researcher", "coder", "__end__"]]:
    messages = [{"role": "system", "content": SUPERVISOR_PROMPT}, *state["messages"]]
    response = llm.with_structured_output(Router).invoke(messages)
    goto = response["next"]  # type: ignore[index]
    if goto == "FINISH":
        goto = END
    return Command(goto=goto, update={"next": goto})


research_agent = create_react_agent(llm, tools=[tavily_search], prompt=RESEARCHER_PROMPT)
code_agent = create_react_agent(llm, tools=[python_repl_tool])


def research_node(state: State) -> Command[Literal["supervisor"]]:
    result = research_agent.invoke(state)
    reply = HumanMessage(content=result["messages"][-1].content, name="researcher")
    return Command(update={"messages": [reply]}, goto="supervisor")


def code_node(state: State) -> Command[Literal["supervisor"]]:
    result = code_agent.invoke(state)
    return Command(
        update={"messages": [HumanMessage(content=result["messages"][-1].content, name="coder")]},
        goto="supervisor",
    )


builder = StateGraph(State)
builder.add_edge(START, "supervisor")
builder.add_node("supervisor", supervisor_node)
builder.add_node("researcher", research_node)
builder.add_node("coder", code_node)
graph = builder.compile()


def run(request: Any) -> object:
    return graph.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )
