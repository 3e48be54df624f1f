"""Human-readable output: notices, the progress bar while running and the summary table at the end.

Text that comes from users or targets (scenario ids, names, error messages) is never read as Rich
markup: a `[/]` in an exception message must print, not crash the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from evaluator.delivery import DeliveryReport, SpanDeliveryReport
from evaluator.history import Row
from evaluator.results import RunInfo, ScenarioResult, totals

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
    """What went wrong, in one line: missing and unexpected names, the flow, the path, the answer."""
    if result.error:
        return result.error
    parts: list[str] = []
    if result.workflow is not None:
        agents, tools = result.workflow.agents, result.workflow.tools
        missing = [*agents.missing, *tools.missing]
        unexpected = [*agents.unexpected, *tools.unexpected]
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unexpected:
            parts.append(f"unexpected {', '.join(unexpected)}")
    tj = result.trajectory
    if tj is not None and not tj.passed:
        if tj.expected_flow is not None and tj.actual_flow != tj.expected_flow:
            parts.append(f"flow {tj.actual_flow} (expected {tj.expected_flow})")
        if tj.full_path != 1.0:
            parts.append(f"path {' > '.join(tj.actual) or '(none)'}")
    if result.answer is not None and result.answer.missing:
        parts.append(f"answer lacks {', '.join(repr(s) for s in result.answer.missing)}")
    return "; ".join(parts) or "-"


def _trajectory_cell(result: ScenarioResult) -> str:
    tj = result.trajectory
    if tj is None:
        return "-"
    return f"{tj.partial_path:.2f} / {tj.full_path:.0f} / {tj.path_nodes:.2f} / {tj.full_workflow:.0f}"


def summary_table(results: Sequence[ScenarioResult]) -> Table:
    table = Table(title="Scenario results", show_lines=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("status")
    table.add_column("missing / unexpected", overflow="fold")
    table.add_column("trajectory\npartial / full / nodes / workflow", justify="center")
    table.add_column("latency", justify="right")
    for r in results:
        style = _STATUS_STYLE[r.status]
        latency = f"{r.latency_ms / 1000:.2f} s" if r.latency_ms is not None else "-"
        table.add_row(
            Text(r.scenario_id), Text(r.status, style=style), Text(_problems(r)), _trajectory_cell(r), latency
        )
    return table


def print_summary(
    console: Console, run: RunInfo, results: Sequence[ScenarioResult], expected_count: int
) -> None:
    console.print(summary_table(results))
    counts = totals(results)
    line = (
        f"[bold]{counts['scenarios']} scenarios[/bold]: [green]{counts['passed']} passed[/green]"
        f", [red]{counts['failed']} failed[/red], [bold red]{counts['error']} error[/bold red]"
        f"  (run {escape(run.id)})"
    )
    console.print(line)
    if run.interrupted:
        console.print(
            f"[yellow]Interrupted: {expected_count - len(results)} scenarios did not "
            "finish; the finished ones are stored.[/yellow]"
        )


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


def history_table(rows: Sequence[Row], by: str) -> Table:
    table = Table(title=f"History by {by}")
    table.add_column(by, overflow="fold")
    for name in ("results", "passed", "errors", "pass rate", "full_workflow", "last"):
        table.add_column(name, justify="right")
    for row in rows:
        data = row.to_json()
        rate = f"{data['pass_rate']:.0%}" if data["pass_rate"] is not None else "-"
        workflow = f"{data['full_workflow']:.2f}" if data["full_workflow"] is not None else "-"
        table.add_row(
            Text(row.key),
            str(row.results),
            str(row.passed),
            str(row.errors),
            rate,
            workflow,
            Text(row.last_status),
        )
    return table
