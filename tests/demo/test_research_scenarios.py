"""The bundled scenarios: well-formed, and with the outcomes scenarios/research/README.md promises.

The suite runs through the evaluator's command line (the contract users and CI rely on), offline, in a
child process with Langfuse and OpenAI settings removed from its environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.demo.tracing import REPO

SCENARIOS = REPO / "scenarios" / "research"
TOP_KEYS = {"id", "description", "tags", "target", "input", "expected"}
EXPECTED_KEYS = {"agents", "tools", "trajectory", "answer", "agent_tools"}

# scenario id -> (status with the production prompts (research v1), status with research v2)
OUTCOMES = {
    "research-pdf-only": ("failed", "passed"),
    "research-rag-origin-trajectory": ("failed", "passed"),
    "research-rag-evaluation": ("failed", "passed"),
    "research-bird-allow-web": ("passed", "passed"),
    "research-judge-agreement-lenient": ("passed", "passed"),
    "research-web-news": ("passed", "passed"),
    "research-pdf-then-web": ("passed", "passed"),
    "research-web-fallback": ("passed", "passed"),
    "research-clarify-vague": ("passed", "passed"),
    "research-clarify-help": ("passed", "passed"),
    "research-clarify-wordy-request": ("failed", "failed"),
}

CONFIG = """
[targets.research]
entry = "demo_agents.research:run"
agents = ["orchestrator", "research", "clarification"]
tools = ["pdf_retrieval", "web_search"]

[store]
path = "{store}"

[prompts]
dir = "{prompts}"
"""


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenario_file_follows_the_design_format(path: Path) -> None:
    scenario = _load(path)

    assert set(scenario) == TOP_KEYS
    assert scenario["id"] == path.stem and re.fullmatch(r"research-[a-z0-9][a-z0-9._-]*", scenario["id"])
    assert scenario["target"] == "research" and "research" in scenario["tags"]
    assert set(scenario["expected"]) <= EXPECTED_KEYS
    assert set(scenario["expected"]["agents"]) <= {"include", "exclude", "allow", "strict"}
    assert set(scenario["expected"]["tools"]) <= {"include", "exclude", "allow", "strict"}
    assert scenario["expected"]["answer"]["criteria"].strip()


def test_every_scenario_has_a_documented_outcome() -> None:
    readme = (SCENARIOS / "README.md").read_text(encoding="utf-8")

    assert {p.stem for p in SCENARIOS.glob("*.yaml")} == set(OUTCOMES)
    for scenario_id in OUTCOMES:
        assert f"`{scenario_id}`" in readme


def _run_suite(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    config = tmp_path / "evaluator.toml"
    config.write_text(CONFIG.format(store=tmp_path / "evaluator.db", prompts=REPO / "prompts"))
    output = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))}
    env["PYTHONPATH"] = str(REPO)
    command = [sys.executable, "-m", "evaluator", "run", str(SCENARIOS), "--config", str(config)]
    command += ["--no-judge", "--output", str(output), *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert output.exists(), done.stderr
    return done.returncode, json.loads(output.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("pins", "column"), [((), 0), (("--prompt", "agents/research=2"), 1)], ids=["v1", "v2"]
)
def test_suite_outcomes_per_research_prompt_version(
    tmp_path: Path, pins: tuple[str, ...], column: int
) -> None:
    code, results = _run_suite(tmp_path, *pins)
    statuses = {r["scenario_id"]: r["status"] for r in results["results"]}

    assert statuses == {scenario_id: outcome[column] for scenario_id, outcome in OUTCOMES.items()}
    assert code == 1  # some scenario failed, in both columns (the wordy request)
    assert results["run"]["prompt_versions"]["agents/research"] == [column + 1]
    if column == 0:
        (origin,) = [r for r in results["results"] if r["scenario_id"] == "research-rag-origin-trajectory"]
        assert origin["trajectory"]["actual"] == ["pdf_retrieval", "web_search"]
        assert (origin["trajectory"]["partial_path"], origin["trajectory"]["full_path"]) == (1.0, 0.0)
