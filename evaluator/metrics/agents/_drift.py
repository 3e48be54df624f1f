"""Intent drift (DESIGN.md, Per-agent analysis; the seed's "did agents stay on task?", lower is better):
the share of a trace's steps that left what the scenario expects.

A scenario says what its task needs in `expected.agents` and `expected.tools`. A kind (agents, tools) is
measured when the scenario names anything in it (`include`, `exclude` or `allow`); a scenario that names
nothing of a kind says nothing about staying on task there. The steps are every call of an agent that is
not always expected (entry agents and guardrails' agents are the system's, not the task's), when agents
are measured, and every tool call (hand-offs are not tool calls), when tools are measured. A step
*drifts* when workflow validation's rule calls its name unexpected: it is excluded, or the expectation is
strict (the default) and names it in neither `include` nor `allow`.

`score` = drifted steps / steps; None (not measured) when no kind is measured or there is no step.
Declared `agent_tools` are not used here: a tool outside an agent's list is already an
`unauthorized_tool` issue, counted in `tool_use_score`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from evaluator.scenarios import Expectation, Expected
from evaluator.trace import Trace


@dataclass(frozen=True, kw_only=True, slots=True)
class DriftedStep:
    """A step outside the scenario's expectation: an agent's call (`agent` is that agent) or a tool
    call (`agent` is the agent that made it, None when no agent encloses it)."""

    kind: Literal["agent", "tool"]
    name: str
    agent: str | None
    observation_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "agent": self.agent,
            "observation_id": self.observation_id,
        }


@dataclass(frozen=True, kw_only=True)
class IntentDrift:
    steps: int
    drifted: tuple[DriftedStep, ...]

    @property
    def score(self) -> float | None:
        return len(self.drifted) / self.steps if self.steps else None

    def to_json(self) -> dict[str, Any]:
        """The `intent_drift` entry of the result's `per_agent` field."""
        return {"steps": self.steps, "drifted": [step.to_json() for step in self.drifted]}


def intent_drift(trace: Trace, expected: Expected) -> IntentDrift | None:
    """The intent drift of `trace` against the scenario's `expected`; None when not measured."""
    steps = 0
    drifted: list[DriftedStep] = []
    if _names_any(expected.agents):
        exempt = trace.always_expected_agents
        for agent in trace.agents:
            if agent.name in exempt:
                continue
            steps += 1
            if _unexpected(agent.name, expected.agents):
                drifted.append(
                    DriftedStep(kind="agent", name=agent.name, agent=agent.name, observation_id=agent.id)
                )
    if _names_any(expected.tools):
        for call in trace.tools:
            steps += 1
            if _unexpected(call.name, expected.tools):
                drifted.append(
                    DriftedStep(kind="tool", name=call.name, agent=call.agent, observation_id=call.id)
                )
    if not steps:
        return None
    return IntentDrift(steps=steps, drifted=tuple(drifted))


def _names_any(expectation: Expectation) -> bool:
    return bool(expectation.include or expectation.exclude or expectation.allow)


def _unexpected(name: str, expectation: Expectation) -> bool:
    """Workflow validation's rule for one name (metrics/workflow.py; the exempt agents are left out
    before)."""
    if name in expectation.exclude:
        return True
    return expectation.strict and name not in {*expectation.include, *expectation.allow}
