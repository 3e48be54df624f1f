"""`evaluator run`: parse the options, call `run_suite()`, print progress and the summary."""

from __future__ import annotations

import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TaskID

from evaluator.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_UNDELIVERED,
    Command,
    ConfigOption,
    SuiteArgument,
    TagOption,
    app,
    err,
    out,
)
from evaluator.cli._history import compared_runs
from evaluator.config import MAX_SECONDS, load_config
from evaluator.errors import ConfigError
from evaluator.langfuse import LangfuseSettings
from evaluator.reports import (
    ProgressLines,
    RunRecord,
    check_thresholds,
    compare_runs,
    junit_xml,
    notice,
    print_compare,
    print_delivery,
    print_summary,
    progress_bar,
    write_junit,
)
from evaluator.results import ScenarioResult, builtin_metrics, with_dialogues_for
from evaluator.run import RunNotStoredError, SuiteOptions, SuiteRun, check_output_file, store_files

__all__ = ["run"]


@app.command(cls=Command, short_help="Run scenarios against their targets and validate each trace.")
def run(
    paths: SuiteArgument = None,
    tag: TagOption = None,
    target: Annotated[
        str | None, typer.Option(metavar="NAME", help="Run every scenario against this target.")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=256, metavar="N", help="Target calls at once (default: [run] concurrency)."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            max=MAX_SECONDS,
            metavar="SECONDS",
            help="Per-scenario timeout, per turn in a dialogue (default: [run] timeout_seconds).",
        ),
    ] = None,
    judge_concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=256, metavar="N", help="Judge calls at once (default: [judge] concurrency)."),
    ] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Do not run the LLM judges.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Judge again even what the verdict cache already holds.")
    ] = False,
    prompt: Annotated[
        list[str] | None, typer.Option(metavar="NAME=VERSION", help="Pin a prompt version (repeatable).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the run's results JSON here.")
    ] = None,
    run_name: Annotated[str | None, typer.Option(metavar="NAME", help="A name for this run.")] = None,
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
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="RUN",
            help="Then compare with this stored run (id, name, latest, previous); exit 1 on a regression.",
        ),
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write JUnit XML here (one test case per scenario).")
    ] = None,
    config_path: ConfigOption = None,
) -> None:
    """Run scenarios against their targets and validate each run's trace."""
    if junit is not None:  # --output: in run_suite
        keep = {**store_files(load_config(config_path)), **({output: "the --output file"} if output else {})}
        check_output_file("--junit", junit, example="junit.xml", keep=keep)
    for option, given, why in (
        ("--require-delivery", require_delivery, "an embedded run delivers nothing"),
        ("--verify-langfuse", verify_langfuse, "an embedded run has nothing there to verify"),
    ):
        if given and LangfuseSettings.from_env() is None:  # a CI gate that could only go green unchecked
            raise ConfigError(
                f"{option} needs Langfuse, but no LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY are set "
                f"({why}). Fix: set the Langfuse keys, or drop {option}."
            )
    base = _baseline(baseline, config_path)
    options = SuiteOptions(
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
    )
    try:
        suite = _run_suite(paths or [], options, config_path)
    except RunNotStoredError as exc:  # exit 4 (cli.main), once what the run has is shown and written
        raise _not_stored(exc, table=table, junit=junit, base=base) from exc.cause
    _show(suite, table=table, junit=junit)
    compared = (
        _compare_with(base, suite, config_path) if base is not None and not suite.run.interrupted else False
    )
    if compared is None:  # the gate could not run: never a quiet pass
        raise typer.Exit(EXIT_BAD_INPUT)
    unwritten = output is not None and suite.output is None  # said by the run: "--output ... could not"
    raise typer.Exit(
        _exit_code(suite, require_delivery=require_delivery, regression=compared, unwritten=unwritten)
    )


def _run_suite(paths: list[str], options: SuiteOptions, config_path: Path | None) -> SuiteRun:
    """`run_suite`, with the progress bar on stderr and its notices there."""
    from evaluator.run import run_suite  # here: the pipeline, the SDK and `openai` load with the command

    progress = _Progress()
    try:
        return run_suite(
            paths,
            options,
            config=config_path,
            on_start=progress.start,
            on_result=progress.advance,
            on_notice=lambda kind, message: notice(err, kind, message),
        )
    finally:
        progress.stop()


def _show(
    suite: SuiteRun, *, table: bool, junit: Path | None, stored: bool = True, not_stored: Sequence[str] = ()
) -> None:
    """The summary, where the run is kept, Langfuse's side, and the --junit file. Not `stored`: the
    store holds the run's results, not its end; nor those of `not_stored` (it failed during the run)."""
    print_summary(
        out,
        suite.run,
        suite.results,
        expected_count=suite.expected,
        full_table=table,
        not_stored=len(not_stored),
    )
    if suite.output is not None:
        out.print(f"Results: {suite.output}", highlight=False)
    kept = "" if stored else ": its results, not the run's end (the error below says why)"
    if not_stored:
        kept = (
            f": {len(suite.results) - len(not_stored)} of its results, not the {len(not_stored)} it does "
            "not have, nor the run's end (the error below says why)"
        )
    out.print(f"Stored in {suite.store_path} (run {suite.run.id}){kept}", highlight=False, soft_wrap=True)
    if suite.connected:
        _print_langfuse(suite)
    if junit is not None:
        document = junit_xml(suite.run, suite.results, suite.scenario_targets, not_stored=set(not_stored))
        write_junit(junit, document)
        out.print(f"JUnit XML: {junit}", highlight=False)


def _not_stored(
    exc: RunNotStoredError, *, table: bool, junit: Path | None, base: RunRecord | None
) -> RunNotStoredError:
    """A run whose end the store could not take: its summary, Langfuse's side and the --junit file all
    the same (the results are all in memory), then the error to exit with, naming where they are."""
    try:
        _show(exc.suite, table=table, junit=junit, stored=False, not_stored=exc.not_stored)
    except ConfigError as failed:  # the --junit file could not be written now: said, the store's error kept
        notice(err, "error", str(failed))
        junit = None
    if base is not None:
        notice(
            err, "warning", f"--baseline {base.label}: nothing was compared (the run's end is not stored)."
        )
    return exc.kept_in(f"--junit {junit}") if junit is not None else exc


def _exit_code(suite: SuiteRun, *, require_delivery: bool, regression: bool, unwritten: bool) -> int:
    """130 / 143 when a signal stopped the run; 2 when the --output file could not be written at the
    end (`unwritten`; as --junit: a CI step reading it must not go on green); 3 when delivery was
    required and is incomplete; then 0 when every scenario passed and nothing regressed against
    --baseline, else 1."""
    if suite.run.signal is not None:
        return 128 + signal.Signals[suite.run.signal].value
    if unwritten:
        return EXIT_BAD_INPUT
    if require_delivery and not suite.delivered:
        return EXIT_UNDELIVERED
    return EXIT_PASSED if suite.passed and not regression else EXIT_FAILED


def _baseline(ref: str | None, config_path: Path | None) -> RunRecord | None:
    """The --baseline run, resolved before running (a bad name, or a `[compare.thresholds]` key that
    names no gated figure, is bad input: exit 2, nothing run)."""
    if ref is None:
        return None
    config = load_config(config_path)
    metrics = builtin_metrics(config)
    check_thresholds(config, metrics)
    (base,), _, _ = compared_runs(config, "local", metrics, [ref])
    return base


def _compare_with(base: RunRecord, suite: SuiteRun, config_path: Path | None) -> bool | None:
    """Compare the finished run with the baseline, print it; True on a regression, None when they have
    no scenario in common (nothing compared: said, and exit 2, as `compare` does)."""
    config = load_config(config_path)
    (candidate,), _, _ = compared_runs(config, "local", builtin_metrics(config), [suite.run.id])
    # as `compare` reads them: with the dialogue figures when either run has dialogues
    metrics = with_dialogues_for(builtin_metrics(config), [*base.results, *candidate.results])
    document = compare_runs(base, candidate, config.settings.compare, metrics=metrics)
    out.print()
    if not document["paired_scenarios"]:
        notice(
            err,
            "error",
            f"--baseline {base.label} has no scenario in common with this run: nothing was compared (the "
            "run is stored). Fix: give a baseline run of the same scenarios (the same paths and --tag).",
        )
        return None
    print_compare(out, document, metrics)
    return bool(document["verdict"] == "regression")


class _Progress:
    """The progress on stderr, shown from the moment the scenarios start (not while loading): a bar on
    a terminal; elsewhere (a CI log, a file, TERM=dumb), where a bar shows only once it stops, lines."""

    def __init__(self) -> None:
        self._lines = None if err.is_interactive else ProgressLines(err)
        self._bar = progress_bar(err)
        self._task: TaskID | None = None

    def start(self, total: int) -> None:
        if self._lines is not None:
            self._lines.start(total)
            return
        self._task = self._bar.add_task("scenarios", total=total)
        self._bar.start()

    def advance(self, _: ScenarioResult) -> None:
        if self._lines is not None:
            self._lines.advance()
        elif self._task is not None:
            self._bar.advance(self._task)

    def stop(self) -> None:
        if self._lines is not None:
            self._lines.stop()
        elif self._task is not None:
            self._bar.stop()


def _print_langfuse(suite: SuiteRun) -> None:
    for scenario_id, url in suite.trace_urls.items():
        out.print(f"  {scenario_id}: {url}", highlight=False, soft_wrap=True, markup=False)
    if suite.status is not None:
        print_delivery(out, suite.status, scores=suite.delivery, spans=suite.spans)
    _print_experiment(suite)
    report = suite.verify
    if report is None:
        return
    out.print(f"Verified in Langfuse: {len(report.matched)} traces give the same verdict", highlight=False)
    missing = {k: v for k, v in report.missing.items() if k not in report.not_covered | report.not_read}
    not_read = {k: v for k, v in report.missing.items() if k in report.not_read}
    not_covered = {k: v for k, v in report.missing.items() if k in report.not_covered}
    for label, entries in (
        ("different", report.differ),
        ("missing", missing),
        ("not verified", not_read),
        ("unsure", report.ambiguous),
        ("note", not_covered),
    ):
        for scenario_id, reason in entries.items():
            notice(out, label, f"{scenario_id}: {reason}")


def _print_experiment(suite: SuiteRun) -> None:
    """The run as a Langfuse experiment: the scenarios whose traces carry the link to their dataset
    item (Langfuse groups them as it ingests the spans), those without an item, the run-level scores."""
    report = suite.experiment
    if report is None:
        return
    parts = [f"{len(report.linked)} scenario traces linked to their items"]
    if report.not_in_dataset:
        parts.append(f"{len(report.not_in_dataset)} not in the dataset (run `evaluator datasets push`)")
    if report.scores:
        parts.append(f"{len(report.scores)} run-level scores posted")
    out.print(
        f'Experiment "{report.run_name}" on dataset "{report.dataset}": ' + ", ".join(parts),
        highlight=False,
        markup=False,
    )
    if report.url and report.linked:
        out.print(f"  {report.url}", highlight=False, soft_wrap=True, markup=False)
