"""Plain `@observe` agents as a team writes them, for the per-agent figures by hand: a `planner`
that calls `search` positionally (`search("BIRD", 5)`: the tools' file lists `query` before `limit`,
not in the alphabet's order), with a wrong type, with an argument `search` does not have (Python
refuses it: the tool observation is an ERROR), and a tool that raises; a nested `planner` call; a
`helper` agent inside it; a `quiet` agent that calls no tool; and, outside every agent, a tool
no schema describes and a call that omits its required argument. Its generations report usage and
cost, usage only, cost only, or nothing, through the client the run hands the target (a client made
at import is not the run's when a process holds several, as a test worker does). Schemas:
`observe_more_tools.json`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from langfuse import Langfuse, observe

AGENT_TOOLS = {"planner": ["search", "fail"], "helper": ["search"], "quiet": []}
TOOL_SCHEMAS = Path(__file__).with_name("observe_more_tools.json")
_client: list[Langfuse] = []  # the run's, set by `run`


@observe(as_type="tool")
def search(query: str, limit: int = 3) -> str:
    return f"{limit} papers on {query}"


@observe(as_type="tool")
def fail(x: int) -> str:
    raise RuntimeError("backend down")


@observe(as_type="tool")
def mystery(z: int) -> str:
    return "?"


def _generation(name: str, **reported: Any) -> None:
    with _client[-1].start_as_current_observation(as_type="generation", name=name, model="m", **reported):
        pass


@observe(as_type="agent")
def helper(question: str) -> str:
    _generation("helper-llm", usage_details={"input": 7, "output": 3})
    return search(question)  # positional: `query`


@observe(as_type="agent", name="planner")
def planner_again(question: str) -> str:
    try:
        return search(query="Spider", page=2)  # type: ignore[call-arg]  # the model's invented `page`
    except TypeError as exc:
        return f"error: {exc}"


@observe(as_type="agent")
def planner(question: str) -> str:
    _generation(
        "plan", usage_details={"input": 100, "output": 20}, cost_details={"input": 0.001, "output": 0.002}
    )
    _generation("plan-again")  # reports nothing
    found = [search("BIRD", 5), search(query="Spider", limit="many")]  # type: ignore[arg-type]
    try:
        fail(1)
    except RuntimeError:
        found.append("failed")
    return "; ".join([*found, helper(question), planner_again(question)])


@observe(as_type="agent")
def quiet(question: str) -> str:
    _generation("quiet-llm", cost_details={"total": 0.5})
    return "nothing to add"


@observe()
def warm_up(question: str) -> None:
    mystery(1)
    with contextlib.suppress(TypeError):
        search()  # type: ignore[call-arg]


def run(request: Any) -> object:
    _client.append(request.langfuse)
    warm_up(request.input)
    return planner(request.input) + quiet(request.input)
