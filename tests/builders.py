"""Small keyword builders for traces in tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from langfuse.api import Prompt_Chat
from langfuse.model import ChatPromptClient

from evaluator.prompts import Prompt
from evaluator.scenarios import Expectation, Expected, Scenario, TrajectorySpec
from evaluator.trace import Observation, Trace, build_trace


class TraceBuilder:
    """Observations in call order: `agent()`/`tool()` return the new id, to nest under it."""

    def __init__(self) -> None:
        self.observations: list[Observation] = []
        self._clock = 1_000.0
        root = self.add("SPAN", "scenario", parent=None)
        self.root = root

    def add(self, type_: str, name: str, parent: str | None = "root", **fields: Any) -> str:
        obs_id = f"o{len(self.observations)}"
        parent_id = (self.observations[0].id if parent == "root" else parent) if self.observations else None
        self._clock += 1
        self.observations.append(
            Observation(
                id=obs_id,
                parent_id=parent_id,
                type=type_,
                name=name,
                start_time=self._clock,
                end_time=self._clock + 0.5,
                **fields,
            )
        )
        return obs_id

    def agent(self, name: str, parent: str | None = "root", **fields: Any) -> str:
        return self.add("AGENT", name, parent, **fields)

    def tool(self, name: str, parent: str | None = "root", **fields: Any) -> str:
        return self.add("TOOL", name, parent, **fields)

    def build(self, trace_id: str = "t1") -> Trace:
        return build_trace(trace_id, self.observations)


def trace_of(agents: list[str], tools: list[str], flow: str | None = None) -> Trace:
    """A flat trace: the first agent is the entry agent, the others nest in it, tools in the last."""
    builder = TraceBuilder()
    parent = "root"
    for index, name in enumerate(agents):
        metadata = {"flow": flow} if flow and index == 0 else {}
        agent_id = builder.agent(name, parent=parent, metadata=metadata)
        if index == 0:
            parent = agent_id
    for name in tools:
        builder.tool(name, parent=parent)
    return builder.build()


def expected(
    agents: dict[str, Any] | None = None,
    tools: dict[str, Any] | None = None,
    trajectory: dict[str, Any] | None = None,
) -> Expected:
    return Expected(
        agents=Expectation(**(agents or {})),
        tools=Expectation(**(tools or {})),
        trajectory=TrajectorySpec(**trajectory) if trajectory is not None else None,
    )


def scenario(**fields: Any) -> Scenario:
    base: dict[str, Any] = {"id": "s1", "target": "demo", "input": "question?"}
    return Scenario.model_validate({**base, **fields})


def served(prompt: Prompt) -> Prompt:
    """The prompt as if Langfuse served it: with the prompt client its generations link to."""
    client = ChatPromptClient(
        Prompt_Chat.model_validate(
            {
                "name": prompt.name,
                "version": prompt.version,
                "prompt": [{"role": m.role, "content": m.content} for m in prompt.messages],
                "config": dict(prompt.config),
                "labels": list(prompt.labels),
                "tags": [],
                "type": "chat",
            }
        )
    )
    return dataclasses.replace(prompt, link=client)
