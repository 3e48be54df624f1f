"""The package's layers (DESIGN.md, Layout): imports point down only, and only evaluator/langfuse/
imports the `langfuse` SDK. And its public surface: every module is private (`_name.py`) or says what
it exports (`__all__`), every package's `__init__` re-exports what other packages may use, and is the
only way in from outside the package (inside it, modules import their siblings directly)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "evaluator"
# Bottom to top; a module may import its own layer and the ones before it.
LAYERS = [
    {"errors", "config", "_time", "_json", "_reply_bound", "_tls", "_yaml", "_problems", "_secrets", "_lazy"},
    {"scenarios"},
    {"trace"},
    {"metrics"},
    {"prompts"},
    {"judge"},
    {"results"},
    {"storage"},
    {"langfuse"},
    {"run"},
    {"reports"},
    {"cli"},
    {"__init__", "__main__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
PACKAGES = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


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


def _is_private(path: Path) -> bool:
    """`_name.py` (and `__main__.py`): used inside its package only, so it need not list its exports."""
    return path.stem.startswith("_") and path.stem != "__init__"


def _has_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in _targets(node))
        for node in tree.body
    )


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def test_every_module_is_private_or_lists_its_exports() -> None:
    unlisted = [
        str(path.relative_to(PACKAGE))
        for _, path in _modules()
        if not _is_private(path) and not _has_all(path)
    ]
    assert unlisted == []


def _past_an_init(part: str, imports: list[str], *, init: bool = False) -> list[str]:
    """The imports of a module of `part` that reach into another package past its `__init__`
    (`evaluator.results.figures` from outside results/), or, but for the `__init__` itself (`init`),
    into its own package through its `__init__` (a sibling is imported directly: the `__init__`
    imports the module, a cycle)."""
    own = f"evaluator.{part}" if part in PACKAGES and not init else None
    return [
        m
        for m in imports
        if m.startswith("evaluator.") and (m == own or (_part(m) != part and m.count(".") > 1))
    ]


def test_across_packages_only_the_init_is_imported() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for part, path in _modules()
        for module in _past_an_init(part, _imports(path), init=path.name == "__init__.py")
    ]
    assert wrong == []


def test_an_import_past_an_init_and_a_module_without_exports_are_caught(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from evaluator.results import Score\n"
        "from evaluator.results.figures import summarize\n"
        "from evaluator.reports import notice\n"
        "from evaluator.reports.history import history\n"
    )
    assert _past_an_init("reports", _imports(module)) == ["evaluator.results.figures", "evaluator.reports"]
    assert not _has_all(module) and not _is_private(module)
    module.write_text('"""A module."""\n\nimport json\n\n__all__ = ["x"]\n\nx = json.dumps(1)\n')
    assert _has_all(module)
    assert _is_private(tmp_path / "_helpers.py") and not _is_private(tmp_path / "__init__.py")


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("import json\nfrom evaluator.trace import Trace\nfrom evaluator.cli import main\n")
    assert _upward("metrics", _imports(module)) == ["evaluator.cli"]
