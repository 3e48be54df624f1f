"""Loading a target: every failure is a ConfigError naming what to fix, never a traceback."""

import uuid
from pathlib import Path

import pytest

from evaluator.errors import ConfigError
from evaluator.run import load_target


@pytest.mark.parametrize(
    ("source", "spec", "message"),
    [
        (
            "def run(request):\n    return 'ok'\n",
            "nosuchmodule_xyz:run",
            'cannot import module "nosuchmodule_xyz"',
        ),
        ("def run(request):\n    return 'ok'\n", "broken_{n}:walk", 'has no attribute "walk"'),
        ("def run(request:\n", "broken_{n}:run", "SyntaxError"),
        ("raise RuntimeError('no config')\n", "broken_{n}:run", "RuntimeError: no config"),
        ("run = 3\n", "broken_{n}:run", "is not callable"),
        ("", "no-colon", "is not of the form module:callable"),
    ],
)
def test_load_errors(tmp_path: Path, source: str, spec: str, message: str) -> None:
    name = f"broken_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(source)
    with pytest.raises(ConfigError, match=message):
        load_target(spec.replace("broken_{n}", name), base_dir=tmp_path, name="demo")


def test_loads_a_callable(tmp_path: Path) -> None:
    (tmp_path / "good_target_mod.py").write_text("def run(request):\n    return 'ok'\n")
    assert load_target("good_target_mod:run", base_dir=tmp_path)(None) == "ok"  # type: ignore[arg-type]


def test_a_module_the_target_imports_that_is_not_installed_is_named_with_the_fix(tmp_path: Path) -> None:
    name = f"needs_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text("import nosuchpackage_xyz\n\ndef run(request):\n    return 'ok'\n")
    with pytest.raises(ConfigError) as info:
        load_target(f"{name}:run", base_dir=tmp_path, name="demo")
    assert str(info.value).startswith(
        f'target "demo" ([targets.demo] entry in evaluator.toml): module "{name}" imports '
        '"nosuchpackage_xyz", which is not installed'
    )
    assert 'Fix: install the package that provides "nosuchpackage_xyz"' in str(info.value)
