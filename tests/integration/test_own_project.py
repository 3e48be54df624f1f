"""A team's own project, as README's configuration and target sections describe it: an evaluator.toml,
a scenario and a target of its own, and no prompts/ folder (the judges' prompts come with the package).
Before the judges' prompts were package data, such a project's `run` with a judge endpoint was bad input
(`unknown prompt "evaluation/quality"`), and `prompts push` pushed nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator import TargetRequest
from tests.integration.conftest import Cli
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn

SCENARIO = """\
id: refund-time
target: support
input: How long do refunds take?
expected:
  agents: {include: [support]}
  tools: {include: [kb_search]}
  answer:
    criteria: States that refunds take 5 business days.
    ground_truth: five working days
"""


def support(request: TargetRequest) -> str:
    lf = request.langfuse
    with (
        lf.start_as_current_observation(as_type="agent", name="support"),
        lf.start_as_current_observation(as_type="tool", name="kb_search") as tool,
    ):
        tool.update(output="Refunds take 5 business days.")
    return "Refunds take 5 business days."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evaluator.toml").write_text(
        f'[targets.support]\nentry = "{__name__}:support"\nagents = ["support"]\ntools = ["kb_search"]\n'
        '[judge]\nmodel = "judge-model"\n'
    )
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios/refund.yaml").write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as standin:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", standin.base_url)
        yield standin


def test_a_project_without_prompts_is_judged_with_the_packages_judge_prompts(
    project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    assert not (project / "prompts").exists()
    code, text = cli("lint", "scenarios")
    assert code == 0, text
    code, text = cli("run", "--output", "results.json")
    assert code == 0, text
    (result,) = json.loads((project / "results.json").read_text())["results"]
    assert result["judge_status"] == {"status": "scored", "reason": ""}
    assert result["quality"]["prompt"] == {"name": "evaluation/quality", "version": 1}
    assert result["correctness"]["verdict"] == "correct"  # asked: not an exact match
    assert len(judge.requests) == 2


def test_prompts_push_in_a_project_without_prompts_pushes_the_judges_prompts(
    project: Path, langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    public_key, secret_key = langfuse_standin.new_keys()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse_standin.base_url)
    code, text = cli("prompts", "push")
    assert code == 0, text
    assert "4 created, 0 already in Langfuse" in text
    for judge in ("agent", "correctness", "quality", "turn_quality"):
        assert f"created  evaluation/{judge}@v1 (labels: production)" in text
