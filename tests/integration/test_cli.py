"""The command line: exit codes, bad-input messages, output files, and the store, on a toy project."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluator.cli import app, main
from evaluator.errors import ConfigError
from evaluator.results import ScenarioResult
from evaluator.run import SuiteOptions, run_suite

ROOT = Path(__file__).resolve().parents[2]
TOY_CONFIG = """\
[targets.toy]
entry = "toy_targets:by_input"
agents = ["orchestrator", "worker"]
tools = ["lookup"]
[run]
timeout_seconds = 5
[store]
path = "state/evaluator.db"
"""
PASSING = """\
id: toy-pass
tags: [smoke]
target: toy
input: hello
expected:
  agents: {include: [worker]}
  tools: {include: [lookup]}
  trajectory: {flow: lookup, tools: [lookup]}
  answer: {contains: ["found hello"]}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evaluator.toml").write_text(TOY_CONFIG)
    (tmp_path / "toy_targets.py").write_text((ROOT / "tests/integration/toy_targets.py").read_text())
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios/pass.yaml").write_text(PASSING)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    return tmp_path


def _run(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process through main(), as the console script does."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out + captured.err


def test_run_all_passed_exit_0_output_and_store(project: Path) -> None:
    code, out, _ = _run("run", "--output", "out/results.json", "--run-name", "nightly")
    assert code == 0, out
    assert "1 scenarios: 1 passed" in out and "(run nightly, run-" in out
    document = json.loads((project / "out/results.json").read_text())
    assert document["run"]["name"] == "nightly"
    assert document["run"]["totals"] == {"scenarios": 1, "passed": 1, "failed": 0, "error": 0}
    [result] = document["results"]
    assert result["status"] == "passed"
    assert result["workflow"]["tools"]["included"] == ["lookup"]
    assert result["trajectory"]["full_workflow"] == 1.0
    assert result["quality"] is None and result["judge_status"]["status"] == "skipped"
    with sqlite3.connect(project / "state/evaluator.db") as db:
        assert db.execute("SELECT status FROM results").fetchall() == [("passed",)]
        # 3 workflow, 4 trajectory and answer_contains (DESIGN.md, Scores)
        assert db.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 8
        assert db.execute("SELECT finished_at IS NOT NULL FROM runs").fetchone()[0] == 1


def test_a_run_name_a_stored_run_has_is_said_before_the_run_with_the_fix(project: Path) -> None:
    assert _run("run", "--run-name", "nightly")[0] == 0
    first = sqlite3.connect(project / "state/evaluator.db").execute("SELECT id FROM runs").fetchone()[0]
    code, out, err = _run("run", "--run-name", "nightly")
    assert code == 0, out + err
    assert (
        f'warning: --run-name "nightly" is the name of a stored run already ({first}): by that name'
        in " ".join(err.split())
    )
    assert 'Fix: give each run its own name (e.g. "nightly-2")' in " ".join(err.split())
    assert "warning" not in _run("run", "--run-name", "nightly-2")[2]


def test_a_baseline_with_no_scenario_in_common_compares_nothing_and_exits_2(project: Path) -> None:
    assert _run("run", "--run-name", "base")[0] == 0
    (project / "other").mkdir()
    (project / "other/renamed.yaml").write_text(PASSING.replace("id: toy-pass", "id: toy-renamed"))
    code, out, err = _run("run", "other", "--baseline", "base")
    said = " ".join(err.split())
    assert code == 2, out + err  # as `compare` exits: the regression gate could not run, never a quiet pass
    assert (
        "--baseline base" in said and "has no scenario in common with this run: nothing was compared" in said
    )
    assert "Fix: give a baseline run of the same scenarios" in said


def test_run_with_a_failure_and_an_error_exit_1(project: Path) -> None:
    failing = PASSING.replace("toy-pass", "toy-fail").replace(
        "include: [worker]", "include: [worker, helper]"
    )
    (project / "scenarios/fail.yaml").write_text(failing)
    (project / "evaluator.toml").write_text(TOY_CONFIG.replace('"worker"]', '"worker", "helper"]'))
    (project / "scenarios/crash.yaml").write_text("id: toy-crash\ntarget: toy\ninput: raise\n")
    code, out, _ = _run("run", "--config", "evaluator.toml")
    assert code == 1, out
    assert "3 scenarios: 1 passed, 1 failed, 1 error" in out
    assert "missing helper" in out
    assert "RuntimeError" in out  # the table folds the message; the JSON has it whole


def test_tag_filter_and_no_match(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run("run", "--tag", "smoke")
    assert code == 0, out
    code, text = _main(monkeypatch, capsys, "run", "--tag", "nope")
    assert code == 2
    assert "no scenarios match --tag nope" in text


def test_bad_input_is_reported_without_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "scenarios/typo.yaml").write_text(
        PASSING.replace("toy-pass", "typo").replace("tools: {", "tols: {")
    )
    (project / "scenarios/agent.yaml").write_text(
        PASSING.replace("toy-pass", "agent").replace("[worker]", "[wroker]")
    )
    code, text = _main(monkeypatch, capsys, "run")
    assert code == 2
    assert 'expected.tols: unknown key "tols" (did you mean "tools"?)' in text
    assert 'unknown agent "wroker" for target "toy" (did you mean "worker"?)' in text
    assert "2 problem(s); fix them and run the command again." in text
    assert "Traceback" not in text
    code, text = _main(monkeypatch, capsys, "lint", "scenarios")
    assert code == 2 and "2 problem(s)" in text


def test_bad_pins_and_bad_scenarios_are_reported_together_each_naming_its_pin(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with (project / "evaluator.toml").open("a") as config:
        config.write(f'[prompts]\ndir = "{ROOT / "prompts"}"\n')
    (project / "scenarios/bad.yaml").write_text(PASSING.replace("id: toy-pass", "id: toy-bad\nnope: 1"))
    code, text = _main(monkeypatch, capsys, "run", "--prompt", "agents/research=99", "--prompt", "nope=1")
    assert code == 2, text
    assert "--prompt agents/research=99: no version 99 of agents/research. Fix: use one of 1, 2" in text
    assert '--prompt nope=1: unknown prompt "nope"' in text
    assert 'bad.yaml: nope: unknown key "nope"' in text
    assert "3 problem(s)" in text


def test_a_prompt_pinned_to_two_versions_is_bad_input_naming_both(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with (project / "evaluator.toml").open("a") as config:
        config.write(f'[prompts]\ndir = "{ROOT / "prompts"}"\n')
    pins = ("--prompt", "agents/research=2", "--prompt", "agents/research=1", "--prompt", "agents/research=2")
    code, text = _main(monkeypatch, capsys, "run", *pins)
    assert code == 2, text
    said = " ".join(text.split())
    assert "--prompt agents/research=1: agents/research is pinned to version 2 too" in said
    assert "Fix: pin agents/research once" in said
    assert "1 problem(s)" in said  # the same pin twice is no conflict
    assert not (project / "state").exists()  # nothing ran


def test_bad_prompt_pin_and_unknown_target(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _main(monkeypatch, capsys, "run", "--prompt", "agents/research")
    assert code == 2 and "expected NAME=VERSION" in text
    code, text = _main(monkeypatch, capsys, "run", "--prompt", "agents/research=1")
    assert code == 2 and 'unknown prompt "agents/research"' in text
    code, text = _main(monkeypatch, capsys, "run", "--target", "tyo")
    assert code == 2 and 'unknown target "tyo" (did you mean "toy"?)' in text


def test_bad_config(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "evaluator.toml").write_text("[run]\nconcurency = 2\n")
    code, text = _main(monkeypatch, capsys, "run")
    assert code == 2 and 'run.concurency: unknown key "concurency" (did you mean "concurrency"?)' in text


def test_lint_ok(project: Path) -> None:
    code, out, _ = _run("lint", "scenarios")
    assert code == 0 and "1 scenario files OK" in out


def test_lint_takes_a_scenario_for_validate_only_with_no_target_and_says_so(project: Path) -> None:
    (project / "scenarios/check.yaml").write_text(
        PASSING.replace("id: toy-pass", "id: toy-check").replace("target: toy\n", "")
    )
    code, out, err = _run("lint", "scenarios")
    assert code == 0, out + err  # README: a scenario for `validate` needs no target
    assert "2 scenario files OK (1 with no target: for `validate` only, `run` needs one)" in " ".join(
        out.split()
    )


def test_a_run_stopped_by_bad_input_leaves_no_output_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project / "evaluator.toml"
    config.write_text(config.read_text().replace("toy_targets:by_input", "toy_targets:no_such_target"))
    code, text = _main(monkeypatch, capsys, "run", "--output", "out/results.json")
    assert code == 2 and "no_such_target" in text, text
    assert not (project / "out").exists()


def test_require_delivery_without_langfuse_keys_is_bad_input_before_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, text = _main(monkeypatch, capsys, "run", "--require-delivery")
    assert code == 2 and "--require-delivery needs Langfuse" in text, text
    assert not (project / "state").exists()  # nothing ran


def test_verify_langfuse_without_langfuse_keys_is_bad_input_before_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, text = _main(monkeypatch, capsys, "run", "--verify-langfuse")
    assert code == 2, text  # a CI gate that verified nothing never goes green
    assert "--verify-langfuse needs Langfuse" in text and "Fix: set the Langfuse keys" in text, text
    assert not (project / "state").exists()  # nothing ran


def test_a_run_named_like_a_run_keyword_is_bad_input(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _main(monkeypatch, capsys, "run", "--run-name", "latest")
    assert code == 2 and '--run-name "latest" is the word that names a stored run' in text, text
    assert not (project / "state").exists()  # nothing ran


@pytest.mark.parametrize(
    ("variable", "command"),
    [("EVALUATOR_JUDGE_BASE_URL", ["run"]), ("OPENAI_BASE_URL", ["run", "--no-judge"])],
)
def test_an_llm_base_url_without_its_scheme_is_refused_before_the_run(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    command: list[str],
) -> None:
    monkeypatch.setenv(variable, "127.0.0.1:18401/v1")  # not a judge that is down: bad input
    code, text = _main(monkeypatch, capsys, *command)
    assert code == 2 and f"Fix: write the scheme too: {variable}=http://127.0.0.1:18401/v1" in text, text
    assert not (project / "state").exists()  # nothing ran


def test_an_output_below_a_file_is_refused_before_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "out").write_text("a file")
    code, text = _main(monkeypatch, capsys, "run", "--output", "out/results.json")
    assert code == 2 and "--output out/results.json cannot be written (out is a file, not a folder)" in text
    assert not (project / "state/evaluator.db").exists()  # refused before the store was made


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        ("--junit out/junit.xml", "out is a file, not a folder"),
        ("--junit ro/junit.xml", "ro is not writable"),
        ("--output ro/results.json", "ro is not writable"),
    ],
)
def test_a_file_the_run_cannot_write_is_refused_before_the_run(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
    problem: str,
) -> None:
    """--junit, like --output: found before the run, not after it (where exit 2 hid the run's result)."""
    (project / "out").write_text("a file")
    (project / "ro").mkdir()
    real_access = os.access  # a read-only folder, even for root: os.access says so
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != Path("ro") and real_access(path, mode))
    code, text = _main(monkeypatch, capsys, "run", *option.split())
    assert code == 2 and f"{option} cannot be written ({problem}). Fix: choose a writable path." in text, text
    assert not (project / "state").exists()  # refused before the store was made


@pytest.mark.parametrize("command", [["lint", "scenarios"], ["run", "--baseline", "latest"]])
def test_a_threshold_naming_no_gated_figure_is_bad_input_before_anything_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    with (project / "evaluator.toml").open("a") as config:
        config.write("[compare.thresholds]\nworkflow_pas_rate = 7\n")
    code, text = _main(monkeypatch, capsys, *command)
    assert code == 2, text
    assert (
        'evaluator.toml: compare.thresholds.workflow_pas_rate: unknown figure "workflow_pas_rate" '
        '(did you mean "workflow_pass_rate"?)' in " ".join(text.split())
    )
    assert not (project / "state").exists()  # nothing ran


@pytest.mark.parametrize("command", ["lint", "run"])
def test_a_judge_version_that_does_not_exist_is_bad_input_naming_the_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with (project / "evaluator.toml").open("a") as config:
        config.write(f'[prompts]\ndir = "{ROOT / "prompts"}"\n')
    (project / "scenarios/pass.yaml").write_text(PASSING + "judge: {version: 9}\n")
    code, text = _main(monkeypatch, capsys, command, "scenarios")
    assert code == 2, text
    assert "scenarios/pass.yaml: judge.version: no version 9 of evaluation/quality" in text


def test_validate_json_from_a_saved_trace(project: Path) -> None:
    trace = {
        "id": "t-1",
        "name": "toy-pass",
        "output": "found hello",
        "observations": [
            {"id": "r", "type": "SPAN", "name": "toy-pass", "startTime": "2026-11-22T10:00:00Z"},
            {
                "id": "a",
                "type": "AGENT",
                "name": "orchestrator",
                "parentObservationId": "r",
                "startTime": "2026-11-22T10:00:01Z",
                "metadata": {"flow": "lookup"},
            },
            {
                "id": "b",
                "type": "AGENT",
                "name": "worker",
                "parentObservationId": "a",
                "startTime": "2026-11-22T10:00:02Z",
            },
            {
                "id": "c",
                "type": "TOOL",
                "name": "lookup",
                "parentObservationId": "b",
                "startTime": "2026-11-22T10:00:03Z",
            },
        ],
    }
    (project / "trace.json").write_text(json.dumps(trace))
    code, out, _ = _run("validate", "--scenario", "scenarios/pass.yaml", "--trace", "trace.json", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert set(result) >= {
        "scenario_id",
        "trace_id",
        "status",
        "workflow",
        "trajectory",
        "quality",
        "judge_status",
    }
    assert result["trace_id"] == "t-1"
    assert result["workflow"]["agents"] == {
        "pass": True,
        "included": ["worker"],
        "excluded": [],
        "missing": [],
        "unexpected": [],
    }
    assert result["trajectory"]["flow"] == {"expected": "lookup", "actual": "lookup"}
    trace["observations"] = trace["observations"][:3]  # drop the tool call
    (project / "trace.json").write_text(json.dumps(trace))
    code, out, _ = _run("validate", "--scenario", "scenarios/pass.yaml", "--trace", "trace.json", "--json")
    assert code == 1
    assert json.loads(out)["workflow"]["tools"]["missing"] == ["lookup"]


def test_validate_missing_trace_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _main(
        monkeypatch, capsys, "validate", "--scenario", "scenarios/pass.yaml", "--trace", "nope.json"
    )
    assert code == 2 and "nope.json: cannot read the trace file" in text


def test_script_and_module_entry_points(project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = subprocess.run(
        [sys.executable, str(ROOT / "scripts/run_scenarios.py"), "--tag", "smoke"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert script.returncode == 0, script.stderr
    assert "1 passed" in script.stdout
    module = subprocess.run(
        [sys.executable, "-m", "evaluator", "lint", "scenarios"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert module.returncode == 0, module.stderr


def test_report_by_run_scenario_and_prompt(project: Path) -> None:
    code, out, _ = _run("report")
    assert code == 0 and "No results in" in out
    assert not (project / "state").exists()  # reading made no store
    assert _run("run", "--run-name", "first")[0] == 0
    assert _run("run")[0] == 0
    code, out, _ = _run("report", "--by", "scenario", "--json")
    assert code == 0
    [row] = json.loads(out)["rows"]
    assert row["first_run"]["name"] == "first" and row["latency_ms"] > 0
    assert {k: row[k] for k in ("key", "runs", "scenarios", "results", "passed", "errors", "pass_rate")} == {
        "key": "toy-pass",
        "runs": 2,
        "scenarios": 1,
        "results": 2,
        "passed": 2,
        "errors": 0,
        "pass_rate": 1.0,
    }
    assert row["trajectory_full_workflow"] == 1.0 and row["quality_mean"] is None
    code, out, _ = _run("report", "--last", "1", "--by", "run", "--json")
    assert len(json.loads(out)["rows"]) == 1
    assert _run("report", "--by", "nonsense")[0] == 2


@pytest.mark.parametrize(
    ("command", "text"),
    [(["compare"], "thresholds of [compare] in evaluator.toml"), (["run"], "(default: [judge] concurrency)")],
)
def test_help_keeps_the_configuration_tables_it_names(command: list[str], text: str) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0 and text in " ".join(result.stdout.split())


def test_an_unreachable_langfuse_gets_the_runs_own_account_not_the_exporters_retry_lines(
    project: Path,
) -> None:
    with (project / "evaluator.toml").open("a") as config:
        config.write("[langfuse]\nflush_timeout_seconds = 2\ndelivery_deadline_seconds = 3\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_"))},
        "PYTHONPATH": str(ROOT),
        "LANGFUSE_PUBLIC_KEY": "pk-lf-test",
        "LANGFUSE_SECRET_KEY": "sk-lf-test",
        "LANGFUSE_BASE_URL": "http://127.0.0.1:9",  # nothing listens
    }
    run = subprocess.run(
        [sys.executable, "-m", "evaluator", "run"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr  # the scenario passed; delivery only waits
    assert "In Langfuse (acknowledged): 0 of " in run.stdout and "evaluator sync" in run.stdout
    assert "Transient error" not in run.stderr and "Failed to export" not in run.stderr, run.stderr


def test_run_suite_raises_the_error_class_of_what_is_wrong(project: Path) -> None:
    from evaluator.errors import PromptError, ScenarioError
    from evaluator.run import SuiteOptions, run_suite

    with pytest.raises(PromptError):  # a bad pin alone
        run_suite(options=SuiteOptions(prompts=["nope=1"]))
    (project / "scenarios/bad.yaml").write_text(PASSING.replace("id: toy-pass", "id: toy-bad\nnope: 1"))
    with pytest.raises(ScenarioError):  # a bad scenario file, alone or with a bad pin
        run_suite()
    with pytest.raises(ScenarioError) as both:
        run_suite(options=SuiteOptions(prompts=["nope=1"]))
    assert len(both.value.problems) == 2


def test_run_suite_runs_scenario_files_against_a_target_given_as_a_callable(project: Path) -> None:
    from evaluator.run import run_suite
    from tests.integration.toy_targets import good

    (project / "scenarios/mine.yaml").write_text(
        PASSING.replace("id: toy-pass", "id: mine").replace("target: toy", "target: mine")
    )
    suite = run_suite(targets={"mine": good})
    assert {r.scenario_id: r.status for r in suite.results} == {"toy-pass": "passed", "mine": "passed"}


def test_run_suite_checks_python_scenarios_as_it_checks_files(project: Path) -> None:
    from evaluator.errors import ConfigError, ScenarioError
    from evaluator.run import SuiteOptions, run_suite
    from evaluator.scenarios import Scenario
    from tests.integration.toy_targets import good

    def scenario(sid: str, **fields: object) -> Scenario:
        expected = {"agents": {"include": ["worker"]}, "tools": {"include": ["lookup"]}}
        return Scenario.model_validate(
            {"id": sid, "target": "toy", "input": "hello", "expected": expected, **fields}
        )

    suite = run_suite(
        scenarios=[scenario("a", tags=["smoke"]), scenario("b", target="mine")], targets={"mine": good}
    )
    assert [r.status for r in suite.results] == ["passed", "passed"]
    assert [
        r.scenario_id
        for r in run_suite(
            options=SuiteOptions(tags=["smoke"]), scenarios=[scenario("a", tags=["smoke"]), scenario("b")]
        ).results
    ] == ["a"]
    with pytest.raises(ScenarioError) as bad:
        run_suite(
            scenarios=[
                scenario("a", target="tyo"),
                scenario("b", expected={"agents": {"include": ["wroker"]}}),
            ]
        )
    found = [str(p) for p in bad.value.problems]
    assert any('<scenarios[0]>: target: unknown target "tyo" (did you mean "toy"?)' in p for p in found)
    assert any('unknown agent "wroker" for target "toy" (did you mean "worker"?)' in p for p in found)
    with pytest.raises(ConfigError, match="no scenarios were given"):
        run_suite(scenarios=[])
    with pytest.raises(ConfigError, match="targets: mine is not callable"):
        run_suite(scenarios=[scenario("b", target="mine")], targets={"mine": "good"})  # type: ignore[dict-item]


class _FailingWrites:
    """A store connection whose statements starting with `head` fail as SQLite would fail them."""

    def __init__(self, db: sqlite3.Connection, head: str, message: str) -> None:
        self._db, self._head, self._message = db, head, message

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith(self._head):
            raise sqlite3.OperationalError(self._message)
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def _failing_store(monkeypatch: pytest.MonkeyPatch, head: str, message: str) -> None:
    from evaluator.storage import store

    opened = store._open
    monkeypatch.setattr(store, "_open", lambda path: _FailingWrites(opened(path), head, message))


def test_a_full_disk_exits_4_saying_so_and_keeps_every_result_stored_before(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "scenarios/second.yaml").write_text(PASSING.replace("id: toy-pass", "id: toy-second"))
    _failing_store(monkeypatch, "UPDATE runs SET finished_at", "database or disk is full")  # the run's end
    code, text = _main(monkeypatch, capsys, "run")
    store = project / "state/evaluator.db"
    assert code == 4, text
    assert f"cannot write to the store {store} (the disk is full: database or disk is full)" in text
    assert "Nothing committed to it before is lost. Fix: free space on the disk that holds it" in text
    assert "Traceback" not in text
    with sqlite3.connect(store) as db:  # the results finished before the failure are all there
        assert sorted(db.execute("SELECT scenario_id, status FROM results")) == [
            ("toy-pass", "passed"),
            ("toy-second", "passed"),
        ]


def test_a_store_that_cannot_take_the_run_s_end_leaves_its_results_in_the_output_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _failing_store(monkeypatch, "UPDATE runs SET finished_at", "database or disk is full")  # the run's end
    output = project / "elsewhere/results.json"  # on a disk with room
    code, text = _main(monkeypatch, capsys, "run", "--output", str(output))
    assert code == 4, text
    assert f"the run's results are in --output {output} all the same" in text
    (result,) = json.loads(output.read_text())["results"]
    assert (result["scenario_id"], result["status"]) == ("toy-pass", "passed")


def test_langfuse_tracing_turned_off_is_bad_input_not_an_evaluator_error(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LANGFUSE_TRACING_ENABLED", "False")
    code, text = _main(monkeypatch, capsys, "run")
    assert code == 2, text
    assert "LANGFUSE_TRACING_ENABLED=false turns the Langfuse SDK's tracing off" in text
    assert "Fix: unset LANGFUSE_TRACING_ENABLED" in text and "bug in the evaluator" not in text
    assert "Traceback" not in text


def test_a_read_only_store_exits_4_saying_so(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _failing_store(monkeypatch, "INSERT OR REPLACE INTO runs", "attempt to write a readonly database")
    code, text = _main(monkeypatch, capsys, "run")
    assert code == 4, text
    assert f"cannot write to the store {project / 'state/evaluator.db'} (it cannot be written there" in text
    assert "Fix: set [store] path in evaluator.toml to a writable file." in text


def test_a_store_locked_by_another_program_exits_4_saying_so(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluator.storage import Store, store

    path = project / "state/evaluator.db"
    Store(path).close()
    monkeypatch.setattr(store, "_BUSY_TIMEOUT_MS", 100)  # how long the run waits for the lock
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program writing, and not letting go
    try:
        code, text = _main(monkeypatch, capsys, "run")
    finally:
        holder.close()
    assert code == 4, text
    assert f"cannot write to the store {path} (another program (another run, say) held the" in text
    assert "locked for more than 0.1 s: database is locked)" in text
    assert "Fix: wait for the other program using it to finish, then run the command again" in text


def test_a_file_that_is_not_a_store_exits_4_saying_so(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / "state/evaluator.db"
    path.parent.mkdir()
    path.write_bytes(b"not a database, nor its start" * 200)
    for command in ("run", "report"):
        code, text = _main(monkeypatch, capsys, command)
        assert code == 4, text
        assert f"cannot use the store {path} (the file is not an intact SQLite database" in text
        assert "Fix: the file is damaged: move it aside" in text


def test_a_store_that_cannot_take_the_run_s_end_still_shows_the_summary_and_writes_the_junit_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "scenarios/second.yaml").write_text(PASSING.replace("id: toy-pass", "id: toy-second"))
    _failing_store(monkeypatch, "UPDATE runs SET finished_at", "database or disk is full")  # the run's end
    output, junit = project / "elsewhere/results.json", project / "elsewhere/junit.xml"
    code, text = _main(monkeypatch, capsys, "run", "--output", str(output), "--junit", str(junit))
    store = project / "state/evaluator.db"
    assert code == 4, text
    assert "2 scenarios: 2 passed, 0 failed, 0 error" in text  # the summary, from the results in memory
    cases = junit.read_text()
    assert 'tests="2"' in cases and 'name="toy-pass"' in cases and 'name="toy-second"' in cases
    assert f"JUnit XML: {junit}" in text
    run_id = json.loads(output.read_text())["run"]["id"]
    assert f"Stored in {store} (run {run_id}): its results, not the run's end" in text
    assert (
        f"error: run {run_id} is over and its results are in the store, in --output {output}, in --junit "
        f"{junit}, but its end (finish time and totals) is not: cannot write to the store {store} (the disk "
        "is full: database or disk is full). Nothing committed to it before is lost. Fix: free space" in text
    )
    assert "Traceback" not in text
    with sqlite3.connect(store) as db:  # what the message says: the results are there, the end is not
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 2
        assert db.execute("SELECT finished_at FROM runs").fetchall() == [(None,)]


def test_a_store_that_cannot_take_the_run_s_end_raises_from_run_suite_with_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.errors import StoreError
    from evaluator.run import RunNotStoredError, SuiteOptions, run_suite

    _failing_store(monkeypatch, "UPDATE runs SET finished_at", "database or disk is full")
    output = project / "results.json"
    with pytest.raises(StoreError) as raised:  # a StoreError, as before: a script's handling still holds
        run_suite(options=SuiteOptions(output=output))
    assert isinstance(raised.value, RunNotStoredError)
    suite = raised.value.suite
    assert [(r.scenario_id, r.status) for r in suite.results] == [("toy-pass", "passed")]
    assert suite.output == output and suite.run.id == json.loads(output.read_text())["run"]["id"]
    assert f"its results are in the store, in --output {output}, but its end" in str(raised.value)
    assert "cannot write to the store" in str(raised.value.cause)


def test_progress_on_a_stderr_that_is_no_terminal_is_lines_from_the_start(project: Path) -> None:
    """A CI log: a bar there shows only once the run is over; lines say how far it is while it runs."""
    code, out, err = _run("run")
    assert code == 0, out
    lines = err.splitlines()
    assert "scenarios: 0/1 (0:00:00)" in lines, err  # said when the scenarios start
    assert lines[-1].startswith("scenarios: 1/1 ("), err
    assert "━" not in err and "\x1b" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a write to it fails: disk full)")
def test_an_output_file_that_fails_at_the_end_exits_2_as_junit_does(project: Path) -> None:
    """Writable when checked before the run, refused at its end (the disk full): the run is stored, but a
    CI step that reads the file must not go on green."""
    code, out, err = _run("run", "--output", "/dev/full")
    assert code == 2, out
    assert "--output /dev/full could not be written" in err and "the run is stored all the same" in err
    assert "1 scenarios: 1 passed" in out


def test_junit_class_names_are_each_scenarios_target_whatever_else_the_run_selects(project: Path) -> None:
    """CI systems keep a test's history by class name and name: a scenario's class name must not change
    when the run also holds another target's scenarios (it was `evaluator.scenarios` for all of them)."""
    with (project / "evaluator.toml").open("a") as config:
        config.write('[targets.other]\nentry = "toy_targets:by_input"\nagents = ["orchestrator", "worker"]\n')
        config.write('tools = ["lookup"]\n')
    (project / "scenarios/other.yaml").write_text(
        PASSING.replace("toy-pass", "other-pass").replace("toy", "other")
    )
    code, out, _ = _run("run", "--junit", "junit.xml")
    assert code == 0, out
    root = ET.parse(project / "junit.xml").getroot()  # noqa: S314 (our own output)
    names = {case.get("name"): case.get("classname") for case in root.iter("testcase")}
    assert names == {"toy-pass": "evaluator.toy", "other-pass": "evaluator.other"}
    code, out, _ = _run("run", "scenarios/pass.yaml", "--junit", "junit.xml")
    assert code == 0, out
    root = ET.parse(project / "junit.xml").getroot()  # noqa: S314
    assert [case.get("classname") for case in root.iter("testcase")] == ["evaluator.toy"]


def test_a_timeout_no_wait_can_take_is_bad_input_before_anything_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--timeout inf` ran, its watchdog thread dying in an OverflowError traceback."""
    code, text = _main(monkeypatch, capsys, "run", "--timeout", "inf")
    assert code == 2 and "Invalid value for '--timeout': Input should be less than or equal to 604800" in text
    assert "Traceback" not in text and not (project / "state/evaluator.db").exists()
    with pytest.raises(ConfigError, match=r"timeout inf is not a number of seconds above 0 and at most"):
        run_suite(["scenarios"], SuiteOptions(timeout=float("inf")))
    assert not (project / "state/evaluator.db").exists()


def _refused_by_lint_and_run(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], expected: str
) -> None:
    """`lint` and `run` both exit 2 saying `expected`, and the run made no store: nothing ran."""
    for command in (["lint", "scenarios"], ["run"]):
        code, text = _main(monkeypatch, capsys, *command)
        assert code == 2 and expected in " ".join(text.split()), text
    assert not (project / "state/evaluator.db").exists()


def test_lint_refuses_the_entities_file_and_the_entry_run_refuses_and_run_refuses_them_before_anything(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lint` said "OK" to a missing `entities` file and to an entry without its callable, both of
    which `run` refused; and `run` refused the entities file only once the store was made."""
    config = project / "evaluator.toml"
    config.write_text(TOY_CONFIG.replace("[run]", 'entities = "db.json"\n[run]'))
    missing = (
        f"{config}: [targets.toy] entities: {project / 'db.json'} does not exist. Fix: write it, or correct "
        f"the path (relative to {project}), or remove entities"
    )
    _refused_by_lint_and_run(project, monkeypatch, capsys, missing)
    config.write_text(TOY_CONFIG.replace("toy_targets:by_input", "toy_targets"))
    code, text = _main(monkeypatch, capsys, "lint", "scenarios")
    assert code == 2 and (
        f"{config}: targets.toy.entry: 'toy_targets': not of the form module:callable. "
        'Fix: write it like "demo_agents.research:run"'
    ) in " ".join(text.split())


def test_run_without_path_where_there_is_no_scenarios_folder_says_where_it_looked_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run from outside the project, `run` said "<cwd>/scenarios: no such file or folder. Fix: check
    the path", a path the user never gave."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    code, text = _main(monkeypatch, capsys, "run")
    assert code == 2 and (
        f"error: no PATH was given and there is no {tmp_path / 'scenarios'} to run by default (no "
        f"evaluator.toml was found in {tmp_path} or a folder above it). Fix: run from the project folder"
    ) in " ".join(text.split())
    assert "give the scenario files or folders to run: evaluator run PATH..." in " ".join(text.split())


def test_a_prompts_dir_that_is_no_folder_is_bad_input_for_lint_and_run_before_anything_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[prompts] dir = "promts"` was taken: lint said OK, and each prompt a target asked for was an
    unknown prompt, an error per scenario, in a run stored as such."""
    config = project / "evaluator.toml"
    config.write_text(TOY_CONFIG + '[prompts]\ndir = "promts"\n')
    expected = (
        f"{config}: [prompts] dir: {project / 'promts'} is not a folder. Fix: correct the path (relative to "
        f"{project}), or remove dir (default: prompts)"
    )
    _refused_by_lint_and_run(project, monkeypatch, capsys, expected)
    (project / "promts").mkdir()
    code, text = _main(monkeypatch, capsys, "lint", "scenarios")
    assert code == 0, text


def test_an_output_file_that_is_the_store_or_another_output_is_bad_input_and_the_store_is_kept(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --output state/evaluator.db` (or `--junit`, or `report --html`) wrote JSON over the store:
    every run it held was lost, and the next command found "the file is damaged"."""
    assert _main(monkeypatch, capsys, "run")[0] == 0
    store = project / "state/evaluator.db"
    refused = {
        (
            "run",
            "--output",
            "state/evaluator.db",
        ): f"--output state/evaluator.db is the local store ({store})",
        (
            "run",
            "--junit",
            "state/evaluator.db-wal",
        ): f"--junit state/evaluator.db-wal is the local store ({store})",
        (
            "report",
            "--html",
            "state/../state/evaluator.db",
        ): f"--html state/../state/evaluator.db is the local store ({store})",
        ("run", "--output", "out.json", "--junit", "out.json"): "--junit out.json is the --output file",
    }
    for args, expected in refused.items():
        code, text = _main(monkeypatch, capsys, *args)
        assert code == 2 and f"{expected}, which writing it would replace. Fix: give another file" in text, (
            text
        )
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone() == (1,)
    assert not (project / "out.json").exists()


class _FailingFrom:
    """A store connection whose statements starting with `head` fail as SQLite would fail them, from
    the `first`-th such statement on (those before go through)."""

    def __init__(self, db: sqlite3.Connection, head: str, message: str, first: int) -> None:
        self._db, self._head, self._message, self._left = db, head, message, first - 1

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith(self._head):
            if self._left <= 0:
                raise sqlite3.OperationalError(self._message)
            self._left -= 1
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def _four_scenarios(project: Path) -> None:
    """toy-a answers at once; toy-b, toy-c and toy-d take a second each."""
    (project / "scenarios/pass.yaml").unlink()
    for name, text in (("a", "hello"), ("b", "sleep:1"), ("c", "sleep:1"), ("d", "sleep:1")):
        scenario = PASSING.replace("id: toy-pass", f"id: toy-{name}").replace(
            "input: hello", f'input: "{text}"'
        )
        (project / f"scenarios/{name}.yaml").write_text(
            scenario.replace('contains: ["found hello"]', "contains: [found]")
        )


def test_a_store_failing_mid_run_loses_no_result_computed_and_says_which_are_only_in_the_files(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills while toy-b is being stored: toy-a is in the store; toy-b, and toy-c that was running
    then, are in --output and --junit only, said so; toy-d never starts; exit 4."""
    from evaluator.storage import store as store_module

    _four_scenarios(project)
    opened = store_module._open
    monkeypatch.setattr(
        store_module,
        "_open",
        lambda path: _FailingFrom(
            opened(path), "INSERT OR REPLACE INTO results", "database or disk is full", 2
        ),
    )
    output, junit = project / "elsewhere/results.json", project / "elsewhere/junit.xml"
    code, text = _main(
        monkeypatch, capsys, "run", "--concurrency", "1", "--output", str(output), "--junit", str(junit)
    )
    store = project / "state/evaluator.db"
    assert code == 4, text
    assert (
        "note: the local store failed during the run (its error follows at the end): no scenario starts "
        "now; the 1 started and not yet stored finish as they would have, and their results, with the "
        f"others the store does not have, go to the summary and --output {output}, not to the store." in text
    )
    assert "3 scenarios: 3 passed, 0 failed, 0 error" in text  # every result computed, in the summary
    assert "Stopped early: 1 scenarios were not started: the local store failed during the run." in text
    document = json.loads(output.read_text())
    run_id = document["run"]["id"]
    assert [r["scenario_id"] for r in document["results"]] == ["toy-a", "toy-b", "toy-c"]
    assert document["run"]["not_stored"] == ["toy-b", "toy-c"]
    assert f"Stored in {store} (run {run_id}): 1 of its results, not the 2 it does not have, nor" in text
    assert (
        f"error: the store failed during run {run_id}: 1 of its 3 results are in the store, 2 are not "
        f"(toy-b, toy-c) and are only in --output {output}, in --junit {junit}; 1 scenarios have no "
        "result (none started after the failure); nor is the run's end (finish time and totals). No "
        "command loads results from a file into the store: once it can be written, run again the "
        f"scenarios whose results it does not have. cannot write to the store {store} (the disk is "
        "full: database or disk is full)." in text
    )
    assert "Traceback" not in text
    root = ET.parse(junit).getroot()  # noqa: S314 (our own output)
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert sorted(cases) == ["toy-a", "toy-b", "toy-c", "toy-d"]
    assert "not in the local store" not in (cases["toy-a"].findtext("system-out") or "")
    assert "not in the local store" in (cases["toy-c"].findtext("system-out") or "")
    skipped = cases["toy-d"].find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith("never started")
    with sqlite3.connect(store) as db:  # what the message says: toy-a is there, the rest and the end are not
        assert db.execute("SELECT scenario_id FROM results").fetchall() == [("toy-a",)]
        assert db.execute("SELECT finished_at FROM runs").fetchall() == [(None,)]


def test_a_store_locked_mid_run_raises_from_run_suite_with_every_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real lock, not an injected error: another program takes the store once toy-a is stored and
    holds it past the store's wait. `run_suite` raises RunNotStoredError with the whole run."""
    from evaluator.errors import StoreError
    from evaluator.run import RunNotStoredError
    from evaluator.storage import store as store_module

    _four_scenarios(project)
    monkeypatch.setattr(store_module, "_BUSY_TIMEOUT_MS", 100)
    path, output = project / "state/evaluator.db", project / "results.json"
    holders: list[sqlite3.Connection] = []

    def lock_it(_: ScenarioResult) -> None:
        if not holders:
            holders.append(holder := sqlite3.connect(path, isolation_level=None, check_same_thread=False))
            holder.execute("BEGIN EXCLUSIVE")

    try:
        with pytest.raises(StoreError) as raised:
            run_suite(options=SuiteOptions(output=output, concurrency=1), on_result=lock_it)
    finally:
        for holder in holders:
            holder.close()
    assert isinstance(raised.value, RunNotStoredError)
    suite = raised.value.suite
    assert [(r.scenario_id, r.status) for r in suite.results] == [
        ("toy-a", "passed"),
        ("toy-b", "passed"),
        ("toy-c", "passed"),
    ]
    assert raised.value.not_stored == ("toy-b", "toy-c")
    assert suite.output == output and json.loads(output.read_text())["run"]["not_stored"] == [
        "toy-b",
        "toy-c",
    ]
    assert "held the database locked for more than 0.1 s" in str(raised.value.cause)
    assert f"2 are not (toy-b, toy-c) and are only in --output {output}; 1 scenarios" in str(raised.value)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT scenario_id FROM results").fetchall() == [("toy-a",)]


def test_a_store_folder_removed_mid_run_is_not_said_to_hold_the_run(project: Path) -> None:
    """Before, SQLite went on writing to the deleted file, and the run said it was stored (exit 0 from
    the command): every result went with the file. Now the store refuses, and the run says so."""
    import shutil

    from evaluator.errors import StoreError
    from evaluator.run import RunNotStoredError

    _four_scenarios(project)
    folder, output = project / "state", project / "results.json"

    def clean_up(_: ScenarioResult) -> None:  # a clean-up step, once toy-a is stored
        shutil.rmtree(folder, ignore_errors=True)

    with pytest.raises(StoreError) as raised:
        run_suite(options=SuiteOptions(output=output, concurrency=1), on_result=clean_up)
    assert isinstance(raised.value, RunNotStoredError)
    assert raised.value.not_stored == ("toy-a", "toy-b", "toy-c")
    assert f"cannot write to the store {folder / 'evaluator.db'} (it was deleted, moved or replaced" in str(
        raised.value
    )
    assert (
        "none of its 3 results is surely in the store (toy-a, toy-b, toy-c): they are only in --output"
        in str(raised.value)
    )
    assert json.loads(output.read_text())["run"]["not_stored"] == ["toy-a", "toy-b", "toy-c"]
    assert not folder.exists()


def test_lint_names_a_judge_prompt_of_the_configuration_that_does_not_exist(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A [judge] prompt name with no prompt behind it: lint says so (a run finds out only once a judge
    endpoint is set, exit 2 then); the package's judge prompts count, a project without prompts/ too."""
    config = project / "evaluator.toml"
    config.write_text(config.read_text() + '\n[judge]\ncorrectness_prompt = "evaluation/corectness"\n')
    code, text = _main(monkeypatch, capsys, "lint", "scenarios")
    text = " ".join(text.split())
    assert code == 2, text
    assert (
        '[judge] correctness_prompt: "evaluation/corectness" is no prompt in '
        f"{project / 'prompts'} nor among the package's judge prompts "
        '(did you mean "evaluation/correctness"?). Fix: add '
        f"{project / 'prompts/evaluation/corectness'}/v1.prompt, or correct the name "
        "(default: evaluation/correctness)"
    ) in text
    assert "quality_prompt" not in text and "agent_prompt" not in text  # the defaults: shipped
