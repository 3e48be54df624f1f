"""Real frameworks, traced the documented way, give the right verdict for the right reasons through
every path: `evaluator run` embedded and with keys (a subprocess each, against the loopback stand-in),
`validate --trace FILE` (the stored observations page) and `validate --trace-id` (read back)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluator.langfuse import LangfuseConnection
from evaluator.results import JudgeStatus, ScenarioResult, evaluate
from evaluator.scenarios import Scenario
from evaluator.trace import Trace, load_trace_file, read_trace
from tests.frameworks.cases import CASES, TARGETS, Case
from tests.standin.langfuse_server import LangfuseStandIn

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {case.id: case for case in CASES}


def _project(folder: Path) -> Path:
    lines = [f'[targets.{name}]\nentry = "{entry}"\n' for name, entry in TARGETS.items()]
    lines.append(f'[store]\npath = "{folder / "evaluator.db"}"\n')
    lines.append("[langfuse]\nflush_timeout_seconds = 10\ndelivery_deadline_seconds = 20\n")
    (folder / "evaluator.toml").write_text("\n".join(lines))
    scenarios = folder / "scenarios"
    scenarios.mkdir()
    for case in CASES:
        document = {"id": case.id, "target": case.target, "input": case.input, "expected": case.expected}
        (scenarios / f"{case.id}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return folder


def _start(project: Path, output: str, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    command = ["run", "scenarios", "--output", output, "--concurrency", "2", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "evaluator", *command],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _results(project: Path, output: str, process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, _ = process.communicate(timeout=240)
    assert process.returncode in (0, 1), stdout
    document: dict[str, Any] = json.loads((project / output).read_text())
    return {r["scenario_id"]: r for r in document["results"]} | {"_stdout": stdout}


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    project = _project(tmp_path_factory.mktemp("frameworks"))
    with LangfuseStandIn() as standin:
        public_key, secret_key = standin.new_keys()
        keys = {"LANGFUSE_PUBLIC_KEY": public_key, "LANGFUSE_SECRET_KEY": secret_key}
        keys["LANGFUSE_BASE_URL"] = standin.base_url
        # Both runs at once, into one store (each process spends seconds importing the frameworks).
        embedded = _start(project, "embedded.json", _base_env())
        connected = _start(project, "connected.json", _base_env() | keys, "--verify-langfuse")
        embedded_results = _results(project, "embedded.json", embedded)
        connected_results = _results(project, "connected.json", connected)
        yield {"embedded": embedded_results, "connected": connected_results, "project": project, "keys": keys}
        assert standin.problems() == []


def _check(case: Case, result: dict[str, Any]) -> None:
    assert case.status is None or result["status"] == case.status, (
        case.id,
        result["workflow"],
        result["answer"],
        result.get("error"),
    )
    for kind, fields in (("agents", case.agents), ("tools", case.tools)):
        for name, values in fields.items():
            assert result["workflow"][kind][name] == values, (case.id, kind, name, result["workflow"])
    assert [h["to"] for h in result["handoffs"]] == case.handoffs, (case.id, result["handoffs"])
    assert bool(result["warnings"]) == case.warns, (case.id, result["warnings"])
    if case.flow is not None:
        assert result["trajectory"]["flow"]["actual"] == case.flow, (case.id, result["trajectory"])


@pytest.mark.parametrize("mode", ["embedded", "connected"])
def test_run_gives_the_right_verdict_for_the_right_reasons(runs: dict[str, Any], mode: str) -> None:
    results = runs[mode]
    for case in CASES:
        _check(case, results[case.id])


def test_verify_langfuse_finds_the_stored_traces_give_the_same_verdicts(runs: dict[str, Any]) -> None:
    stdout = runs["connected"]["_stdout"]
    assert "differ" not in stdout.lower() or "0 differ" in stdout.lower(), stdout


def test_verify_langfuse_is_sure_of_every_trace(runs: dict[str, Any]) -> None:
    """In-process capture and Langfuse order calls that share a millisecond the same way, so no
    verdict is left unsure (pydantic-ai's parallel tool calls)."""
    stdout = runs["connected"]["_stdout"]
    assert f"Verified in Langfuse: {len(CASES)} traces give the same verdict" in stdout, stdout


def _verdict(result: ScenarioResult) -> dict[str, Any]:
    document = result.to_json()
    return {k: document[k] for k in ("status", "workflow", "handoffs", "trajectory", "answer", "warnings")}


def test_validate_from_file_and_by_trace_id_give_the_run_verdict(
    runs: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in runs["keys"].items():
        monkeypatch.setenv(name, value)
    connection = LangfuseConnection.from_env()
    assert connection is not None
    for case in CASES:
        ran = runs["connected"][case.id]
        scenario = Scenario.model_validate(
            {"id": case.id, "target": case.target, "input": case.input, "expected": case.expected}
        )
        pages = connection.traces.observation_pages(ran["trace_id"])
        saved = tmp_path / f"{case.id}.json"
        saved.write_text(json.dumps(pages[0]))
        by_id = read_trace(connection.traces, ran["trace_id"], expected_observations=ran["observations"])
        for trace in (load_trace_file(saved), by_id.trace):
            again = _evaluate(scenario, trace, None)  # as validate does: the answer from the trace
            expected = {
                k: ran[k] for k in ("status", "workflow", "handoffs", "trajectory", "answer", "warnings")
            }
            assert _verdict(again) == expected, case.id
    connection.tracing.shutdown(5)


def _evaluate(scenario: Scenario, trace: Trace, output: Any) -> ScenarioResult:
    return evaluate(scenario, trace, judge_status=JudgeStatus(status="skipped", reason="-"), output=output)
