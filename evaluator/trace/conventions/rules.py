"""What a target's configuration can tell the conventions that no trace shows (`[targets.X]` in
evaluator.toml, `validate --convention`): which convention to use, which agents are orchestrators,
which observations are agents, and more hand-off tool names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from evaluator.trace.model import HANDOFF_TO, TRANSFER_TO

__all__ = ["BUILTIN_HANDOFF_PATTERNS", "CONVENTION_NAMES", "DEFAULT_RULES", "TraceRules"]

# Hand-off tools of langgraph-supervisor and LangGraph swarm (`transfer_to_<agent>`, and back), and the
# OpenAI Agents SDK (`transfer_to_<agent>` as the model calls it, "handoff to <Agent>" as OpenInference
# names the span). Each names the receiving agent in the group `agent`.
BUILTIN_HANDOFF_PATTERNS = (r"^transfer_back_to_(?P<agent>.+)$", TRANSFER_TO, HANDOFF_TO)
CONVENTION_NAMES = ("auto", "langfuse", "langgraph", "genai", "openinference")


@dataclass(frozen=True, kw_only=True)
class TraceRules:
    """`convention`: "auto" (detected per trace) or one of CONVENTION_NAMES. `entry_agents`: agents
    that are orchestrators (always expected). `agent_observations`: names of observations (any type,
    e.g. a plain `@observe()` span) that are agents. `agent_pattern`: a regular expression; an
    observation whose name matches it fully is an agent, named by the group `name` when there is one.
    `handoff_patterns`: more hand-off tool names, each a regular expression with the group `agent`.
    `state_keys`: the metadata keys a dialogue turn reports its state under (the trace's `reported`)."""

    convention: str = "auto"
    entry_agents: tuple[str, ...] = ()
    agent_observations: tuple[str, ...] = ()
    agent_pattern: str | None = None
    handoff_patterns: tuple[str, ...] = ()
    state_keys: tuple[str, ...] = ("intent", "domain", "acts", "slots", "action")

    @cached_property
    def compiled_handoffs(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in (*self.handoff_patterns, *BUILTIN_HANDOFF_PATTERNS))

    @cached_property
    def compiled_agent_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.agent_pattern) if self.agent_pattern else None

    def agent_name_for(self, observation_name: str) -> str | None:
        """The agent an observation is by configuration, or None."""
        if observation_name in self.agent_observations:
            return observation_name
        pattern = self.compiled_agent_pattern
        match = pattern.fullmatch(observation_name) if pattern is not None else None
        if match is None:
            return None
        return match.groupdict().get("name") or observation_name

    def handoff_target(self, tool_name: str) -> str | None:
        """The agent a hand-off tool hands over to, or None when the tool is not a hand-off."""
        for pattern in self.compiled_handoffs:
            match = pattern.match(tool_name)
            if match is not None and match.group("agent"):
                return match.group("agent")
        return None


DEFAULT_RULES = TraceRules()
