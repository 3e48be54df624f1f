"""`evaluator validate`: one trace (a saved file, or read from Langfuse by id) against one scenario."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, ConfigOption, app, err, langfuse, out
from evaluator.config import Config, load_config
from evaluator.errors import ConfigError, did_you_mean
from evaluator.reports import notice, summary_table
from evaluator.results import JudgeStatus, evaluate
from evaluator.run.service import rules_for
from evaluator.scenarios import load_scenarios
from evaluator.trace import CONVENTION_NAMES, Trace, TraceRules, load_trace_file, read_trace


@app.command()
def validate(
    scenario: Annotated[Path, typer.Option(help="The scenario file.")],
    trace: Annotated[
        Path | None, typer.Option(help="A Langfuse trace or observations page (JSON file).")
    ] = None,
    trace_id: Annotated[str | None, typer.Option(help="A trace id to read from Langfuse.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result object.")] = False,
    convention: Annotated[
        str | None,
        typer.Option(help=f"How the trace names agents and tools: {', '.join(CONVENTION_NAMES)}."),
    ] = None,
    config_path: ConfigOption = None,
) -> None:
    """Validate one trace (a saved file, or read from Langfuse) against one scenario."""
    if (trace is None) == (trace_id is None):
        raise ConfigError("give exactly one of --trace FILE or --trace-id ID.")
    matches = load_scenarios([str(scenario)])
    if len(matches) != 1:
        raise ConfigError(
            f"--scenario {scenario} holds {len(matches)} scenarios. Fix: name one scenario file."
        )
    loaded = matches[0].scenario
    config = load_config(config_path)
    rules = _rules(config, loaded.target, convention)
    normalized = (
        load_trace_file(trace, rules)
        if trace is not None
        else _read_from_langfuse(trace_id or "", config, rules)
    )
    result = evaluate(
        loaded,
        normalized,
        judge_status=JudgeStatus(status="skipped", reason="validate does not run the judge"),
    )
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, default=str) + "\n")
    else:
        out.print(summary_table([result]))
    raise typer.Exit(EXIT_PASSED if result.status == "passed" else EXIT_FAILED)


def _rules(config: Config, target: str, convention: str | None) -> TraceRules:
    """The scenario's target's rules (defaults for a target not configured), `--convention` first."""
    if convention is not None and convention not in CONVENTION_NAMES:
        raise ConfigError(
            f'--convention "{convention}" is unknown{did_you_mean(convention, CONVENTION_NAMES)}. '
            f"Fix: use one of: {', '.join(CONVENTION_NAMES)}."
        )
    configured = config.settings.targets.get(target)
    if configured is None:
        return TraceRules(convention=convention or "auto")
    return rules_for(configured, convention)


def _read_from_langfuse(trace_id: str, config: Config, rules: TraceRules) -> Trace:
    with langfuse("--trace-id", config, ", or pass --trace FILE") as connection:
        connection.project_id()
        deadline = config.settings.langfuse.read_deadline_seconds
        with err.status(f"Reading trace {trace_id} from Langfuse..."):
            read = read_trace(connection.traces, trace_id, deadline_seconds=deadline, rules=rules)
    if not read.settled:
        notice(
            err,
            "warning",
            f"trace {trace_id} was still changing in Langfuse after {deadline:g} s; this "
            f"verdict is on the {read.trace.observation_count} observations readable so far.",
        )
    return read.trace
