"""The schema each tool call is checked against: the definition the framework recorded in the trace
for the calling agent's model, else any the trace recorded under that name, else the team's
`tool_schemas` file (DESIGN.md, Per-agent analysis). No definition anywhere: the call's parameters
are not checked (not measured, never an issue)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from evaluator.trace import DEFINING_TYPES, Observation, ToolDefinition, recorded_definitions


class ToolSchemas:
    """Definitions found on demand: an agent's observations are read in call order only until the
    tools it called are found (every model call of an agent records the same list, so the first one
    usually answers), and the rest of the trace only for a tool its agent's never defined. The first
    definition recorded of a name wins, per agent and across the trace."""

    def __init__(
        self,
        sources: Mapping[str | None, Iterable[Observation]],
        declared: Mapping[str, ToolDefinition] | None = None,
    ) -> None:
        self._declared = declared or {}  # not copied: a file's are read only when a call needs one
        self._found: dict[str | None, dict[str, ToolDefinition]] = {agent: {} for agent in sources}
        self._unread: dict[str | None, Iterator[Observation]] = {a: iter(o) for a, o in sources.items()}
        self._anywhere: dict[str, ToolDefinition] = {}
        self._all_read = False  # every observation read: nothing more to find

    def lookup(self, agent: str | None, tool: str) -> ToolDefinition | None:
        return self._recorded_by(agent, tool) or self._recorded_anywhere(tool) or self._declared.get(tool)

    def _recorded_by(self, agent: str | None, tool: str) -> ToolDefinition | None:
        found = self._found.get(agent)
        if found is None:
            return None
        while tool not in found and self._read_next(agent):
            pass
        return found.get(tool)

    def _recorded_anywhere(self, tool: str) -> ToolDefinition | None:
        if tool not in self._anywhere and not self._all_read:
            for agent in self._unread:
                while tool not in self._anywhere and self._read_next(agent):
                    pass
                if tool in self._anywhere:
                    break
            else:
                self._all_read = True
        return self._anywhere.get(tool)

    def _read_next(self, agent: str | None) -> bool:
        """Read the agent's next observation's definitions; False when none is left."""
        obs = next(self._unread[agent], None)
        if obs is None:
            return False
        found = self._found[agent]
        for definition in recorded_definitions(obs):
            found.setdefault(definition.name, definition)
            self._anywhere.setdefault(definition.name, definition)
        return True


def tool_schemas(
    observations: Iterable[Observation],
    owners: Mapping[str, str | None],
    agent_names: Mapping[str, str],
    declared: Mapping[str, ToolDefinition] | None = None,
) -> ToolSchemas:
    """The schemas for a trace: its observations that may record definitions, under the agent that
    owns each (`owners`: observation id -> its agent call's id; `agent_names`: agent call id -> name;
    None: outside every agent), and the `tool_schemas` file's `declared` ones."""
    sources: dict[str | None, list[Observation]] = {}
    for obs in observations:
        if obs.type in DEFINING_TYPES:
            owner = owners.get(obs.id)
            sources.setdefault(agent_names[owner] if owner is not None else None, []).append(obs)
    return ToolSchemas(sources, declared)
