"""The normalized trace: what a run did, built the same way from every source (see `sources` and
`capture`) by `build.build_trace`, which asks a trace convention (`conventions/`) which observations are
agent calls, tool calls and hand-offs.

`Observation` is one row as Langfuse stores it: its type and name as Langfuse's server assigns them to
OpenTelemetry spans, its metadata, and `attributes`, the raw OpenTelemetry attributes of spans that did
not come from the Langfuse SDK (Langfuse keeps them in the metadata under `attributes`, every value a
string). Missing or unknown fields degrade: no type reads as SPAN, no start time sorts first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "AGENT",
    "ERROR_LEVEL",
    "FLOW_KEY",
    "GENERATION",
    "HANDOFF_TO",
    "TOOL",
    "TRANSFER_TO",
    "AgentCall",
    "Handoff",
    "Observation",
    "ToolCall",
    "Trace",
    "normalize_name",
]

AGENT = "AGENT"
TOOL = "TOOL"
GENERATION = "GENERATION"
GUARDRAIL = "GUARDRAIL"
ERROR_LEVEL = "ERROR"
FLOW_KEY = "flow"


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    id: str
    parent_id: str | None
    type: str
    name: str
    start_time: float | None = None  # seconds since the epoch
    end_time: float | None = None
    level: str = "DEFAULT"
    status_message: str | None = None
    input: Any = None
    output: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    prompt_name: str | None = None
    prompt_version: int | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)  # OpenTelemetry attributes, non-SDK spans


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentCall:
    name: str  # as the system's author named the agent (the convention's reading, not the span name)
    entry: bool  # an orchestrator: always expected
    start_time: float | None
    end_time: float | None
    error: str | None = None
    id: str = ""  # the observation id
    parent: str | None = None  # the name of the nearest enclosing agent
    guardrail: bool = False  # it ran inside a guardrail: it checks the workflow, is not a step of it
    # What the agent's observation records it was given and gave back (the per-agent judge shows them).
    input: Any = field(default=None, compare=False)
    output: Any = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    name: str
    agent: str | None  # the nearest enclosing agent
    input: Any
    output: Any
    start_time: float | None
    end_time: float | None
    error: str | None = None
    arguments: Mapping[str, Any] | None = None  # the parsed call arguments, when they are an object
    id: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Handoff:
    """Control passing from one agent to another: a hand-off tool (`transfer_to_<agent>`, ...) or a
    tool whose call ran another agent (delegation). `via` is the tool's name; `source` is None when
    no agent encloses the call."""

    via: str
    source: str | None
    target: str
    start_time: float | None
    order: int = 0  # position among the trace's tool-like calls, to merge it back into the tool path
    input: Any = field(default=None, compare=False)  # what the hand-off tool was called with

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "via": self.via}


@dataclass(frozen=True, kw_only=True)
class Trace:
    id: str
    name: str | None
    agents: tuple[AgentCall, ...]
    tools: tuple[ToolCall, ...]  # hand-offs are not among them (see `handoffs`)
    flow: str | None
    output: Any
    errors: tuple[str, ...]
    prompts: tuple[tuple[str, int], ...]  # prompt versions linked to observations
    start_time: float | None
    end_time: float | None
    observation_count: int
    handoffs: tuple[Handoff, ...] = ()
    tool_order: tuple[int, ...] = ()  # each tool's position among tool-like calls (tools and hand-offs)
    names: frozenset[str] = frozenset()  # every observation name, and every agent, tool and target name
    convention: str = "langfuse"
    warnings: tuple[str, ...] = ()
    # The dialogue state the trace reports: per metadata key of the rules' `state_keys`, the value of
    # the last observation (by end time) carrying it, a JSON string parsed.
    reported: Mapping[str, Any] = field(default_factory=dict)

    @property
    def agent_names(self) -> list[str]:
        return [a.name for a in self.agents]

    @property
    def entry_agents(self) -> frozenset[str]:
        return frozenset(a.name for a in self.agents if a.entry)

    @property
    def always_expected_agents(self) -> frozenset[str]:
        """Agents strict checks never report unexpected: the orchestrators (entry agents) and the agents
        guardrails run (an input guardrail's checking agent runs on every input, by configuration)."""
        return frozenset(a.name for a in self.agents if a.entry or a.guardrail)

    @property
    def tool_path(self) -> list[str]:
        return [t.name for t in self.tools]

    def tool_path_naming(self, named: Collection[str]) -> list[str]:
        """The tool path, with the hand-offs `named` names merged back in call order, under the name
        `named` gives them: a scenario that names a hand-off tool in `expected.tools` checks it as a
        tool (see `_named_handoff` for the names a hand-off goes by)."""
        handoffs = [(h.order, name) for h in self.handoffs if (name := _named_handoff(h, named)) is not None]
        if not handoffs:
            return self.tool_path
        order = self.tool_order or tuple(range(len(self.tools)))
        merged = sorted([*zip(order, self.tool_path, strict=True), *handoffs])
        return [name for _, name in merged]

    @property
    def duration_seconds(self) -> float | None:
        if self.start_time is None or self.end_time is None:
            return None
        return self.end_time - self.start_time


_NON_ALNUM = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=4096)  # the same few names, scenario after scenario
def normalize_name(name: str) -> str:
    """ "English agent", "english_agent" and "English-Agent" all read "english_agent"."""
    return _NON_ALNUM.sub("_", name.lower()).strip("_")


# The two spellings of one forward hand-off, each naming the receiving agent in the group `agent`:
# `transfer_to_<agent>` (the tool as the model calls it: langgraph-supervisor, LangGraph swarm, the
# OpenAI Agents SDK) and "handoff to <Agent>" (the Agents SDK's span, as OpenInference records it).
# The conventions' built-in hand-off patterns are these and `transfer_back_to_<agent>`.
TRANSFER_TO = r"^transfer_to_(?P<agent>.+)$"
HANDOFF_TO = r"^(?i:handoff)[ _]to[ _](?P<agent>.+)$"
_FORWARD_HANDOFF = tuple(re.compile(p) for p in (TRANSFER_TO, HANDOFF_TO))


def _forward_target(name: str) -> str | None:
    """The agent a forward hand-off tool of either spelling hands over to (normalized), else None."""
    match = next((m for p in _FORWARD_HANDOFF if (m := p.match(name)) is not None), None)
    return normalize_name(match.group("agent")) if match is not None else None


def _named_handoff(handoff: Handoff, named: Collection[str]) -> str | None:
    """The name among `named` this hand-off goes by: its tool's own name, or the other spelling of a
    forward hand-off to the same agent (a scenario naming `transfer_to_refund_agent` means the span
    "handoff to Refund agent"); None when `named` does not name it."""
    if handoff.via in named:
        return handoff.via
    if _forward_target(handoff.via) is None:
        return None
    target = normalize_name(handoff.target)
    return next((name for name in sorted(named) if _forward_target(name) == target), None)
