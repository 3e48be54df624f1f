"""`evaluator run`: parse the options, call `run_suite()`, print progress and the summary."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TaskID

from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, EXIT_UNDELIVERED, ConfigOption, app, err, out
from evaluator.reports import notice, print_delivery, print_summary, progress_bar
from evaluator.results import ScenarioResult
from evaluator.run import SuiteRun, run_suite


@app.command()
def run(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Scenario files, folders or globs (default: scenarios/)."),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Only scenarios with this tag (repeatable).")] = None,
    target: Annotated[str | None, typer.Option(help="Run every scenario against this target.")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, max=256)] = None,
    timeout: Annotated[float | None, typer.Option(min=0.001, help="Per-scenario timeout, seconds.")] = None,
    judge_concurrency: Annotated[
        int | None, typer.Option(min=1, max=256, help="Judge calls at once (default: [judge] concurrency).")
    ] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Do not run the LLM judges.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Judge again even what the verdict cache already holds.")
    ] = False,
    prompt: Annotated[
        list[str] | None, typer.Option(help="Pin a prompt version: NAME=VERSION (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the run's results JSON here.")] = None,
    run_name: Annotated[str | None, typer.Option(help="A name for this run.")] = None,
    require_delivery: Annotated[
        bool,
        typer.Option(
            "--require-delivery",
            help=f"Exit {EXIT_UNDELIVERED} when Langfuse has not acknowledged every span and score (for CI).",
        ),
    ] = False,
    table: Annotated[
        bool, typer.Option("--table", help="Show every scenario in the summary, not only those that failed.")
    ] = False,
    verify_langfuse: Annotated[
        bool,
        typer.Option(
            "--verify-langfuse",
            help="Read every trace back from Langfuse and check it gives the same verdict.",
        ),
    ] = False,
    config_path: ConfigOption = None,
) -> None:
    """Run scenarios against their targets and validate each run's trace."""
    progress = _Progress()
    try:
        suite = run_suite(
            paths or [],
            tags=tag or [],
            target=target,
            concurrency=concurrency,
            timeout=timeout,
            no_judge=no_judge,
            judge_concurrency=judge_concurrency,
            no_cache=no_cache,
            prompts=prompt or [],
            output=output,
            run_name=run_name,
            verify_langfuse=verify_langfuse,
            config=config_path,
            on_start=progress.start,
            on_result=progress.advance,
            on_notice=lambda kind, message: notice(err, kind, message),
        )
    finally:
        progress.stop()
    print_summary(out, suite.run, suite.results, expected_count=suite.expected, full_table=table)
    if suite.output is not None:
        out.print(f"Results: {suite.output}", highlight=False)
    out.print(f"Stored in {suite.store_path} (run {suite.run.id})", highlight=False)
    if suite.connected:
        _print_langfuse(suite)
    raise typer.Exit(_exit_code(suite, require_delivery=require_delivery))


def _exit_code(suite: SuiteRun, *, require_delivery: bool) -> int:
    """130 / 143 when a signal stopped the run; 3 when delivery was required and is incomplete; then
    0 when every scenario passed, else 1."""
    if suite.run.signal is not None:
        return 128 + signal.Signals[suite.run.signal].value
    if require_delivery and not suite.delivered:
        return EXIT_UNDELIVERED
    return EXIT_PASSED if suite.passed else EXIT_FAILED


class _Progress:
    """The progress bar on stderr, shown from the moment the scenarios start (not while loading)."""

    def __init__(self) -> None:
        self._bar = progress_bar(err)
        self._task: TaskID | None = None

    def start(self, total: int) -> None:
        self._task = self._bar.add_task("scenarios", total=total)
        self._bar.start()

    def advance(self, _: ScenarioResult) -> None:
        if self._task is not None:
            self._bar.advance(self._task)

    def stop(self) -> None:
        if self._task is not None:
            self._bar.stop()


def _print_langfuse(suite: SuiteRun) -> None:
    for scenario_id, url in suite.trace_urls.items():
        out.print(f"  {scenario_id}: {url}", highlight=False, soft_wrap=True, markup=False)
    if suite.status is not None:
        print_delivery(out, suite.status, scores=suite.delivery, spans=suite.spans)
    report = suite.verify
    if report is None:
        return
    out.print(f"Verified in Langfuse: {len(report.matched)} traces give the same verdict", highlight=False)
    for label, entries in (
        ("different", report.differ),
        ("missing", report.missing),
        ("unsure", report.ambiguous),
    ):
        for scenario_id, reason in entries.items():
            notice(out, label, f"{scenario_id}: {reason}")
