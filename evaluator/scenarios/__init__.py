"""Scenario files: the format (single-turn scenarios and dialogues), target catalogs, and the loader."""

from evaluator.scenarios.loader import SCENARIO_SUFFIXES, check_given, expand_paths, load_scenarios, with_tags
from evaluator.scenarios.model import (
    AnswerSpec,
    DialogueTurn,
    Expectation,
    Expected,
    GoalSpec,
    JudgeSpec,
    LoadedScenario,
    Scenario,
    TargetCatalog,
    TrajectorySpec,
    TurnExpected,
)

__all__ = [
    "SCENARIO_SUFFIXES",
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
    "check_given",
    "expand_paths",
    "load_scenarios",
    "with_tags",
]
