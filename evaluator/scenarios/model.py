"""The scenario file format of DESIGN.md as pydantic models (unknown keys are errors), and the values the
loader hands on: a scenario with its file, and what a target is known to contain."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

__all__ = [
    "AnswerSpec",
    "DialogueTurn",
    "Expectation",
    "Expected",
    "GoalSpec",
    "JudgeSpec",
    "LoadedScenario",
    "Scenario",
    "TargetCatalog",
    "TrajectorySpec",
    "TurnExpected",
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


def _one_value(value: object) -> object:
    """A slot's value as written (None, `area:` with nothing after it, is an absent slot, as an empty
    value is), or one clear problem (not one per type of the union)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError(
        f"a slot's value is one value (text, a number or true/false), not {type(value).__name__} "
        f"{value!r}; a list of one value is written as that value"
    )


SlotValue = Annotated[str | int | float | bool | None, BeforeValidator(_one_value)]


class TurnExpected(Expected):
    """A dialogue turn's `expected`: every single-turn key, plus the state after the turn (DESIGN.md,
    "Dialogues"). `slots` is the belief state accumulated up to this turn, per domain."""

    intent: str | tuple[str, ...] | None = None  # one intent, or several (compared as sets)
    domain: str | None = None  # default: the intent's part after its last "_"
    acts: tuple[str, ...] | None = None
    slots: dict[str, dict[str, SlotValue]] | None = None
    action: str | None = None

    def single_turn(self) -> Expected:
        """The single-turn part, checked as a single-turn scenario's `expected` is, except that a turn
        that names no `agents` (or no `tools`) leaves them unchecked: a dialogue's turns are mostly
        about the state, and a strict check against an empty list would call every agent and tool of
        every turn unexpected."""
        return Expected(
            agents=self.agents if "agents" in self.model_fields_set else _UNCHECKED,
            tools=self.tools if "tools" in self.model_fields_set else _UNCHECKED,
            trajectory=self.trajectory,
            answer=self.answer,
            agent_tools=self.agent_tools,
        )


_UNCHECKED = Expectation(strict=False)
"""A turn's agents or tools when it names none: one for every turn (it is frozen), not validated again
for each turn of each dialogue."""


class DialogueTurn(_Strict):
    """One user turn of a dialogue and what the target's turn should do."""

    user: str = Field(min_length=1)
    expected: TurnExpected = TurnExpected()


class GoalSpec(_Strict):
    """What the customer came for: the domains booked, and/or the values some reply must give."""

    book: tuple[str, ...] = ()
    inform: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _something(self) -> GoalSpec:
        if not self.book and not self.inform:
            raise ValueError("a goal names what to book or what to inform, e.g. {book: [hotel]}")
        return self


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
    input: str = ""  # a single-turn scenario's message; "" for a dialogue (which has `turns`)
    expected: Expected = Expected()
    judge: JudgeSpec | None = None
    turns: tuple[DialogueTurn, ...] | None = None  # given: the scenario is a dialogue
    policy: dict[str, tuple[str, ...]] | None = None  # None: the target's [targets.X] policy
    goal: GoalSpec | None = None

    @property
    def is_dialogue(self) -> bool:
        return self.turns is not None

    @model_validator(mode="after")
    def _one_kind(self) -> Scenario:
        """A scenario is single-turn (`input`) or a dialogue (`turns`, at least one), never both; the
        loader says the same per field, with fixes."""
        if self.turns is None:
            if not self.input:
                raise ValueError("give input (a single-turn scenario) or turns (a dialogue)")
            if self.policy is not None or self.goal is not None:
                raise ValueError("policy and goal are for dialogues (a scenario with turns)")
            return self
        if self.input:
            raise ValueError("a dialogue has turns, not input: remove input")
        if not self.turns:
            raise ValueError("a dialogue needs at least one turn")
        empty = [action for action, slots in (self.policy or {}).items() if not slots]
        if empty:
            raise ValueError(f"policy {', '.join(empty)} names no slot")
        return self


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
