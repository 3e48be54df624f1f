"""LangGraph workflows from LangGraph's "Workflows and agents" and Graph API docs, traced with a
CallbackHandler created at import time, with scripted models:

- routing: a `router` start node asks the model which specialist fits and routes there with
  `Command(goto=...)`; the specialist (`researcher` or `mathematician`, hand-built nodes calling a
  model) answers and the graph ends;
- the same router routing with a conditional edge (`add_conditional_edges`) instead of a `Command`;
- a pipeline: `drafter` then `editor`, plain edges, each calling the model: no stage is a router;
- a graph with a tool loop of its own: a `triage` node calling a model, then a `desk` node whose model
  has the tools bound, looping through a `ToolNode` added as `tools` (`tools_condition`'s default
  target) until it answers: a hand-built graph, not a prebuilt agent, though it has a `tools` node;
- Plan-and-Execute: `planner`, then a node named `agent` running a prebuilt ReAct executor (its
  tool `find_room`), then `replan`: a hand-built graph, so its `agent` node is an agent;
- Agentic RAG: a `ToolNode` added as `retrieve`, whose conditional edge asks a grader model whether
  the documents are relevant: the edge's model call does not make `retrieve` an agent;
- retries: a `fetcher` node with a `RetryPolicy`, whose first attempt fails (a flaky data source)
  before it reaches the model, and whose second attempt calls it;
- the Functional API quickstart: an `@entrypoint` named `agent` whose `@task`s call the model and
  the tools;
- the Functional API's multi-agent pattern: an `@entrypoint` whose `@task`s each run a prebuilt
  agent (`call_travel_advisor`, `call_hotel_advisor`): those tasks are agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.tools import tool
from langfuse.langchain import CallbackHandler
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.types import Command, RetryPolicy

from tests.frameworks.systems.scripted import ScriptedChat, call, question, tool_results

langfuse_handler = CallbackHandler()


def _answer(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(content=f"Answer to: {question(messages)}")


def _route(messages: Sequence[BaseMessage]) -> AIMessage:
    return AIMessage(content="mathematician" if "sum" in question(messages).lower() else "researcher")


router_model = ScriptedChat(script=_route)
specialist_model = ScriptedChat(script=_answer)


def router(state: MessagesState) -> Command[Literal["researcher", "mathematician"]]:
    choice = str(router_model.invoke(state["messages"]).content)
    return Command(goto=choice)


def researcher(state: MessagesState) -> dict[str, Any]:
    return {"messages": [specialist_model.invoke(state["messages"])]}


def mathematician(state: MessagesState) -> dict[str, Any]:
    return {"messages": [specialist_model.invoke(state["messages"])]}


routing = StateGraph(MessagesState)
routing.add_node("router", router)
routing.add_node("researcher", researcher)
routing.add_node("mathematician", mathematician)
routing.add_edge(START, "router")
routing.add_edge("researcher", END)
routing.add_edge("mathematician", END)
routing_graph = routing.compile()


def classify(state: MessagesState) -> dict[str, Any]:
    return {"messages": [router_model.invoke(state["messages"])]}


def chosen(state: MessagesState) -> str:
    return str(state["messages"][-1].content)


conditional = StateGraph(MessagesState)
conditional.add_node("classifier", classify)
conditional.add_node("researcher", researcher)
conditional.add_node("mathematician", mathematician)
conditional.add_edge(START, "classifier")
conditional.add_conditional_edges("classifier", chosen, ["researcher", "mathematician"])
conditional.add_edge("researcher", END)
conditional.add_edge("mathematician", END)
conditional_graph = conditional.compile()

pipeline = StateGraph(MessagesState)
pipeline.add_node("drafter", researcher)
pipeline.add_node("editor", mathematician)
pipeline.add_edge(START, "drafter")
pipeline.add_edge("drafter", "editor")
pipeline.add_edge("editor", END)
pipeline_graph = pipeline.compile()


@tool
def find_room(area: str) -> str:
    """Find a free room in an area of town."""
    return f"acorn guest house ({area})"


def _desk(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "find_room")
    return AIMessage(content=f"Booked {found[-1]}.") if found else call("find_room", "r1", area="north")


desk_model = ScriptedChat(script=_desk)


def triage(state: MessagesState) -> dict[str, Any]:
    return {"messages": [router_model.invoke(state["messages"])]}


def desk(state: MessagesState) -> dict[str, Any]:
    return {"messages": [desk_model.bind_tools([find_room]).invoke(state["messages"])]}


tool_loop = StateGraph(MessagesState)
tool_loop.add_node("triage", triage)
tool_loop.add_node("desk", desk)
tool_loop.add_node("tools", ToolNode([find_room]))
tool_loop.add_edge(START, "triage")
tool_loop.add_edge("triage", "desk")
tool_loop.add_conditional_edges("desk", tools_condition)
tool_loop.add_edge("tools", "desk")
tool_loop_graph = tool_loop.compile()

# Plan-and-Execute (LangGraph's tutorial): a `planner` node, an `agent` node running a prebuilt ReAct
# executor on the plan's step (it calls `find_room`), a `replan` node; a hand-built graph whose node
# named `agent` is an agent, though a prebuilt agent's node has that name too.
plan_model = ScriptedChat(script=lambda _: AIMessage(content="1. find a room in the north"))
executor = create_react_agent(desk_model, tools=[find_room])


def planner(state: MessagesState) -> dict[str, Any]:
    return {"messages": [plan_model.invoke(state["messages"])]}


def execute_step(state: MessagesState) -> dict[str, Any]:
    done = executor.invoke({"messages": [("user", f"Do step 1 of: {state['messages'][-1].content}")]})
    return {"messages": [AIMessage(content=str(done["messages"][-1].content))]}


def replan(state: MessagesState) -> dict[str, Any]:
    return {"messages": [specialist_model.invoke(state["messages"])]}


plan_and_execute = StateGraph(MessagesState)
plan_and_execute.add_node("planner", planner)
plan_and_execute.add_node("agent", execute_step)
plan_and_execute.add_node("replan", replan)
plan_and_execute.add_edge(START, "planner")
plan_and_execute.add_edge("planner", "agent")
plan_and_execute.add_edge("agent", "replan")
plan_and_execute.add_edge("replan", END)
plan_and_execute_graph = plan_and_execute.compile()


# Agentic RAG (LangGraph's tutorial): `generate_query_or_respond` calls the retriever tool, a `ToolNode`
# added as `retrieve` runs it, and `retrieve`'s conditional edge (`grade_documents`) asks a grader model
# whether the documents are relevant: the grader is the edge's, so `retrieve` is no agent.
@tool
def retrieve_blog_posts(query: str) -> str:
    """Search Lilian Weng's blog posts."""
    return "Reward hacking: environment or goal misspecification, and reward tampering."


def _query_or_respond(messages: Sequence[BaseMessage]) -> AIMessage:
    if tool_results(messages, "retrieve_blog_posts"):
        return AIMessage(content="Two types: misspecification and reward tampering.")
    return call("retrieve_blog_posts", "q1", query="reward hacking")


query_model = ScriptedChat(script=_query_or_respond)
grader_model = ScriptedChat(script=lambda _: AIMessage(content="yes"))


def generate_query_or_respond(state: MessagesState) -> dict[str, Any]:
    return {"messages": [query_model.bind_tools([retrieve_blog_posts]).invoke(state["messages"])]}


def grade_documents(state: MessagesState) -> Literal["generate_answer", "rewrite_question"]:
    relevant = grader_model.invoke(state["messages"]).content == "yes"
    return "generate_answer" if relevant else "rewrite_question"


def generate_answer(state: MessagesState) -> dict[str, Any]:
    return {"messages": [query_model.invoke(state["messages"])]}


def rewrite_question(state: MessagesState) -> dict[str, Any]:
    return {"messages": [specialist_model.invoke(state["messages"])]}


agentic_rag = StateGraph(MessagesState)
agentic_rag.add_node("generate_query_or_respond", generate_query_or_respond)
agentic_rag.add_node("retrieve", ToolNode([retrieve_blog_posts]))
agentic_rag.add_node("rewrite_question", rewrite_question)
agentic_rag.add_node("generate_answer", generate_answer)
agentic_rag.add_edge(START, "generate_query_or_respond")
agentic_rag.add_conditional_edges(
    "generate_query_or_respond", tools_condition, {"tools": "retrieve", END: END}
)
agentic_rag.add_conditional_edges("retrieve", grade_documents)
agentic_rag.add_edge("generate_answer", END)
agentic_rag.add_edge("rewrite_question", "generate_query_or_respond")
agentic_rag_graph = agentic_rag.compile()

_attempts: dict[str, int] = {}


def fetcher(state: MessagesState) -> dict[str, Any]:
    asked = question(state["messages"])
    _attempts[asked] = _attempts.get(asked, 0) + 1
    if _attempts[asked] == 1:
        raise ConnectionError("the data source dropped the connection")
    return {"messages": [specialist_model.invoke(state["messages"])]}


retrying = StateGraph(MessagesState)
retrying.add_node("fetcher", fetcher, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
retrying.add_edge(START, "fetcher")
retrying.add_edge("fetcher", END)
retrying_graph = retrying.compile()


@tool
def add(a: int, b: int) -> int:
    """Add a and b."""
    return a + b


def _functional(messages: Sequence[BaseMessage]) -> AIMessage:
    added = tool_results(messages, "add")
    return AIMessage(content=f"The sum is {added[-1]}") if added else call("add", "c1", a=2, b=3)


functional_model = ScriptedChat(script=_functional)


@task
def call_llm(messages: list[BaseMessage]) -> BaseMessage:
    return functional_model.invoke(messages)


@task
def call_tool(tool_call: ToolCall) -> Any:
    return add.invoke(tool_call)


@entrypoint()
def agent(messages: list[BaseMessage]) -> list[BaseMessage]:
    response = call_llm(messages).result()
    while isinstance(response, AIMessage) and response.tool_calls:
        results = [call_tool(tool_call).result() for tool_call in response.tool_calls]
        messages = [*messages, response, *results]
        response = call_llm(messages).result()
    return [*messages, response]


def _asked(graph: Any, request: Any) -> object:
    """The graph run on the scenario's input, traced as Langfuse's docs trace it."""
    return graph.invoke(
        {"messages": [{"role": "user", "content": request.input}]}, config={"callbacks": [langfuse_handler]}
    )


def route(request: Any) -> object:
    return _asked(routing_graph, request)


def route_by_edge(request: Any) -> object:
    return _asked(conditional_graph, request)


def stages(request: Any) -> object:
    return _asked(pipeline_graph, request)


def book(request: Any) -> object:
    return _asked(tool_loop_graph, request)


def plan_execute(request: Any) -> object:
    return _asked(plan_and_execute_graph, request)


def rag(request: Any) -> object:
    return _asked(agentic_rag_graph, request)


def retry(request: Any) -> object:
    return _asked(retrying_graph, request)


def functional(request: Any) -> object:
    return agent.invoke(
        [{"role": "user", "content": request.input}], config={"callbacks": [langfuse_handler]}
    )[-1].content


@tool
def get_travel_recommendations() -> str:
    """Recommend a destination."""
    return "Aruba"


def _travel(messages: Sequence[BaseMessage]) -> AIMessage:
    found = tool_results(messages, "get_travel_recommendations")
    return AIMessage(content=f"Go to {found[-1]}") if found else call("get_travel_recommendations", "t1")


travel_advisor = create_react_agent(ScriptedChat(script=_travel), tools=[get_travel_recommendations])
hotel_advisor = create_react_agent(ScriptedChat(script=lambda _: AIMessage(content="Hotel Sol")), tools=[])


@task
def call_travel_advisor(messages: list[BaseMessage]) -> list[BaseMessage]:
    return list(travel_advisor.invoke({"messages": messages})["messages"])


@task
def call_hotel_advisor(messages: list[BaseMessage]) -> list[BaseMessage]:
    return list(hotel_advisor.invoke({"messages": messages})["messages"])


@entrypoint()
def travel(messages: list[BaseMessage]) -> str:
    destination = call_travel_advisor(messages).result()
    return str(call_hotel_advisor(destination).result()[-1].content)


def functional_agents(request: Any) -> object:
    return travel.invoke(
        [{"role": "user", "content": request.input}], config={"callbacks": [langfuse_handler]}
    )
