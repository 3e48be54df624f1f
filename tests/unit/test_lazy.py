"""Lazy packages (evaluator._lazy): every name a package declares under `if TYPE_CHECKING:` (what type
checkers and readers see) is the very object its home module holds, and the fully lazy packages declare
exactly their `__all__`."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from evaluator._lazy import lazy_names

FULLY_LAZY = ("evaluator", "evaluator.langfuse", "evaluator.run")


def _declared(package: str) -> list[tuple[str, str, str]]:
    """(public name, home module, attribute) of each import under the package's `if TYPE_CHECKING:`."""
    path = Path(importlib.import_module(package).__file__ or "")
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                found += [(a.asname or a.name, statement.module, a.name) for a in statement.names]
    return found


@pytest.mark.parametrize(
    "package", [*FULLY_LAZY, "evaluator.judge", "evaluator.metrics", "evaluator.results"]
)
def test_each_declared_name_is_its_home_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    declared = _declared(package)
    assert declared
    for public, home, attribute in declared:
        assert getattr(module, public) is getattr(importlib.import_module(home), attribute), public
        assert public in dir(module)


@pytest.mark.parametrize("package", FULLY_LAZY)
def test_a_fully_lazy_package_declares_exactly_its_all(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(public for public, _, _ in _declared(package)) == sorted(module.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import evaluator.run

    with pytest.raises(AttributeError, match=r"module 'evaluator\.run' has no attribute 'nothing_here'"):
        _ = evaluator.run.nothing_here  # type: ignore[attr-defined]


def test_a_name_is_imported_on_first_use_and_kept(tmp_path: Path) -> None:
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from evaluator._lazy import lazy_names\n"
        "__getattr__, __dir__ = lazy_names(\n"
        '    __name__, {"VALUE": "lazypkg.home", "OTHER": "lazypkg.home:VALUE"}\n'
        ")\n"
    )
    (package / "home.py").write_text("VALUE = object()\n")
    script = (
        "import sys, lazypkg\n"
        "assert 'lazypkg.home' not in sys.modules\n"
        "first = lazypkg.VALUE\n"
        "assert 'lazypkg.home' in sys.modules and 'VALUE' in vars(lazypkg)\n"
        "assert lazypkg.VALUE is first and lazypkg.OTHER is first\n"
        "assert {'VALUE', 'OTHER'} <= set(dir(lazypkg))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={"PYTHONPATH": f"{tmp_path}:{Path(__file__).resolve().parents[2]}"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_lazy_names_gives_the_module_hooks() -> None:
    get, listed = lazy_names("evaluator", {"ConfigError": "evaluator.errors"})
    from evaluator.errors import ConfigError

    assert get("ConfigError") is ConfigError
    assert "ConfigError" in listed()


@pytest.mark.parametrize("package", FULLY_LAZY)
def test_the_public_dataclasses_annotations_resolve(package: str) -> None:
    """A name kept to `if TYPE_CHECKING:` in a module to spare an import would break the annotations of
    its public dataclasses at run time (`typing.get_type_hints`, as pydantic and other tools read them)."""
    module = importlib.import_module(package)
    classes = [getattr(module, name) for name in module.__all__]
    checked = [c for c in classes if isinstance(c, type) and dataclasses.is_dataclass(c)]
    assert checked
    for cls in checked:
        typing.get_type_hints(cls)
