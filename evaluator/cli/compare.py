"""`evaluator compare BASELINE CANDIDATE`: what changed, and the regression verdict (exit 1 on regression)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal

import typer

from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, Command, ConfigOption, app, out
from evaluator.cli._history import Source, compared_runs
from evaluator.config import load_config
from evaluator.errors import ConfigError
from evaluator.metrics import MetricSet
from evaluator.reports import check_thresholds, compare_markdown, compare_runs, print_compare
from evaluator.results import builtin_metrics

__all__ = ["compare"]

Format = Literal["text", "markdown", "json"]


@app.command(cls=Command, short_help="Compare two runs, figure by figure; exit 1 on a regression.")
def compare(
    baseline: Annotated[
        str,
        typer.Argument(
            metavar="BASELINE", help="Run id or name (id only with --source langfuse), or latest / previous."
        ),
    ],
    candidate: Annotated[
        str,
        typer.Argument(
            metavar="CANDIDATE", help="Run id or name (id only with --source langfuse), or latest / previous."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    output_format: Annotated[
        Format, typer.Option("--format", help="text (terminal), markdown (a pull-request comment) or json.")
    ] = "text",
    significant_only: Annotated[
        bool,
        typer.Option("--significant-only", help="Only regressions beyond the noise (paired test) fail."),
    ] = False,
    source: Annotated[
        Source, typer.Option(help="Read runs from the local store or from Langfuse.")
    ] = "local",
    config_path: ConfigOption = None,
) -> None:
    """Compare a candidate run with a baseline: per figure and per scenario (pass -> fail first), against
    the thresholds of [compare] in evaluator.toml. Exit 1 on a regression, 0 otherwise, 2 on bad input."""
    if as_json and output_format not in ("text", "json"):  # two answers to one question: neither silently
        raise ConfigError(
            f"--json and --format {output_format} ask for two formats. Fix: give one of them "
            "(--json is --format json)."
        )
    config = load_config(config_path)
    metrics = builtin_metrics(config)
    check_thresholds(config, metrics)
    (base, cand), _, metrics = compared_runs(config, source, metrics, [baseline, candidate])
    document = compare_runs(
        base, cand, config.settings.compare, significant_only=significant_only, metrics=metrics
    )
    if not document["paired_scenarios"]:
        raise ConfigError(
            f"{base.label} and {cand.label} have no scenario in common: there is nothing to compare. "
            "Fix: compare two runs of the same suite (or of overlapping --tag selections)."
        )
    show(document, "json" if as_json else output_format, metrics)
    raise typer.Exit(EXIT_FAILED if document["verdict"] == "regression" else EXIT_PASSED)


def show(document: dict[str, Any], output_format: Format, metrics: MetricSet | None = None) -> None:
    if output_format == "json":
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif output_format == "markdown":
        sys.stdout.write(compare_markdown(document, metrics))
    else:
        print_compare(out, document, metrics)
