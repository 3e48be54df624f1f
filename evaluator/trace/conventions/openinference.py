"""OpenInference (`openinference.span.kind`; the OpenAI Agents SDK through
openinference-instrumentation-openai-agents, and others): AGENT spans are agents, TOOL spans tools.

The Agents SDK instrumentation opens one synthetic AGENT span per workflow (named after the trace,
"Agent workflow" by default) around the real agents: it carries no `agent.name`, so it is not an agent.
Hand-off spans are TOOL spans named "handoff to <agent>" (a built-in hand-off pattern). The first agent
of a workflow is its entry agent (where the SDK's `Runner.run(agent, ...)` started) when it passes
control on (a hand-off, or an agent it runs as a tool).
"""

from __future__ import annotations

import re

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles
from evaluator.trace.model import HANDOFF_TO, Observation

__all__ = ["OpenInference"]

SPAN_KIND = "openinference.span.kind"
AGENT_NAME = "agent.name"
GRAPH_NODE_ID = "graph.node.id"
_HANDOFF = re.compile(HANDOFF_TO)  # the SDK's hand-off span, "handoff to <agent>"


class OpenInference:
    name = "openinference"

    def detect(self, tree: Tree) -> bool:
        return any(SPAN_KIND in o.attributes for o in tree.ordered)

    def roles(self, tree: Tree) -> Roles:
        roles: dict[str, Role | None] = {}
        for obs in tree.ordered:
            kind = obs.attributes.get(SPAN_KIND)
            if kind is None:
                continue
            roles[obs.id] = self._role(tree, obs.id, str(kind).upper())
        return roles

    def _role(self, tree: Tree, obs_id: str, kind: str) -> Role | None:
        obs = tree.by_id[obs_id]
        if kind == "TOOL":
            return Role(kind="tool", name=obs.name)
        if kind != "AGENT":
            return None
        named = obs.attributes.get(AGENT_NAME) or obs.attributes.get(GRAPH_NODE_ID)
        if named:
            return Role(kind="agent", name=str(named))
        if any(d.attributes.get(SPAN_KIND) == "AGENT" for d in tree.descendants(obs)):
            return None  # the synthetic workflow span around the real agents
        return Role(kind="agent", name=obs.name)

    def entry_agents(self, tree: Tree, agents: list[tuple[str, str]]) -> set[str]:
        """The first agent inside each workflow span (the workflow's starting agent), when it passes
        control on: it hands off (a "handoff to <agent>" span inside it) or runs another agent (an
        agent as a tool). Agents the application runs one after another in one workflow (the SDK's
        deterministic pattern), or a single agent, have no orchestrator: each is checked as any."""
        entries: set[str] = set()
        agent_ids = {agent_id for agent_id, _ in agents}
        for obs in tree.ordered:
            kind = obs.attributes.get(SPAN_KIND)
            if kind != "AGENT" or obs.id in agent_ids:
                continue
            first = next((d for d in tree.descendants(obs) if d.id in agent_ids), None)
            if first is not None and any(_passes_control(d, agent_ids) for d in tree.descendants(first)):
                entries.add(first.id)
        return entries


def _passes_control(obs: Observation, agent_ids: set[str]) -> bool:
    """A hand-off span (the SDK names it after the agent it hands to), or another agent's run."""
    is_tool = str(obs.attributes.get(SPAN_KIND, "")).upper() == "TOOL"
    return obs.id in agent_ids or (is_tool and _HANDOFF.match(obs.name) is not None)
