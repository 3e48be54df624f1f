"""Benchmark: the start-up of the commands users run most, each in a fresh interpreter.

For each command: wall time, CPU (user + system) and peak RSS of the whole process, median over
`--repeat` runs, and the heavy packages it loaded (the Langfuse SDK, `openai`). The sides, run in turn
in this one process run (the machine's drift hits them alike): the bare interpreter (`python -c pass`,
the floor), this checkout, and with `--ref REV` the same commands from that revision (a `git worktree`
made for the run and removed after): before and after a change in one run. The commands run in a
temporary copy of the bundled project with two stored runs, so `report` and `compare` have something to
read. Prints the figures; asserts nothing.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 7] [--ref 2c50dfe]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    ["--help"],
    ["lint", "scenarios"],
    ["report"],
    ["compare", "latest", "previous"],
]
# Run in the child: the command as the console script runs it, then the heavy packages it loaded.
_CHILD = """
import sys
from evaluator.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(",".join(m for m in ("langfuse", "openai") if m in sys.modules) or "-", file=sys.stderr)
"""
_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))}


def _run(args: list[str], cwd: Path, source: Path) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, heavy packages loaded) of one run of `python args`: the child reaped
    with wait4, so that its own resource usage is read."""
    started = time.perf_counter()
    child = subprocess.Popen(  # noqa: S603 - our own interpreter
        [sys.executable, *args],
        cwd=cwd,
        env={**_ENV, "PYTHONPATH": str(source)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    stderr = child.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    lines = stderr.strip().splitlines()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, lines[-1] if lines else "?"


@contextmanager
def _project() -> Iterator[Path]:
    """The bundled project in a temporary folder (its store there), with two stored runs."""
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        config = (ROOT / "evaluator.toml").read_text()
        config = config.replace('path = ".evaluator/evaluator.db"', f'path = "{project / "evaluator.db"}"')
        config = config.replace('dir = "prompts"', f'dir = "{ROOT / "prompts"}"')
        config = config.replace('"demo_agents/', f'"{ROOT}/demo_agents/')
        (project / "evaluator.toml").write_text(config)
        (project / "scenarios").symlink_to(ROOT / "scenarios")
        for _ in range(2):
            subprocess.run(
                [sys.executable, "-m", "evaluator", "run", "scenarios/research", "--no-judge"],
                cwd=project,
                env={**_ENV, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                check=False,
            )
        yield project


@contextmanager
def _worktree(ref: str | None) -> Iterator[Path | None]:
    if ref is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "ref"
        git = ["git", "-C", str(ROOT), "worktree"]
        subprocess.run([*git, "add", "-q", "--detach", str(tree), ref], check=True)  # noqa: S603

        try:
            yield tree
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=False)  # noqa: S603


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--ref", help="a git revision to time beside this checkout (before/after)")
    args = parser.parse_args()
    with _project() as project, _worktree(args.ref) as ref:
        sides = {"this checkout": ROOT, **({f"at {args.ref}": ref} if ref is not None else {})}
        floor = [_run(["-c", "pass"], project, ROOT) for _ in range(args.repeat)]
        print(f"python -c pass: {statistics.median(f[0] for f in floor):.2f} s wall, "
              f"{statistics.median(f[2] for f in floor):.0f} MB (the floor)")  # fmt: skip
        for command in COMMANDS:
            runs: dict[str, list[tuple[float, float, float, str]]] = {side: [] for side in sides}
            for _ in range(args.repeat):  # the sides in turn
                for side, source in sides.items():
                    runs[side].append(_run(["-c", _CHILD, *command], project, source))
            print(f"evaluator {' '.join(command)}")
            for side, figures in runs.items():
                wall, cpu, rss = (statistics.median(f[i] for f in figures) for i in range(3))
                loaded = figures[-1][3]
                print(
                    f"  {side:<16} {wall:5.2f} s wall  {cpu:5.2f} s CPU  {rss:4.0f} MB peak  loaded: {loaded}"
                )


if __name__ == "__main__":
    main()
