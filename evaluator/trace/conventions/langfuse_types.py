"""Langfuse types: AGENT observations are agents and TOOL observations tools, named by the
observation name (`as_type="agent"`, `@observe(as_type="tool")`, Langfuse's LangChain handler)."""

from __future__ import annotations

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles
from evaluator.trace.model import AGENT, TOOL

__all__ = ["LangfuseTypes"]


class LangfuseTypes:
    name = "langfuse"

    def detect(self, tree: Tree) -> bool:
        return True  # the fallback: every trace has Langfuse types

    def roles(self, tree: Tree) -> Roles:
        roles: dict[str, Role | None] = {}
        for obs in tree.ordered:
            if obs.type == AGENT:
                roles[obs.id] = Role(kind="agent", name=obs.name)
            elif obs.type == TOOL:
                roles[obs.id] = Role(kind="tool", name=obs.name)
        return roles

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        return set()  # only the generic rule (the agent enclosing all others) applies
