"""`evaluator report`: history and trends per prompt version (default), scenario or run; JSON, HTML."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from evaluator._time import utc_now
from evaluator.cli._common import Command, ConfigOption, app, out
from evaluator.cli._history import Source, load_runs
from evaluator.config import load_config
from evaluator.errors import ConfigError
from evaluator.reports import Grouping, history_tables, html_report, report_document
from evaluator.results import builtin_metrics

__all__ = ["report"]


@app.command(cls=Command, short_help="History and trends of the stored runs, per prompt version.")
def report(
    by: Annotated[
        Grouping,
        typer.Option(help="Rows per prompt version (agent and judge prompts), per scenario or per run."),
    ] = "prompt",
    last: Annotated[int | None, typer.Option(min=1, metavar="N", help="Only the last N runs.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Also write a self-contained HTML page here."),
    ] = None,
    source: Annotated[
        Source, typer.Option(help="Read runs from the local store or from the scores in Langfuse.")
    ] = "local",
    config_path: ConfigOption = None,
) -> None:
    """Summarise stored runs per prompt version, scenario or run: pass rates, trajectory means, judge
    quality and correctness, latency, and the change against the previous version."""
    config = load_config(config_path)
    metrics = builtin_metrics(config)
    runs, where, metrics = load_runs(config, source, metrics, last=last)
    document = report_document(runs, by, source, metrics)
    if html is not None:
        page = html_report(
            runs, source=where, config=config.settings.compare, generated_at=utc_now(), metrics=metrics
        )
        try:
            html.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"--html {html} cannot be written ({exc}). Fix: choose a writable path."
            ) from None
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif not runs:
        out.print(f"No results in {where} yet: run `evaluator run` first.", highlight=False)
    else:
        out.print(f"{len(runs)} runs from {where}", highlight=False)
        tables = history_tables(document["rows"], metrics)
        for table in tables:
            out.print(table)
        if not tables and by == "prompt":
            out.print(
                "No result of these runs used a prompt file, so there is nothing to show by prompt. "
                "Fix: use --by run or --by scenario.",
                highlight=False,
            )
    if html is not None and not as_json:
        out.print(f"HTML report: {html}", highlight=False)
