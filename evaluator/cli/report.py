"""`evaluator report`: history and trends per prompt version (default), scenario or run; JSON, HTML."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from evaluator._time import utc_now
from evaluator.cli._common import Command, ConfigOption, app, err, langfuse, out
from evaluator.cli._history import Source, load_runs
from evaluator.config import Config, load_config
from evaluator.errors import ConfigError, EvaluatorError
from evaluator.langfuse import LangfuseSettings
from evaluator.reports import (
    TraceLink,
    agent_tables,
    agents_document,
    history_tables,
    html_report,
    notice,
    report_document,
    trace_links,
)
from evaluator.results import builtin_metrics
from evaluator.run import check_output_file, store_files
from evaluator.storage import write_whole

__all__ = ["report"]


ReportBy = Literal["prompt", "scenario", "run", "agent"]


@app.command(cls=Command, short_help="History and trends of the stored runs, per prompt version.")
def report(
    by: Annotated[
        ReportBy,
        typer.Option(
            help="Rows per prompt version (agent and judge prompts), per scenario, per run, or per agent "
            "(per agent prompt version, with its tool issues)."
        ),
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
    check_output_file("--html", html, example="report.html", keep=store_files(config))
    metrics = builtin_metrics(config)
    runs, where, metrics = load_runs(config, source, metrics, last=last)
    link = _trace_link(config) if by == "agent" or html is not None else None
    if by == "agent":
        document = agents_document(runs, source, link)
    else:
        document = report_document(runs, by, source, metrics)
    if html is not None:
        page = html_report(
            runs,
            source=where,
            config=config.settings.compare,
            generated_at=utc_now(),
            metrics=metrics,
            link=link,
        )
        try:
            write_whole(html, page)
        except OSError as exc:
            raise ConfigError(
                f"--html {html} cannot be written ({exc}). Fix: choose a writable path."
            ) from None
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif not runs:
        out.print(f"No results in {where} yet: run `evaluator run` first.", highlight=False, markup=False)
    else:
        out.print(f"{len(runs)} runs from {where}", highlight=False, markup=False)
        tables = agent_tables(document) if by == "agent" else history_tables(document["rows"], metrics)
        for table in tables:
            out.print(table)
        if not tables and by == "agent":
            out.print(
                "No result of these runs has a per-agent analysis. Fix: declare the agents' tools "
                "([targets.NAME.agent_tools]) or their schemas (tool_schemas) and run again.",
                highlight=False,
                markup=False,  # the brackets are the message's, not markup
            )
        if not tables and by == "prompt":
            out.print(
                "No result of these runs used a prompt file, so there is nothing to show by prompt. "
                "Fix: use --by run or --by scenario.",
                highlight=False,
                markup=False,
            )
    if html is not None and not as_json:
        out.print(f"HTML report: {html}", highlight=False, markup=False)


def _trace_link(config: Config) -> TraceLink | None:
    """Trace pages in Langfuse's UI, on the observation, when Langfuse is configured and answers
    (None otherwise: the issues then name their trace ids)."""
    settings = LangfuseSettings.from_env()
    if settings is None:
        return None
    try:
        with langfuse("report", config) as connection:
            project = connection.project_id()
    except EvaluatorError as exc:
        notice(err, "warning", f"no trace links: {exc}")
        return None
    return trace_links(f"{settings.base_url}/project/{project}/traces/")
