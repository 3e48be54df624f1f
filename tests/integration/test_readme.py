"""The README's walk-through, followed as a new user follows it: every ```sh block, in order, in a fresh
copy of the project (its own .evaluator store, no LANGFUSE_* / OPENAI_* / EVALUATOR_* keys), each command
giving what its comment promises ("10 of 11 pass", quoted lines, the exit code), and the outputs the
README shows ("`report` prints ...", the markdown comment) holding their figures. The commands run
in-process (`.venv/bin/evaluator ARGS` as main(ARGS), `make demo` as the run it stands for), once each.

Blocks that need keys or services are not run; SKIPPED says which and why, and the test fails when a
block is neither run nor listed there, so a new block is never silently left out."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluator.cli import main
from evaluator.config import load_config
from evaluator.results import builtin_metrics, with_dialogues

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROJECT = ("evaluator.toml", "scenarios", "prompts", "demo_agents", "examples", ".gitignore")
EVALUATOR = ".venv/bin/evaluator "
# `make demo` is this run, with exit 1 (scenarios failed, as the demo intends) not failing it (Makefile).
MAKE_DEMO = ["run", "scenarios/research", "--output", ".evaluator/demo-results.json"]
# ... after the dialogues (scenarios/concierge), which `make demo` runs first.
MAKE_DEMO_DIALOGUES = ["run", "scenarios/concierge", "--output", ".evaluator/demo-dialogues.json"]
SKIPPED = {  # the first line of a block not run -> why
    "export OPENAI_API_KEY=": "LLM judges: needs a judge endpoint (OpenAI, Ollama, vLLM...) and its key",
    "export LANGFUSE_PUBLIC_KEY=": "Using with Langfuse: needs a Langfuse project and its keys",
    ".venv/bin/evaluator validate --scenario scenarios/concierge/concierge-hotel-book-missing-nights.yaml "
    "--session-id": (
        "Recorded conversations: reads a session from Langfuse (tests/integration/test_recorded.py "
        "validates sessions against the stand-in)"
    ),
    "evaluator datasets push": (
        "Runs as Langfuse experiments: needs a Langfuse project (tests/integration/"
        "test_langfuse_datasets.py runs these commands against the stand-in)"
    ),
}
SKIPPED_COMMANDS = {
    "make test": "the test suite itself (lint, types and every test, this one too): minutes, and recursive"
}
# Outputs the README shows, after the prose that introduces them: the command that prints each.
SHOWN = {
    "`report` prints one row per agent prompt version": ["report"],
    "and `compare latest previous --format markdown`": [
        "compare",
        "latest",
        "previous",
        "--format",
        "markdown",
    ],
}
RUN_ID = re.compile(r"run-\d{8}T\d{6}Z-[0-9a-f]{6}")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True, kw_only=True)
class Step:
    position: int
    commands: list[str]  # lines of a ```sh block
    shown: str = ""  # or an output block the README shows ...
    shown_by: tuple[str, ...] = ()  # ... and the command printing it


def _steps() -> Iterator[Step]:
    """The sh blocks and the shown outputs, in the README's order; the skipped blocks left out."""
    for match in FENCE.finditer(README):
        language, body = match.group(1), match.group(2)
        if language == "sh":
            lines = [line for line in body.splitlines() if line.strip()]
            if not any(lines[0].startswith(first) for first in SKIPPED):
                yield Step(position=match.start(), commands=lines)
            continue
        before = README[: match.start()].rstrip().rsplit("\n\n", 1)[-1]  # the paragraph introducing the block
        for anchor, command in SHOWN.items():
            if anchor in before:
                yield Step(position=match.start(), commands=[], shown=body, shown_by=tuple(command))


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the project, committed to a git repository of its own (to see what the
    commands leave behind), as the working folder; no keys in the environment."""
    for name in PROJECT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    for name in list(os.environ):
        if name.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    if shutil.which("git"):
        git = ["git", "-c", "user.name=readme", "-c", "user.email=readme@test", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], check=True, cwd=tmp_path)
        subprocess.run([*git, "add", "-A"], check=True, cwd=tmp_path)
        subprocess.run([*git, "commit", "-qm", "copy"], check=True, cwd=tmp_path)
    return tmp_path


def _evaluator(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out + captured.err


def _command(line: str) -> tuple[list[str] | None, str, str]:
    """(evaluator arguments, or None when skipped; the comment; the command as written)."""
    command, _, comment = line.partition("  #")
    command = command.strip()
    if command in SKIPPED_COMMANDS:
        return None, comment, command
    if command.startswith("make demo"):
        return MAKE_DEMO, comment, command
    assert command.startswith(EVALUATOR), f"the README runs {command!r}: teach this test what it stands for"
    return shlex.split(command.removeprefix(EVALUATOR)), comment, command


def _check_promise(command: str, comment: str, code: int, output: str) -> None:
    """What the command's comment promises: "N of M pass", "exit N", quoted lines (up to a "..."), and
    "NAME@vA X% -> @vB Y%" (the report's rows of those two versions)."""
    flat = " ".join(output.split())
    for passed, total in re.findall(r"(\d+) of (\d+) pass", comment):
        assert f"{total} scenarios: {passed} passed" in flat, f"{command}: not {passed} of {total}:\n{output}"
    for expected in re.findall(r"exit (\d+)", comment):
        assert code == int(expected), f"{command}: exit {code}, the README says {expected}:\n{output}"
    for quoted in re.findall(r'"([^"]+)"', comment):
        said = quoted.split("...")[0]
        assert said in flat, f"{command}: {said!r} is not in its output:\n{output}"
    for name, old, old_rate, new, new_rate in re.findall(
        r"(\S+)@v(\d+) ([\d.]+%) -> @v(\d+) ([\d.]+%)", comment
    ):
        for version, rate in ((old, old_rate), (new, new_rate)):
            [row] = [line for line in output.splitlines() if f" {name}@v{version} " in line]
            assert rate in _cells(row), f"{command}: {name}@v{version} is not at {rate}: {row}"


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"[│┃]", line)[1:-1]]


def _check_table(shown: str, output: str) -> None:
    """Each row the README shows, against the row of the same name in the output: every column both
    have, but latency (a timer) and the README's elisions ("...")."""
    header, *rows = [line for line in shown.splitlines() if line.startswith(("┃", "│"))]
    names = _cells(header)
    printed: dict[str, dict[str, str]] = {}
    printed_names: list[str] = []
    last: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("┃") and "runs" in line:
            printed_names = _cells(line)
        elif line.startswith("│") and _cells(line)[0]:
            last = printed[_cells(line)[0]] = dict(zip(printed_names, _cells(line), strict=True))
        elif line.startswith("│"):  # a cell the table wrapped onto a line of its own
            for column, more in zip(printed_names, _cells(line), strict=True):
                last[column] = f"{last[column]} {more}".strip()
    for row in rows:
        cells = dict(zip(names, _cells(row), strict=True))
        got = printed[cells[names[0]]]
        for column, value in cells.items():
            if column not in ("latency", "...") and value != "...":
                assert got[column] == value, f"{cells[names[0]]}: {column} is {got[column]}, README {value}"


def _check_markdown(shown: str, output: str) -> None:
    """Every line the README shows, but those with a timer's figure (ms) or an elision, in the output
    (run ids as any run id)."""
    printed = output.splitlines()
    for line in shown.splitlines():
        if not line.strip() or "..." in line or " ms " in line:
            continue
        wanted = RUN_ID.sub("RUNID", line)
        pattern = re.compile("^" + re.escape(wanted).replace("RUNID", RUN_ID.pattern) + "$")
        assert any(pattern.match(p) for p in printed), f"not in the output: {line}\n{output}"


def test_the_readme_walk_through_gives_what_it_shows(
    copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo_promise = re.search(r"(\d+) of the\s+(\d+) scenarios pass", README)
    assert demo_promise is not None
    ran: list[str] = []
    for step in sorted(_steps(), key=lambda s: s.position):
        if step.shown:
            code, output = _evaluator(list(step.shown_by), monkeypatch, capsys)
            check = _check_markdown if step.shown.startswith("###") else _check_table
            check(step.shown, output)
            ran.append(" ".join(step.shown_by))
            continue
        for line in step.commands:
            args, comment, command = _command(line)
            if args is None:
                continue
            if args is MAKE_DEMO:
                code, output = _evaluator(MAKE_DEMO_DIALOGUES, monkeypatch, capsys)
                assert code in (0, 1), output
                dialogues = re.search(r"(\d+) of the (\d+) dialogues pass", " ".join(README.split()))
                assert dialogues is not None
                assert f"{dialogues[2]} scenarios: {dialogues[1]} passed" in output
            code, output = _evaluator(args, monkeypatch, capsys)
            if args is MAKE_DEMO:
                assert code in (0, 1), output
                passed, total = demo_promise.groups()
                assert f"{total} scenarios: {passed} passed" in output
            _check_promise(command, comment, code, output)
            if "--html" in args:
                assert (copy / args[args.index("--html") + 1]).read_text().startswith("<!DOCTYPE html>")
            ran.append(command)
    assert "make demo" in ran and any("compare latest previous" in r for r in ran), ran  # the walk-through
    if shutil.which("git"):  # what the commands wrote is ignored by .gitignore
        left = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],  # noqa: S607 - git from the PATH
            cwd=copy,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert left == "", f"the README's commands leave files .gitignore does not cover:\n{left}"


def test_every_sh_block_is_run_or_skipped_for_a_reason() -> None:
    blocks = [m.group(2) for m in FENCE.finditer(README) if m.group(1) == "sh"]
    skipped = [b for b in blocks if any(b.startswith(first) for first in SKIPPED)]
    assert len(skipped) == len(SKIPPED), "a skipped block is gone from the README: update SKIPPED"
    run = [s for s in _steps() if s.commands]
    assert len(run) + len(skipped) == len(blocks)
    assert len([s for s in _steps() if s.shown]) == len(SHOWN), "a shown output's introduction changed"


def test_make_demo_unsets_every_langfuse_openai_and_judge_variable_in_the_shell() -> None:
    """README: "`make demo` ignores any `LANGFUSE_*` / `OPENAI_*` / `EVALUATOR_JUDGE_*` variables in your
    shell", including those that are no keys (tracing turned off, a bad flush size)."""
    shell = {
        **os.environ,
        "LANGFUSE_TRACING_ENABLED": "false",
        "LANGFUSE_FLUSH_AT": "0",
        "OPENAI_ORG_ID": "org-x",
        "EVALUATOR_JUDGE_MODEL_HINT": "x",
    }
    make = shutil.which("make")
    assert make is not None  # the README's two commands need it
    plan = subprocess.run(
        [make, "-n", "demo"], cwd=ROOT, env=shell, capture_output=True, text=True, check=True
    ).stdout
    runs = [line for line in plan.splitlines() if "evaluator run" in line]
    assert len(runs) == 2, plan
    for line in runs:
        unset = set(re.findall(r"-u (\S+)", line.split("evaluator run")[0]))
        assert {
            "LANGFUSE_TRACING_ENABLED",
            "LANGFUSE_FLUSH_AT",
            "OPENAI_ORG_ID",
            "EVALUATOR_JUDGE_MODEL_HINT",
        } <= unset


def test_the_readme_s_fake_judge_example_scores_every_judgement(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The "In your own tests" example, run as written: every judge it meets (quality, correctness, the
    per-agent judge of a target that declares agent_tools) scores, as its printed line says."""
    start = README.index("from evaluator.judge import FakeJudgeModel")
    example = README[start : README.index("```", start)]
    exec(compile(example, "README.md", "exec"), {"__name__": "readme_example"})  # noqa: S102 - our own README
    printed = capsys.readouterr().out.split()
    assert printed[:1] == ["{'scored'}"], printed


def test_the_readme_s_score_table_names_every_score_the_bundled_project_posts() -> None:
    """Every score name the built-in metrics define, with the bundled project's per-agent declarations
    and the dialogue metric, is in the README's table of scores, so a user who meets one in Langfuse
    finds what it means."""
    table = README[README.index("| score | type | value |") : README.index("Every score carries metadata")]
    listed = set(re.findall(r"`([a-z_]+)`", table))
    metrics = with_dialogues(builtin_metrics(load_config(ROOT / "evaluator.toml")))
    assert [d.name for d in metrics.definitions if d.name not in listed] == []
