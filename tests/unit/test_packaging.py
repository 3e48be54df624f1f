"""The package as a team installs it into its own project: what pyproject.toml declares for the build,
and what the wheel holds."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_build_backend_declared_can_read_the_license_expression() -> None:
    """`license = "MIT"` (an SPDX expression, PEP 639) is read by setuptools 77 and later; older ones
    refuse the project table ("`project.license` must be valid exactly by one definition"), so a build
    without isolation (`pip wheel --no-build-isolation`, distribution packagers) on the minimum the
    build-system table allowed failed."""
    assert isinstance(PYPROJECT["project"]["license"], str)
    (backend,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", backend)
    assert minimum is not None, backend
    assert int(minimum.group(1)) >= 77


def _wheel(tmp_path: Path) -> Path:
    """The wheel `pip wheel` builds from the sources (offline, with .venv's build backend), built from a
    copy so that the checkout gets no build/ folder."""
    source = tmp_path / "source"
    for rel in ("pyproject.toml", "README.md"):
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, source / rel)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "evaluator", source / "evaluator", symlinks=True, ignore=ignore)
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    done = subprocess.run(
        [*build, "-w", str(tmp_path / "dist"), str(source)], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    return wheel


def test_the_wheel_holds_the_judges_prompts_and_they_are_found_from_a_project_of_its_own(
    tmp_path: Path,
) -> None:
    """An installed package reads the judges' prompts from itself, whatever the working folder: the
    wheel held only the modules and py.typed, so a project without a prompts/ copy of its own could not
    run a judge (`unknown prompt "evaluation/quality"`)."""
    wheel = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert "evaluator/py.typed" in names
        for judge in ("agent", "correctness", "quality", "turn_quality"):
            rel = f"evaluation/{judge}/v1.prompt"
            assert archive.read(f"evaluator/prompts/bundled/{rel}") == (ROOT / "prompts" / rel).read_bytes()
        archive.extractall(tmp_path / "site")
    project = tmp_path / "project"
    project.mkdir()
    code = (
        "from pathlib import Path\n"
        "from evaluator.prompts import BUNDLED_PROMPTS, PromptLibrary\n"
        "print(PromptLibrary(Path('prompts'), defaults=BUNDLED_PROMPTS).get('evaluation/quality').path)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, env=env, check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (
        Path(done.stdout.strip()) == tmp_path / "site/evaluator/prompts/bundled/evaluation/quality/v1.prompt"
    )


def _imported_modules() -> set[str]:
    """Every module the package's code names in an import (each name of `from X import a, b` is tried
    as X.a too: it may be a submodule), the package's own and the standard library's left out."""
    names: set[str] = set()
    for path in (ROOT / "evaluator").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] not in sys.stdlib_module_names | {"evaluator"}}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_distribution_the_package_imports_from_is_a_declared_dependency() -> None:
    """The rule pyproject's comments state ("Imported directly (langfuse brings them)"): a distribution
    the code imports is declared, with bounds, not left to another package's dependencies, which may
    drop or move it in a release inside our bounds (a user's install then fails at import)."""
    owners: dict[Path, str] = {}
    for distribution in importlib.metadata.distributions():
        for file in distribution.files or ():
            owners[Path(str(distribution.locate_file(file)))] = _canonical(distribution.name)
    declared = {_canonical(re.split(r"[<>=!~\[; ]", d)[0]) for d in PYPROJECT["project"]["dependencies"]}
    undeclared: dict[str, set[str]] = {}
    for module in sorted(_imported_modules()):
        try:
            spec = importlib.util.find_spec(module)
        except ImportError:
            continue
        if spec is None or not spec.has_location or spec.origin is None:
            continue  # a name imported from a module, not a module; or a namespace package
        owner = owners.get(Path(spec.origin))
        assert owner is not None, f"{module}: {spec.origin} belongs to no installed distribution"
        if owner not in declared:
            undeclared.setdefault(owner, set()).add(module)
    assert undeclared == {}, undeclared


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_what_building_the_package_writes_into_the_checkout_is_ignored(tmp_path: Path) -> None:
    """README's "In your own project" builds the wheel with `python -m build` in a clone: its dist/
    (and setuptools' build/ and egg-info) are no change to commit."""
    git = str(shutil.which("git"))
    (tmp_path / ".gitignore").write_bytes((ROOT / ".gitignore").read_bytes())
    subprocess.run([git, "init", "-q"], cwd=tmp_path, check=True)
    written = ["dist/x-0.1.0-py3-none-any.whl", "build/lib/evaluator/__init__.py", "x.egg-info/PKG-INFO"]
    for rel in written:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    ignored = subprocess.run(
        [git, "check-ignore", *written], check=False, cwd=tmp_path, capture_output=True, text=True
    )
    assert sorted(ignored.stdout.split()) == sorted(written), ignored.stderr
