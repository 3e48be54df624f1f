"""The commands that need neither Langfuse nor a judge (`--help`, `lint`, `report`, `compare` on the
local store) load neither the Langfuse SDK nor `openai`: each runs in a fresh interpreter, which then
lists the heavy packages it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import ROOT

HEAVY = ("langfuse", "openai")
# No Langfuse keys or judge endpoint from the shell (a module fixture runs before the autouse cleaning)
_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))},
    "PYTHONPATH": str(ROOT),
}
_LOADED = f"""
import json, sys
HEAVY = {HEAVY!r}
from evaluator.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m for m in HEAVY if m in sys.modules)
print(json.dumps({{"code": code, "loaded": loaded}}), file=sys.stderr)
"""


def _python(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=_ENV,
        check=False,
        timeout=120,
    )


def _command(project: Path, *args: str) -> tuple[int, list[str], str]:
    """The command's exit code, the heavy packages it loaded, and what it wrote."""
    done = _python(project, "-c", _LOADED, *args)
    *said, last = done.stderr.strip().splitlines()
    found = json.loads(last)
    return found["code"], found["loaded"], done.stdout + "\n".join(said)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled project (its store in a temporary folder) with two stored runs of the same two
    scenarios (embedded, no judge)."""
    project = tmp_path_factory.mktemp("project")
    config = (ROOT / "evaluator.toml").read_text()
    config = config.replace('path = ".evaluator/evaluator.db"', f'path = "{project / "evaluator.db"}"')
    config = config.replace('dir = "prompts"', f'dir = "{ROOT / "prompts"}"')
    config = config.replace('"demo_agents/', f'"{ROOT}/demo_agents/')
    (project / "evaluator.toml").write_text(config)
    scenarios = [
        str(ROOT / "scenarios/research" / f"research-{name}.yaml") for name in ("pdf-only", "pdf-then-web")
    ]
    for _ in range(2):
        done = _python(project, "-m", "evaluator", "run", *scenarios)
        assert done.returncode in (0, 1), done.stderr
    return project


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("lint", str(ROOT / "scenarios")),
        ("report",),
        ("report", "--by", "agent"),
        ("report", "--json"),
        ("report", "--html", "report.html"),
        ("compare", "latest", "previous"),
    ],
    ids=" ".join,
)
def test_local_commands_load_neither_the_langfuse_sdk_nor_openai(
    two_runs: Path, args: tuple[str, ...]
) -> None:
    code, loaded, text = _command(two_runs, *args)
    assert code in (0, 1), text
    assert "Traceback" not in text
    assert loaded == [], f"{' '.join(args)} imported {loaded}"


def test_the_check_sees_the_sdk_where_a_command_loads_it(two_runs: Path) -> None:
    """The control: `run` records its traces through the SDK (embedded too), so the same measure shows
    `langfuse` loaded; `sync` without keys stops at the missing keys, before loading it."""
    code, loaded, _ = _command(two_runs, "run", str(ROOT / "scenarios/research/research-pdf-only.yaml"))
    assert code in (0, 1)
    assert "langfuse" in loaded
    code, loaded, text = _command(two_runs, "sync")
    assert code == 2 and "LANGFUSE_PUBLIC_KEY" in text, text
    assert loaded == []
