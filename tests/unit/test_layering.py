"""The package's layers (DESIGN.md, Layout): imports point down only, and only evaluator/langfuse/
imports the `langfuse` SDK."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "evaluator"
# Bottom to top; a module may import its own layer and the ones before it.
LAYERS = [
    {"errors", "config", "_time", "_yaml", "_problems"},
    {"scenarios"},
    {"trace"},
    {"metrics"},
    {"results"},
    {"prompts"},
    {"judge"},
    {"storage"},
    {"langfuse"},
    {"run"},
    {"reports"},
    {"cli"},
    {"__init__", "__main__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _part(module: str) -> str:
    """The top-level part of an `evaluator.*` module: `evaluator.run.pipeline` -> `run`."""
    return module.split(".")[1] if "." in module else "__init__"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def _modules() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(PACKAGE).parts[0].removesuffix(".py"), path)
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_part_of_the_package_has_a_layer() -> None:
    assert {part for part, _ in _modules()} <= set(RANK)


def _upward(part: str, imports: list[str]) -> list[str]:
    """The imports of a module of `part` that point up."""
    return [m for m in imports if m.startswith("evaluator.") and RANK[_part(m)] > RANK[part]]


def test_imports_point_down_only() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for part, path in _modules()
        for module in _upward(part, _imports(path))
    ]
    assert wrong == []


def test_only_the_langfuse_package_imports_langfuse() -> None:
    importers = {
        str(path.relative_to(PACKAGE))
        for part, path in _modules()
        for module in _imports(path)
        if module == "langfuse" or module.startswith("langfuse.")
    }
    assert importers and all(name.startswith("langfuse/") for name in importers)


def test_the_store_does_not_import_the_judges() -> None:
    """The store keeps verdicts under a key of its own (storage.VerdictKey), not judge.CacheKey."""
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for part, path in _modules()
        if part == "storage"
        for module in _imports(path)
        if module.startswith("evaluator.") and _part(module) == "judge"
    ]
    assert wrong == []


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("import json\nfrom evaluator.trace import Trace\nfrom evaluator.cli import main\n")
    assert _upward("metrics", _imports(module)) == ["evaluator.cli"]
