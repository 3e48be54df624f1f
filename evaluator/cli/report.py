"""`evaluator report`: history per run, scenario or prompt version, from the local store."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from evaluator.cli._common import ConfigOption, app, out
from evaluator.config import load_config
from evaluator.reports import Grouping, aggregate, history_table
from evaluator.storage import Store


@app.command()
def report(
    by: Annotated[
        Grouping, typer.Option(help="Group results per run, per scenario or per prompt version.")
    ] = "run",
    last: Annotated[int | None, typer.Option(min=1, help="Only the last N runs.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    config_path: ConfigOption = None,
) -> None:
    """Summarise stored results per run, scenario or prompt version: pass rates, mean full_workflow."""
    config = load_config(config_path)
    rows = aggregate(Store(config.store_path).history(last_runs=last), by)
    if as_json:
        sys.stdout.write(json.dumps([row.to_json() for row in rows], indent=2) + "\n")
    elif not rows:
        out.print(
            f"No results stored in {config.store_path} yet: run `evaluator run` first.", highlight=False
        )
    else:
        out.print(history_table(rows, by))
