"""Scenario files: the format (single-turn now), target catalogs, and the loader."""

from evaluator.scenarios.loader import SCENARIO_SUFFIXES, check_given, expand_paths, load_scenarios, with_tags
from evaluator.scenarios.model import (
    AnswerSpec,
    Expectation,
    Expected,
    JudgeSpec,
    LoadedScenario,
    Scenario,
    TargetCatalog,
    TrajectorySpec,
)

__all__ = [
    "SCENARIO_SUFFIXES",
    "AnswerSpec",
    "Expectation",
    "Expected",
    "JudgeSpec",
    "LoadedScenario",
    "Scenario",
    "TargetCatalog",
    "TrajectorySpec",
    "check_given",
    "expand_paths",
    "load_scenarios",
    "with_tags",
]
