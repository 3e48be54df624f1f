"""OpenTelemetry GenAI semantic conventions (pydantic-ai and others): `invoke_agent` spans are agents
named by `gen_ai.agent.name`, `execute_tool` spans (or any span with `gen_ai.tool.name`) tools named
by `gen_ai.tool.name`. Langfuse stores such an agent under its span title (pydantic-ai:
`"<agent> run"`), so the name comes from the attributes, never from the observation name. pydantic-ai
records an output function's call (through the output tool it makes, `final_result`) as an
`execute_tool` span too, titled "running output function: ...": that is the agent giving its answer,
not a tool it used, so it is neither a tool nor an agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles

__all__ = ["GenAI"]

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
_AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
_FALLBACK_AGENT_NAME_KEYS = ("agent_name",)  # pydantic-ai before gen_ai.agent.name
_TITLE = "logfire.msg"
_OUTPUT_FUNCTION = "running output function"


class GenAI:
    name = "genai"

    def detect(self, tree: Tree) -> bool:
        return any(OPERATION in o.attributes or TOOL_NAME in o.attributes for o in tree.ordered)

    def roles(self, tree: Tree) -> Roles:
        roles: dict[str, Role | None] = {}
        for obs in tree.ordered:
            attrs = obs.attributes
            if OPERATION not in attrs and TOOL_NAME not in attrs:
                continue
            operation = attrs.get(OPERATION)
            if operation in _AGENT_OPERATIONS:
                roles[obs.id] = Role(kind="agent", name=_agent_name(attrs, obs.name))
            elif str(attrs.get(_TITLE, "")).startswith(_OUTPUT_FUNCTION):
                roles[obs.id] = None  # the agent's answer going out, not a tool call
            elif operation == "execute_tool" or attrs.get(TOOL_NAME):
                roles[obs.id] = Role(kind="tool", name=str(attrs.get(TOOL_NAME) or obs.name))
            else:
                roles[obs.id] = None  # chat / embeddings: generations, not agents or tools
        return roles

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        return set()


def _agent_name(attrs: Mapping[str, Any], fallback: str) -> str:
    for key in (AGENT_NAME, *_FALLBACK_AGENT_NAME_KEYS):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return (
        fallback.removesuffix(" run") if fallback.endswith(" run") and fallback != "agent run" else fallback
    )
