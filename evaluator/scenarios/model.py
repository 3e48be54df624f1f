"""The scenario file format of DESIGN.md as pydantic models (unknown keys are errors), and the values the
loader hands on: a scenario with its file, and what a target is known to contain."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AnswerSpec",
    "Expectation",
    "Expected",
    "JudgeSpec",
    "LoadedScenario",
    "Scenario",
    "TargetCatalog",
    "TrajectorySpec",
]

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expectation(_Strict):
    """Which agents (or tools) a run must call, must not call, and may call."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    strict: bool = True

    @model_validator(mode="after")
    def _disjoint(self) -> Expectation:
        both = [name for name in self.include if name in self.exclude]
        if both:
            raise ValueError(f"{', '.join(both)} is both in include and in exclude")
        return self


class TrajectorySpec(_Strict):
    """The expected ordered tool path and, optionally, the expected flow.

    `tools` is required: left out, it would read as "no tool at all" and fail every run that calls one.
    Write `tools: []` to expect exactly that.
    """

    tools: tuple[str, ...]
    flow: str | None = None


class AnswerSpec(_Strict):
    criteria: str | None = None  # expected_answer_criteria, for the quality judge
    contains: tuple[str, ...] = ()  # rule-based: each string must occur in the answer
    ground_truth: str | None = Field(default=None, min_length=1)  # for the correctness judge


class Expected(_Strict):
    agents: Expectation = Expectation()
    tools: Expectation = Expectation()
    trajectory: TrajectorySpec | None = None
    answer: AnswerSpec | None = None
    # Per-agent analysis: the tools each agent named here may use in this scenario, in place of what
    # the target's `agent_tools` gives it (narrowed or widened); the other agents keep the target's.
    agent_tools: dict[str, tuple[str, ...]] | None = None


class JudgeSpec(_Strict):
    prompt: str | None = None
    version: int | None = Field(default=None, ge=1)
    label: str | None = None

    @model_validator(mode="after")
    def _one_selector(self) -> JudgeSpec:
        if self.version is not None and self.label is not None:
            raise ValueError("give either version or label, not both")
        return self


class Scenario(_Strict):
    id: str = Field(pattern=ID_PATTERN)
    description: str = ""
    tags: tuple[str, ...] = ()
    # Required to run (the loader says so when it checks targets); `validate` runs no target, and
    # uses it, when given, only for the target's declared names and trace conventions.
    target: str = ""
    input: str = Field(min_length=1)
    expected: Expected = Expected()
    judge: JudgeSpec | None = None


@dataclass(frozen=True, kw_only=True)
class LoadedScenario:
    """A scenario with the file it came from."""

    scenario: Scenario
    path: Path


@dataclass(frozen=True, kw_only=True)
class TargetCatalog:
    """Names a target is known to have; empty collections mean "not declared, do not check"."""

    agents: Collection[str] = ()
    tools: Collection[str] = ()
