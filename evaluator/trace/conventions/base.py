"""What a trace convention is: it reads the observation tree and says which observations are agent
calls and tool calls, named as the system's author named them (DESIGN.md, Trace model).

A convention *claims* the observations it understands (a LangGraph node's inner runs, an OpenInference
span) and gives each claimed observation a `Role`, or None for plumbing it knows is neither an agent
nor a tool. Observations no convention claims are read by the Langfuse types convention (AGENT and
TOOL observations), so a team's own `@observe(as_type="agent")` spans count inside any framework.
Hand-offs, entry agents, ambiguity and the rest are decided once for all conventions (`build`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from evaluator.trace.conventions._tree import Tree

__all__ = ["Role", "Roles", "TraceConvention"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Role:
    kind: Literal["agent", "tool"]
    name: str


Roles = Mapping[str, Role | None]  # observation id -> its role; None: claimed plumbing


class TraceConvention(Protocol):
    """One way frameworks record agents and tools."""

    @property
    def name(self) -> str:
        """How configuration and `validate --convention` name it."""
        ...

    def detect(self, tree: Tree) -> bool:
        """Whether the trace uses this convention (cheap: a scan of metadata or attribute keys)."""
        ...

    def roles(self, tree: Tree) -> Roles:
        """The observations it claims, each with its role (None for plumbing)."""
        ...

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        """Ids of the agents this framework makes orchestrators, given the agents found as (id, name)
        in start order; empty when the framework has no such notion."""
        ...
