"""Human-readable output: notices, the progress bar (or lines) while running and the summary table at
the end.

Text that comes from users or targets (scenario ids, names, error messages) is never read as Rich
markup: a `[/]` in an exception message must print, not crash the summary; nor are its control
characters written out (a terminal would obey them, a CI log keep them): the summary shows their escapes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from evaluator.metrics import Figure, MetricSet
from evaluator.reports._printable import printable
from evaluator.reports.compare_text import figure_value
from evaluator.results import (
    JUDGES_CUT_OFF,
    JUDGES_INTERRUPTED,
    RunInfo,
    ScenarioResult,
    default_metrics,
    judge_usage,
    run_summaries,
    totals,
    with_turns,
)
from evaluator.storage import DeliveryReport, DeliveryStatus, SpanDeliveryReport

__all__ = [
    "ProgressLines",
    "history_tables",
    "notice",
    "print_delivery",
    "print_judges",
    "print_summary",
    "progress_bar",
    "summary_table",
]

_STATUS_STYLE = {"passed": "green", "failed": "red", "error": "bold red"}


_NOTICE_STYLE = {"error": "red", "warning": "yellow"}


def notice(console: Console, kind: str, message: str) -> None:
    """'error: ...', 'warning: ...' or 'note: ...', the message printed literally (what it quotes from
    outside, a server's error or a name from a trace, with its control characters as escapes)."""
    style = _NOTICE_STYLE.get(kind, "bold")
    console.print(f"[{style}]{kind}[/{style}]: {_literal(message)}", highlight=False, soft_wrap=True)


def _literal(text: str) -> str:
    """Text from outside the evaluator in a line of markup: neither markup nor control characters."""
    return escape(printable(text))


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


class ProgressLines:
    """Progress as lines, where a bar cannot redraw itself and would show only once the run is over (the
    console is no terminal: a CI log, a file; or a dumb one): `scenarios: 3/12 (0:00:41)` when the
    scenarios start, then as they finish at most once every `every` seconds, and the last count at the
    end (a run stopped early included)."""

    def __init__(self, console: Console, *, every: float = 10.0) -> None:
        self._console, self._every = console, every
        self._total = self._done = 0
        self._said = -1  # the count last printed
        self._started = self._said_at = 0.0

    def start(self, total: int) -> None:
        self._total, self._started = total, time.monotonic()
        self._say()

    def advance(self) -> None:
        self._done += 1
        if self._done == self._total or time.monotonic() - self._said_at >= self._every:
            self._say()

    def stop(self) -> None:
        if 0 <= self._said != self._done:  # started, and a count not said yet
            self._say()

    def _say(self) -> None:
        now = time.monotonic()
        elapsed = timedelta(seconds=int(now - self._started))
        self._console.print(
            f"scenarios: {self._done}/{self._total} ({elapsed})", highlight=False, markup=False
        )
        self._said, self._said_at = self._done, now


def _problems(result: ScenarioResult) -> str:
    """What went wrong, in one line: the error, or each verdict's problems (control characters shown
    as their escapes)."""
    return printable("; ".join(result.problems()) or "-")


def _metrics_of(results: Sequence[ScenarioResult]) -> MetricSet:
    return results[0].metrics if results else default_metrics()


def _judges_cell(result: ScenarioResult, metrics: MetricSet) -> str:
    """The judges' verdicts in one cell (each judge's line, in order); or why there are none."""
    parts = [
        metric.cell(verdict)
        for metric in metrics.judges
        if (verdict := result.judged.get(metric.key)) is not None
    ]
    if result.judge_status.status == "unscored":
        parts.append("unscored")
    return "\n".join(parts) or "-"


def summary_table(results: Sequence[ScenarioResult], title: str = "Scenario results") -> Table:
    """One row per result: its status, what went wrong, a column per inline metric that has one (the
    trajectory's modes), the judges' verdicts in one column, the latency."""
    metrics = _metrics_of(results)
    own = [m for m in metrics if m.stage == "inline" and m.column() is not None]
    headings = [j for m in metrics.judges if (j := m.column()) is not None]
    table = Table(title=title, show_lines=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("status")
    table.add_column("missing / unexpected", overflow="fold")
    for metric in own:
        table.add_column(str(metric.column()), justify="center")
    table.add_column("judges\n" + " / ".join(headings), justify="center")
    table.add_column("latency", justify="right")
    for r in results:
        status = "evaluator error" if r.evaluator_error is not None else r.status
        latency = f"{r.latency_ms / 1000:.2f} s" if r.latency_ms is not None else "-"
        cells = [m.cell(v) if (v := r.verdicts.get(m.key)) is not None else "-" for m in own]
        table.add_row(
            Text(r.scenario_id),
            Text(status, style=_STATUS_STYLE[r.status]),
            Text(_problems(r)),
            *cells,
            Text(_judges_cell(r, metrics)),
            latency,
        )
    return table


def print_summary(
    console: Console,
    run: RunInfo,
    results: Sequence[ScenarioResult],
    expected_count: int,
    *,
    full_table: bool = False,
    not_stored: int = 0,
) -> None:
    """The scenarios that did not pass (every scenario with `full_table`), then the totals.
    `not_stored`: how many of the results the local store does not have (it failed during the run)."""
    shown = results if full_table else [r for r in results if r.status != "passed"]
    if shown:
        console.print(
            summary_table(shown, "Scenario results" if full_table else "Scenarios that did not pass")
        )
    counts = totals(results)
    bugs = sum(r.evaluator_error is not None for r in results)
    line = (
        f"[bold]{counts['scenarios']} scenarios[/bold]: [green]{counts['passed']} passed[/green]"
        f", [red]{counts['failed']} failed[/red], [bold red]{counts['error']} error[/bold red]"
        f"  (run {_literal(run.id if run.name in ('', run.id) else f'{run.name}, {run.id}')})"
    )
    console.print(line)
    if bugs:
        console.print(
            f"[bold red]{bugs} of the errors are evaluator errors[/bold red]: a bug in the evaluator, not a "
            "failure of your agents; no score was posted for them. The tracebacks are in the stored "
            "results (`evaluator_error`), and in --output."
        )
    judge_bugs = sum("evaluator_error" in r.judge_detail for r in results)
    if judge_bugs:
        console.print(
            f"[bold red]{judge_bugs} scenario(s) were not judged because of an evaluator error in the "
            "judges[/bold red]: a bug in the evaluator, not a failure of your agents; their workflow "
            "verdicts stand and no judge score was posted for them. The tracebacks are in the stored "
            "results (`judge.evaluator_error`), and in --output."
        )
    if run.interrupted:
        running = max(0, run.started - len(results))
        stored = f" ({not_stored} not stored: the local store failed)" if not_stored else " and are stored"
        console.print(
            f"[yellow]Stopped by {escape(run.signal or 'an interrupt')}: {len(results)} of {expected_count} "
            f"scenarios finished{stored}; {running} cut off while running (no result), "
            f"{expected_count - len(results) - running} never started.[/yellow]"
        )
    elif run.signal:
        console.print(
            f"[yellow]{escape(run.signal)} came once every scenario had finished: the run is whole, "
            "and stored as such.[/yellow]"
        )
    if run.cut_off:
        console.print(f"[yellow]Stopped early: {escape(run.cut_off)}.[/yellow]")
    unjudged = Counter(
        r.judge_status.reason for r in results if r.judge_status in (JUDGES_INTERRUPTED, JUDGES_CUT_OFF)
    )
    for reason, count in unjudged.items():  # finished, but their judges never began: no judge verdict
        console.print(
            f"[yellow]{count} of the finished scenarios were not judged: {escape(reason)}.[/yellow]",
            highlight=False,
        )
    print_warnings(console, results)
    print_judges(console, results)


WARNINGS_SHOWN = 10


def print_warnings(console: Console, results: Sequence[ScenarioResult]) -> None:
    """What makes verdicts less certain (a result's `warnings`: a state of a shape the metrics cannot
    read, a trace the SDK cut short, ...), a line per scenario and warning, the first `WARNINGS_SHOWN`;
    every one of them is in the stored results and in --output."""
    found = [(r.scenario_id, warning) for r in results for warning in r.warnings]
    if not found:
        return
    scenarios = len({scenario for scenario, _ in found})
    console.print(
        f"[yellow]{len(found)} warning(s) in {scenarios} scenario(s)[/yellow]: what they say was not "
        "measured, or measured less surely",
        highlight=False,
    )
    for scenario, warning in found[:WARNINGS_SHOWN]:
        console.print(f"  {_literal(scenario)}: {_literal(warning)}", highlight=False, soft_wrap=True)
    if len(found) > WARNINGS_SHOWN:
        console.print(
            f"  and {len(found) - WARNINGS_SHOWN} more: every one is in `warnings` of the result objects "
            "(--output, and the stored results)",
            highlight=False,
        )


_UNSCORED_REASONS_SHOWN = 3


def print_judges(console: Console, results: Sequence[ScenarioResult]) -> None:
    """What the judges did and cost (when the judges ran: not for verdicts decided by rule alone, with
    no judge), then each metric's run-level dictionary in a line (the judges', the dialogues'), judged
    or not."""
    if any(r.judge_detail and r.judge_status.status != "skipped" for r in with_turns(results)):
        _print_judge_usage(console, results)
    metrics = _metrics_of(results)
    summaries = run_summaries(results, metrics)
    for metric in metrics:  # in the set's order
        summary = summaries.get(metric.key)
        line = metric.summary_line(summary) if summary is not None else None
        if line is not None:  # plain text: a "[targets.X]" in it is not markup
            console.print(escape(line), highlight=False)


def _print_judge_usage(console: Console, results: Sequence[ScenarioResult]) -> None:
    use = judge_usage(results)
    console.print(
        f"Judges: {use['calls']} calls, {use['cached']} cached, {use['failed']} failed, "
        f"{use['unscored']} unscored; "
        + (
            f"tokens {use['input_tokens']} in, {use['output_tokens']} out"
            if use["input_tokens"] is not None
            else "tokens not reported by the endpoint"
        ),
        highlight=False,
    )
    reasons = Counter(
        str(one["reason"])
        for r in with_turns(results)
        for key, detail in r.judge_detail.items()
        if key != "evaluator_error"
        for one in _each_judgement(detail)
        if one.get("status") == "unscored" and one.get("reason")
    )
    for reason, count in reasons.most_common(_UNSCORED_REASONS_SHOWN):
        console.print(f"  unscored ({count}): {_literal(reason)}", highlight=False)
    if len(reasons) > _UNSCORED_REASONS_SHOWN:
        console.print(
            f"  and {len(reasons) - _UNSCORED_REASONS_SHOWN} more reasons: see `judge` in the results",
            highlight=False,
        )


def _each_judgement(detail: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A judgement's own detail, or each of its parts' (the per-agent judge's: one per agent)."""
    parts = detail.get("parts")
    return list(parts.values()) if isinstance(parts, Mapping) and parts else [detail]


def print_delivery(
    console: Console,
    status: DeliveryStatus,
    *,
    scores: DeliveryReport | None = None,
    spans: SpanDeliveryReport | None = None,
    elsewhere: int = 0,
) -> None:
    """What Langfuse acknowledged, what it refused and why, what is unknown (a request timed out), and
    what waits in the outbox for `evaluator sync`: only what Langfuse answered counts as delivered."""
    console.print(
        f"In Langfuse (acknowledged): {status.spans_confirmed} of {status.spans} spans, "
        f"{status.scores_confirmed} of {status.scores} scores",
        highlight=False,
    )
    unknown_scores, unknown_traces = (scores.unknown if scores else 0), (spans.unknown if spans else 0)
    if unknown_scores or unknown_traces:
        console.print(
            f"[yellow]Unknown[/yellow]: {unknown_scores} scores and {unknown_traces} traces were sent but "
            "their requests timed out, so Langfuse may or may not have them; they stay in the outbox "
            "and `evaluator sync` confirms them."
        )
    if status.traces_waiting or status.scores_waiting or status.experiments_waiting:
        held = f" ({status.scores_held} of them wait for their trace's spans)" if status.scores_held else ""
        runs = status.experiments_waiting
        experiments = f", the run-level scores of {runs} run{'s' if runs != 1 else ''}" if runs else ""
        console.print(
            f"[yellow]Waiting in the local outbox[/yellow]: {status.traces_waiting} traces, "
            f"{status.scores_waiting} scores{held}{experiments}. Send them with: evaluator sync",
            highlight=False,
        )
    rejected = scores.rejected if scores else {}
    for score_id, reason in rejected.items():
        console.print(f"[red]rejected[/red] score {score_id}: {_literal(reason)}", highlight=False)
    if status.scores_rejected > len(rejected):
        console.print(
            f"{status.scores_rejected} scores were rejected by Langfuse in all; "
            "`evaluator sync --retry-rejected` posts them again."
        )
    for report in (spans, scores):
        if report is not None and report.error:
            console.print(f"[yellow]Delivery stopped[/yellow]: {_literal(report.error)}", highlight=False)
    if elsewhere:
        console.print(
            f"{elsewhere} more scores wait for another Langfuse project or host; run `evaluator "
            "sync` with that project's keys to send them."
        )


_TITLES = {
    "agent_prompt": "Per agent prompt version",
    "judge_prompt": "Per judge prompt version",
    "scenario": "Per scenario",
    "run": "Per run",
}


def _delta(row: Mapping[str, Any], metrics: MetricSet) -> str:
    change = row.get("change") or {}
    parts = [
        f"{f.label} {value * 100:+.0f} pts" if f.rate else f"{f.label} {value:+.2f}"
        for f in metrics.figures
        if f.delta and (value := change.get(f.name))
    ]
    return ", ".join(parts) or ("=" if change else "")


def history_tables(rows: Sequence[Mapping[str, Any]], metrics: MetricSet | None = None) -> list[Table]:
    """One table per kind of row (agent prompt versions, judge prompt versions, scenarios or runs), a
    column per figure of `metrics` that has a label. Figures no row has a value for (no judge ran, say)
    are left out. A dialogue's figures (session-level ones) are a table of their own after it, with the
    rows that have them, so that the scenario table keeps its width."""
    metrics = metrics or default_metrics()
    labelled = [f for f in metrics.figures if f.label is not None]
    traces = [f for f in labelled if f.level != "session"]
    sessions = [f for f in labelled if f.level == "session"]
    tables = []
    for kind, title in _TITLES.items():
        chosen = [row for row in rows if row["group"] == kind]
        if not chosen:
            continue
        tables.append(_history_table(title, kind, chosen, traces, metrics))
        with_sessions = [row for row in chosen if any(row.get(f.name) is not None for f in sessions)]
        if with_sessions:
            tables.append(
                _history_table(f"{title}: dialogues", kind, with_sessions, sessions, metrics, rest=False)
            )
    return tables


def _history_table(
    title: str,
    kind: str,
    chosen: Sequence[Mapping[str, Any]],
    figures: Sequence[Figure],
    metrics: MetricSet,
    *,
    rest: bool = True,
) -> Table:
    """The rows `chosen`, a column per figure of `figures` that some row has; with `rest`, the unscored,
    run span and change columns too."""
    columns = [(f.label, f.name) for f in figures if any(r.get(f.name) is not None for r in chosen)]
    table = Table(title=title)
    table.add_column(kind.replace("_", " "), no_wrap=True)
    after = ("unscored", "runs from / to") if rest else ()
    for label in ("runs", "scenarios" if rest else "dialogues", *(label for label, _ in columns), *after):
        table.add_column(label, justify="right")
    if rest:
        table.add_column("change vs previous", overflow="fold")
    for row in chosen:
        stopped = row["first_run"].get("stopped") if kind == "run" else None
        key = row["key"] + (f" ({stopped})" if stopped else "")
        # the dialogue table counts dialogues: the most results any of its figures rests on
        count = row["scenarios"] if rest else max(row["n"].get(f.name, 0) for f in figures)
        cells: list[Text | str] = [Text(printable(key)), str(row["runs"]), str(count)]
        cells += [figure_value(name, row[name], metrics) for _, name in columns]
        if rest:
            cells += [str(row["judge_unscored"]), Text(printable(_span(row))), Text(_delta(row, metrics))]
        table.add_row(*cells)
    return table


def _span(row: Mapping[str, Any]) -> str:
    """The runs a row covers: its first run's name, `.. ` its last's when they differ."""
    span = str(row["first_run"]["name"])
    if row["last_run"]["id"] != row["first_run"]["id"]:
        span += f" .. {row['last_run']['name']}"
    return span
