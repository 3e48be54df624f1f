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
