"""The schema each tool call is checked against: the definition the framework recorded in the trace
for the calling agent's model, else any the trace recorded under that name, else the team's
`tool_schemas` file (DESIGN.md, Per-agent analysis). No definition anywhere: the call's parameters
are not checked (not measured, never an issue)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evaluator.trace import Observation
from evaluator.trace.tool_definitions import ToolDefinition, recorded_definitions


@dataclass(frozen=True, kw_only=True)
class ToolSchemas:
    """`recorded`: by agent name (None: outside every agent), by tool name, what the trace records;
    `declared`: by tool name, the `tool_schemas` file's."""

    recorded: Mapping[str | None, Mapping[str, ToolDefinition]] = field(default_factory=dict)
    declared: Mapping[str, ToolDefinition] = field(default_factory=dict)
    _anywhere: dict[str, ToolDefinition] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for by_tool in self.recorded.values():
            for name, definition in by_tool.items():
                self._anywhere.setdefault(name, definition)

    def lookup(self, agent: str | None, tool: str) -> ToolDefinition | None:
        own = self.recorded.get(agent)
        found = own.get(tool) if own is not None else None
        return found or self._anywhere.get(tool) or self.declared.get(tool)


def tool_schemas(
    observations: Iterable[Observation],
    owners: Mapping[str, str | None],
    agent_names: Mapping[str, str],
    declared: Mapping[str, ToolDefinition] | None = None,
) -> ToolSchemas:
    """The definitions the observations record, each under the agent that owns the observation
    (`owners`: observation id -> its agent call's id, `agent_names`: agent call id -> name); the
    first recorded definition of a name wins for its agent."""
    recorded: dict[str | None, dict[str, ToolDefinition]] = {}
    for obs in observations:
        definitions = recorded_definitions(obs)
        if not definitions:
            continue
        owner = owners.get(obs.id)
        by_tool = recorded.setdefault(agent_names.get(owner) if owner is not None else None, {})
        for definition in definitions:
            by_tool.setdefault(definition.name, definition)
    return ToolSchemas(recorded=recorded, declared=dict(declared or {}))
