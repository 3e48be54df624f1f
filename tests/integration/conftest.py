"""Fixtures for end-to-end tests: the bundled demo project with its state in a temporary folder."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluator.cli import main
from tests.standin.langfuse_server import LangfuseStandIn

ROOT = Path(__file__).resolve().parents[2]
Cli = Callable[..., tuple[int, str]]
FLUSH, DELIVERY = 10, 15  # the demo project's deadlines: room for the stand-in on a loaded machine


def langfuse_deadlines(
    project: Path, *, flush: float = FLUSH, delivery: float = DELIVERY, **more: float
) -> None:
    """Other `[langfuse]` deadlines for one test (one whose Langfuse fails on purpose would otherwise
    wait out the project's)."""
    config = (project / "evaluator.toml").read_text()
    config = config.replace(f"flush_timeout_seconds = {FLUSH}\n", f"flush_timeout_seconds = {flush}\n")
    config = config.replace(
        f"delivery_deadline_seconds = {DELIVERY}\n", f"delivery_deadline_seconds = {delivery}\n"
    )
    config += "".join(f"{name} = {value}\n" for name, value in more.items())
    (project / "evaluator.toml").write_text(config)


@pytest.fixture
def demo_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled evaluator.toml, with the store (and prompts, if copied) under tmp_path."""
    config = (ROOT / "evaluator.toml").read_text()
    config = config.replace('path = ".evaluator/evaluator.db"', f'path = "{tmp_path / "evaluator.db"}"')
    config = config.replace('dir = "prompts"', f'dir = "{ROOT / "prompts"}"')
    config = config.replace('"demo_agents/', f'"{ROOT}/demo_agents/')  # files a target names, as bundled
    config += f"\n[langfuse]\nflush_timeout_seconds = {FLUSH}\ndelivery_deadline_seconds = {DELIVERY}\n"
    (tmp_path / "evaluator.toml").write_text(config)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def without_per_agent(project: Path) -> None:
    """The project's evaluator.toml without the demo's per-agent declarations (agent_tools,
    tool_schemas): for tests that pin what the built-in metrics alone give."""
    config = project / "evaluator.toml"
    text = config.read_text()
    config.write_text(text[: text.index("# Per-agent analysis")] + text[text.index("[run]") :])


@pytest.fixture
def with_langfuse(
    demo_project: Path, langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The demo project with LANGFUSE_* pointing at the stand-in, under a fresh key pair."""
    public_key, secret_key = langfuse_standin.new_keys()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse_standin.base_url)
    return demo_project


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """Run `evaluator ARGS...` in-process as the console script does: (exit code, stdout + stderr)."""

    def invoke(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["evaluator", *args])
        with pytest.raises(SystemExit) as info:
            main()
        captured = capsys.readouterr()
        return int(info.value.code or 0), captured.out + captured.err

    return invoke
