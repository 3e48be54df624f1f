"""What users import from `evaluator`: every name of its `__all__` there, and the annotations typed
code checks against (PEP 561's py.typed marker, shipped with the package)."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import evaluator

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_is_there() -> None:
    assert [name for name in evaluator.__all__ if getattr(evaluator, name, None) is None] == []
    assert evaluator.run_suite is importlib.import_module("evaluator.run").run_suite


def test_the_package_is_marked_typed_and_ships_the_marker() -> None:
    """Without py.typed, `mypy --strict` on a user's script reads every name from `evaluator` as Any
    ("module is installed, but missing library stubs or py.typed marker")."""
    assert (ROOT / "evaluator" / "py.typed").is_file()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in setuptools["package-data"]["evaluator"]
