"""The command line at its edges, as users meet them: outside the project folder, a damaged store row,
a closed stdout (`| head`), Ctrl-C while the command starts, `--version` and what `--help` shows."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluator.cli import app, main
from evaluator.storage import Store
from tests.integration.conftest import Cli
from tests.stored_runs import config_for, result, store_run

ROOT = Path(__file__).resolve().parents[2]
TOY_CONFIG = """\
[targets.toy]
entry = "toy_targets:by_input"
[store]
path = "state/evaluator.db"
"""
PYTHON_TYPE = re.compile(r"<(list\[\w+\]|str|int|float|bool|path|Path)>")  # as typer shows them
SCENARIO = "id: {id}\ntarget: toy\ninput: hello\nexpected: {{tools: {{include: [lookup]}}}}\n"
# Sends this process a SIGINT when it first looks for the module named in $INTERRUPT_AT: a Ctrl-C that
# lands exactly there, whatever the machine's speed.
INTERRUPT_AT = """\
import os, signal, sys

class _Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("INTERRUPT_AT"):
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _Interrupt())
"""


def _main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out + captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    (folder / "scenarios").mkdir(parents=True)
    (folder / "evaluator.toml").write_text(TOY_CONFIG)
    (folder / "toy_targets.py").write_text((ROOT / "tests/integration/toy_targets.py").read_text())
    for name in ("one", "two", "three"):
        (folder / f"scenarios/{name}.yaml").write_text(SCENARIO.format(id=name))
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    return folder


def _python(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), env.pop("PATH_FIRST", "")]), **env},
        check=False,
        timeout=120,
    )


def test_outside_the_project_folder_the_missing_configuration_is_said_once_with_the_fix(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, text = _main(monkeypatch, capsys, "run", str(project / "scenarios"))
    assert code == 2 and "Traceback" not in text
    assert text.count("unknown target") == 1
    assert f'{project / "scenarios"} (3 files): target: unknown target "toy": no evaluator.toml' in text
    assert f"was found in {elsewhere} or a folder above it" in text
    assert "Fix: run from the project folder (the one with its evaluator.toml), or pass --config" in text
    code, text = _main(monkeypatch, capsys, "run", str(project / "scenarios"), "--target", "toy")
    assert code == 2 and f"no evaluator.toml was found in {elsewhere}" in text and "--config" in text
    # with the configuration named, the same command runs
    code, text = _main(
        monkeypatch, capsys, "lint", str(project / "scenarios"), "--config", str(project / "evaluator.toml")
    )
    assert code == 0 and "3 scenario files OK" in text


def test_an_unknown_target_names_the_configuration_used(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    (project / "scenarios/two.yaml").write_text(
        SCENARIO.format(id="two").replace("target: toy", "target: tyo")
    )
    code, text = _main(monkeypatch, capsys, "lint", "scenarios")
    assert code == 2
    assert (
        f'scenarios/two.yaml: target: unknown target "tyo" (did you mean "toy"?) in '
        f"{project / 'evaluator.toml'}" in text
    )


@pytest.fixture
def damaged_store(tmp_path: Path) -> Path:
    """Two stored runs; the candidate's result row of scenario b cut short, as a write killed midway."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    store_run(store, "base", [result("a"), result("b"), result("c")], minute=0)
    store_run(store, "cand", [result("a"), result("b", workflow=False), result("c")], name="v2", minute=1)
    store.close()
    with sqlite3.connect(tmp_path / "evaluator.db") as db:
        db.execute(
            "UPDATE results SET result = substr(result, 1, 40) WHERE run_id = 'cand' AND scenario_id = 'b'"
        )
    return config


@pytest.mark.parametrize("command", [["report"], ["report", "--by", "run"], ["compare", "base", "cand"]])
def test_a_damaged_result_row_is_named_and_left_out_without_a_traceback(
    damaged_store: Path,
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, text = _main(monkeypatch, capsys, *command, "--config", str(damaged_store))
    assert "Traceback" not in text and "JSONDecodeError" not in text
    assert code == 0  # the damaged row (b's failure) is left out: a, c compared, nothing regressed
    assert (
        f"warning: {damaged_store.parent / 'evaluator.db'}: run v2 (cand): the result of b is not valid JSON"
        in " ".join(text.split())
    )


@pytest.mark.parametrize(
    "command", [["compare", "base", "cand"], ["report"], ["compare", "base", "cand", "--json"]]
)
def test_a_closed_stdout_ends_the_command_quietly(damaged_store: Path, command: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line, as `| head -0` would be
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evaluator", *command, "--config", str(damaged_store)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 0
    assert (
        "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr and "Exception" not in done.stderr
    )


@pytest.mark.parametrize(
    "module",
    [
        "evaluator.langfuse",  # the library's own imports
        "evaluator.cli._common",
        "toy_targets",  # the target's import, once the configuration is read
    ],
)
def test_ctrl_c_while_the_command_starts_says_interrupted_and_exits_130(
    project: Path, tmp_path: Path, module: str
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(INTERRUPT_AT)
    done = _python(["-m", "evaluator", "run"], project, PATH_FIRST=str(hooks), INTERRUPT_AT=module)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip() == "interrupted"


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    name, version = result.stdout.split()
    assert name == "langfuse-agent-evaluator" and version[0].isdigit()


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_help_lists_every_command_with_a_whole_summary_and_no_python_types() -> None:
    listings = {(): _help(), ("datasets",): _help("datasets"), ("prompts",): _help("prompts")}
    seen = 0
    for group, text in listings.items():
        commands = text.split("Commands:")[1].strip().splitlines()
        for line in commands:
            name, summary = line.split(maxsplit=1)
            seen += 1
            assert not summary.endswith("..."), f"{' '.join(group)} {name}: {summary!r} is cut"
            assert summary.endswith("."), summary
            if name not in ("datasets", "prompts"):
                shown = PYTHON_TYPE.search(_help(*group, name))
                assert shown is None, f"{shown} in {' '.join(group)} {name} --help"
    assert seen == 10  # 6 commands, 2 groups, and a push in each group
    assert "Usage: root run [OPTIONS] [PATH]...\n" in _help("run")
    assert "  PATH...  Scenario files, folders or globs (default: scenarios/)." in _help("run")
    assert "Usage: root lint [OPTIONS] PATH...\n" in _help("lint")
    assert "Usage: root compare [OPTIONS] BASELINE CANDIDATE\n" in _help("compare")


EXAMPLE_TRACE = ROOT / "examples/traces/research-pdf-only.json"
PDF_ONLY = ROOT / "scenarios/research/research-pdf-only.yaml"


def test_the_example_trace_validates_offline_as_its_run_did(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _main(
        monkeypatch, capsys, "validate", "--scenario", str(PDF_ONLY), "--trace", str(EXAMPLE_TRACE), "--json"
    )
    assert code == 1  # research prompt v1 also searches the web, which this scenario excludes
    verdict = json.loads(out)
    assert verdict["workflow"]["tools"]["included"] == ["pdf_retrieval"]
    assert verdict["workflow"]["tools"]["unexpected"] == ["web_search"]
    assert verdict["workflow"]["agents"]["pass"] is True and verdict["answer"]["pass"] is True


def test_validate_needs_no_target_but_checks_a_configured_ones_names(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    untargeted = demo_project / "untargeted.yaml"
    untargeted.write_text(PDF_ONLY.read_text().replace("target: research\n", ""))
    code, out = _main(
        monkeypatch,
        capsys,
        "validate",
        "--scenario",
        str(untargeted),
        "--trace",
        str(EXAMPLE_TRACE),
        "--json",
    )
    assert code == 1 and json.loads(out)["workflow"]["tools"]["unexpected"] == ["web_search"]
    code, text = _main(monkeypatch, capsys, "run", str(untargeted))  # a run needs it
    assert code == 2 and f"{untargeted}: target: required field is missing" in text
    misspelt = demo_project / "misspelt.yaml"
    misspelt.write_text(PDF_ONLY.read_text().replace("exclude: [web_search]", "exclude: [web_serch]"))
    code, text = _main(
        monkeypatch, capsys, "validate", "--scenario", str(misspelt), "--trace", str(EXAMPLE_TRACE)
    )
    assert code == 2 and 'unknown tool "web_serch" for target "research" (did you mean "web_search"?)' in text


def test_report_messages_keep_their_brackets(tmp_path: Path, cli: Cli) -> None:
    """What report says is printed as written: a configuration section in brackets, a path with brackets,
    are not taken for the terminal's markup (and dropped)."""
    config = tmp_path / "evaluator.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "[ci]" / "evaluator.db"}"\n')
    store = Store(tmp_path / "[ci]" / "evaluator.db")
    store_run(store, "base", [result("a")])
    store.close()

    code, text = cli(
        "report", "--by", "agent", "--html", str(tmp_path / "[ci]" / "r.html"), "--config", str(config)
    )

    assert code == 0
    assert "declare the agents' tools ([targets.NAME.agent_tools])" in " ".join(text.split())
    assert f"1 runs from {tmp_path / '[ci]' / 'evaluator.db'}" in text.replace("\n", "")
    assert f"HTML report: {tmp_path / '[ci]' / 'r.html'}" in text.replace("\n", "")


# The same, with SIGTERM: a CI job cancelled while the command starts.
TERMINATE_AT = INTERRUPT_AT.replace("signal.SIGINT", "signal.SIGTERM")


@pytest.mark.parametrize("module", ["evaluator.langfuse", "evaluator.cli._common", "toy_targets"])
def test_sigterm_while_the_command_starts_says_so_and_exits_143(
    project: Path, tmp_path: Path, module: str
) -> None:
    """Before, Python's default ended the process at once: no word on stderr, status -15."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(TERMINATE_AT)
    done = _python(["-m", "evaluator", "run"], project, PATH_FIRST=str(hooks), INTERRUPT_AT=module)
    assert done.returncode == 143, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip() == "interrupted by SIGTERM"


def test_the_command_puts_back_the_sigterm_handler_it_found(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = signal.getsignal(signal.SIGTERM)
    code, _ = _main(monkeypatch, capsys, "--version")
    assert code == 0
    assert signal.getsignal(signal.SIGTERM) is before
