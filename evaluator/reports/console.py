"""Human-readable output: notices, the progress bar while running and the summary table at the end.

Text that comes from users or targets (scenario ids, names, error messages) is never read as Rich
markup: a `[/]` in an exception message must print, not crash the summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from evaluator.reports.compare_text import figure_value
from evaluator.results import RATE_FIGURES, RunInfo, ScenarioResult, totals
from evaluator.storage.delivery import DeliveryReport, SpanDeliveryReport

_STATUS_STYLE = {"passed": "green", "failed": "red", "error": "bold red"}


_NOTICE_STYLE = {"error": "red", "warning": "yellow"}


def notice(console: Console, kind: str, message: str) -> None:
    """'error: ...' or 'warning: ...', the message printed literally."""
    style = _NOTICE_STYLE.get(kind, "bold")
    console.print(f"[{style}]{kind}[/{style}]: {escape(message)}", highlight=False, soft_wrap=True)


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _problems(result: ScenarioResult) -> str:
    """What went wrong, in one line: the error, or each verdict's problems."""
    return "; ".join(result.problems()) or "-"


def _trajectory_cell(result: ScenarioResult) -> str:
    tj = result.trajectory
    if tj is None:
        return "-"
    return f"{tj.partial_path:.2f} / {tj.full_path:.0f} / {tj.path_nodes:.2f} / {tj.full_workflow:.0f}"


def summary_table(results: Sequence[ScenarioResult], title: str = "Scenario results") -> Table:
    table = Table(title=title, show_lines=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("status")
    table.add_column("missing / unexpected", overflow="fold")
    table.add_column("trajectory\npartial / full / nodes / workflow", justify="center")
    table.add_column("latency", justify="right")
    for r in results:
        status = "evaluator error" if r.evaluator_error is not None else r.status
        latency = f"{r.latency_ms / 1000:.2f} s" if r.latency_ms is not None else "-"
        table.add_row(
            Text(r.scenario_id),
            Text(status, style=_STATUS_STYLE[r.status]),
            Text(_problems(r)),
            _trajectory_cell(r),
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
) -> None:
    """The scenarios that did not pass (every scenario with `full_table`), then the totals."""
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
        f"  (run {escape(run.id)})"
    )
    console.print(line)
    if bugs:
        console.print(
            f"[bold red]{bugs} of the errors are evaluator errors[/bold red]: a bug in the evaluator, not a "
            "failure of your agents; no score was posted for them. The tracebacks are in the stored "
            "results (`evaluator_error`), and in --output."
        )
    if run.interrupted:
        console.print(
            f"[yellow]Interrupted: {expected_count - len(results)} scenarios did not "
            "finish; the finished ones are stored.[/yellow]"
        )
    if run.cut_off:
        console.print(f"[yellow]Stopped early: {escape(run.cut_off)}.[/yellow]")


def print_delivery(
    console: Console,
    report: DeliveryReport | None,
    *,
    waiting: int,
    elsewhere: int = 0,
    spans: SpanDeliveryReport | None = None,
) -> None:
    """What reached Langfuse, what it refused, and what waits in the outbox."""
    if spans is not None:
        console.print(f"Kept spans sent to Langfuse: {spans.sent_spans}")
        if spans.waiting_batches:
            console.print(
                f"[yellow]{spans.waiting_batches} span batches are not yet in Langfuse[/yellow]; "
                "they are kept in the local outbox. Send them with: evaluator sync"
            )
    if report is not None:
        console.print(f"Scores posted to Langfuse: {report.sent}")
        for score_id, reason in report.rejected.items():
            console.print(f"[red]rejected[/red] score {score_id}: {escape(reason)}", highlight=False)
        if report.error:
            console.print(f"[yellow]Delivery stopped[/yellow]: {escape(report.error)}", highlight=False)
    if waiting:
        console.print(
            f"[yellow]{waiting} scores are not yet in Langfuse[/yellow]; they are kept in the local "
            "outbox. Send them with: evaluator sync"
        )
    if elsewhere:
        console.print(
            f"{elsewhere} more scores wait for another Langfuse project or host; run `evaluator "
            "sync` with that project's keys to send them."
        )


_HISTORY_COLUMNS = (
    ("pass", "pass_rate"),
    ("workflow", "workflow_pass_rate"),
    ("full wf", "trajectory_full_workflow"),
    ("quality", "quality_mean"),
    ("accuracy", "correctness_accuracy"),
    ("truthful", "correctness_truthfulness"),
    ("latency", "latency_ms"),
)
_TITLES = {
    "agent_prompt": "Per agent prompt version",
    "judge_prompt": "Per judge prompt version",
    "scenario": "Per scenario",
    "run": "Per run",
}


def _delta(row: Mapping[str, Any]) -> str:
    change = row.get("change") or {}
    parts = [
        f"{label} {value * 100:+.0f} pts" if name in RATE_FIGURES else f"{label} {value:+.2f}"
        for label, name in (
            ("pass", "pass_rate"),
            ("full wf", "trajectory_full_workflow"),
            ("quality", "quality_mean"),
        )
        if (value := change.get(name))
    ]
    return ", ".join(parts) or ("=" if change else "")


def history_tables(rows: Sequence[Mapping[str, Any]]) -> list[Table]:
    """One table per kind of row (agent prompt versions, judge prompt versions, scenarios or runs).
    Figures no row has a value for (no judge ran, say) are left out."""
    tables = []
    for kind, title in _TITLES.items():
        chosen = [row for row in rows if row["group"] == kind]
        if not chosen:
            continue
        columns = [
            (label, name) for label, name in _HISTORY_COLUMNS if any(r[name] is not None for r in chosen)
        ]
        table = Table(title=title)
        table.add_column(kind.replace("_", " "), no_wrap=True)
        for label in ("runs", "scenarios", *(label for label, _ in columns), "unscored", "runs from / to"):
            table.add_column(label, justify="right")
        table.add_column("change vs previous", overflow="fold")
        for row in chosen:
            span = row["first_run"]["name"]
            if row["last_run"]["id"] != row["first_run"]["id"]:
                span += f" .. {row['last_run']['name']}"
            table.add_row(
                Text(row["key"]), str(row["runs"]), str(row["scenarios"]),
                *(figure_value(name, row[name]) for _, name in columns),
                str(row["judge_unscored"]), Text(span), Text(_delta(row)),
            )  # fmt: skip
        tables.append(table)
    return tables
