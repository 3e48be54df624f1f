"""`evaluator validate`: one trace (a saved file, or read from Langfuse by id) against one scenario,
judged by the LLM judges too when an endpoint is configured (`--no-judge` to skip them); a dialogue
scenario against its recorded conversation (`--session-id`, or `--trace` once per turn), and CRAG turn
data (`--turns`): both in cli._recorded."""

from __future__ import annotations

import functools
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evaluator._time import Deadline
from evaluator.cli._common import (
    EXIT_FAILED,
    EXIT_PASSED,
    Command,
    ConfigOption,
    app,
    err,
    langfuse,
    out,
    warnings_only,
)
from evaluator.config import Config, load_config
from evaluator.errors import ConfigError, did_you_mean
from evaluator.langfuse import LangfuseSettings
from evaluator.prompts import PromptLibrary
from evaluator.reports import notice, print_judges, printable, summary_table
from evaluator.results import builtin_metrics, evaluate
from evaluator.run import catalogs, rules_for
from evaluator.scenarios import LoadedScenario, Scenario, load_scenarios
from evaluator.trace import (
    CONVENTION_NAMES,
    DetailSource,
    Trace,
    TraceRules,
    detail_from_file,
    load_trace_file,
    read_trace,
)

if TYPE_CHECKING:
    from evaluator.langfuse import LangfuseConnection

__all__ = ["validate"]


@app.command(cls=Command, short_help="Validate a recorded trace, conversation or CRAG turn data.")
def validate(
    scenario: Annotated[Path | None, typer.Option(metavar="FILE", help="The scenario file.")] = None,
    trace: Annotated[
        list[Path] | None,
        typer.Option(
            metavar="FILE",
            help="A Langfuse trace or observations page (JSON file); a dialogue: one per turn, in order.",
        ),
    ] = None,
    trace_id: Annotated[
        str | None, typer.Option(metavar="ID", help="A trace id to read from Langfuse.")
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(
            metavar="ID", help="A dialogue's recorded session to read from Langfuse (a trace per turn)."
        ),
    ] = None,
    turns: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="CRAG turn data (JSONL) to score: prints the scores dictionary."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result object.")] = False,
    convention: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help=f"How the trace names agents and tools: {', '.join(CONVENTION_NAMES)}."
        ),
    ] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Do not run the LLM judges.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ask the judges again, even for verdicts in the cache.")
    ] = False,
    config_path: ConfigOption = None,
) -> None:
    """Validate (and judge) one trace, a saved file or read from Langfuse, against one scenario; a
    dialogue's recorded conversation (its session in Langfuse, or a trace file per turn); or score CRAG
    turn data (`--turns`)."""
    from evaluator.cli._recorded import RecordedSource, validate_dialogue, validate_turns  # the run's stages

    traces = list(trace or ())
    if turns is not None:
        if scenario is not None or traces or trace_id is not None or session_id is not None:
            raise ConfigError(
                "--turns scores CRAG turn data on its own. Fix: drop --scenario, --trace, --trace-id and "
                "--session-id, or drop --turns."
            )
        validate_turns(load_config(config_path), turns, as_json=as_json, no_judge=no_judge, no_cache=no_cache)
        return
    if scenario is None:
        raise ConfigError(
            "give --scenario FILE (with --trace FILE, --trace-id ID or --session-id ID), or --turns FILE."
        )
    if sum((bool(traces), trace_id is not None, session_id is not None)) != 1:
        raise ConfigError("give exactly one of --trace FILE, --trace-id ID or --session-id ID.")
    config = load_config(config_path)
    loaded = _scenario(config, scenario, no_judge=no_judge)
    if loaded.is_dialogue:
        recorded = RecordedSource(files=tuple(traces), trace_id=trace_id, session_id=session_id)
        validate_dialogue(
            config,
            LoadedScenario(scenario=loaded, path=scenario),
            recorded,
            rules=_rules(config, loaded.target, convention),
            no_judge=no_judge,
            no_cache=no_cache,
            as_json=as_json,
        )
        return
    if session_id is not None:
        raise ConfigError(
            f"--scenario {scenario} is a single-turn scenario: --session-id reads a dialogue's recorded "
            "conversation. Fix: give --trace-id ID (or --trace FILE) for a single-turn scenario, or a "
            "dialogue scenario (one with turns)."
        )
    if len(traces) > 1:
        raise ConfigError(
            f"--scenario {scenario} is a single-turn scenario, but --trace was given {len(traces)} times. "
            "Fix: give one --trace FILE (several, one per turn, are for a dialogue scenario)."
        )
    _single_turn(
        config,
        loaded,
        traces[0] if traces else None,
        trace_id,
        convention=convention,
        no_judge=no_judge,
        no_cache=no_cache,
        as_json=as_json,
    )


def _single_turn(
    config: Config,
    loaded: Scenario,
    trace: Path | None,
    trace_id: str | None,
    *,
    convention: str | None,
    no_judge: bool,
    no_cache: bool,
    as_json: bool,
) -> None:
    """One trace against one single-turn scenario, judged when an endpoint is configured."""
    from evaluator.run import NOT_FINISHED, judge_result  # here: the judge stage loads with its command

    with ExitStack() as stack:
        connection = None
        if trace_id is not None:
            connection = stack.enter_context(langfuse("--trace-id", config, ", or pass --trace FILE"))
        elif LangfuseSettings.from_env() is not None:  # judge prompts and traces in that project
            connection = stack.enter_context(langfuse("validate", config))
        rules = _rules(config, loaded.target, convention)
        detail: DetailSource | None
        if trace is not None:
            normalized, detail = load_trace_file(trace, rules), functools.partial(detail_from_file, trace)
        else:
            normalized, detail = _read(connection, trace_id, config, rules)
        metrics = builtin_metrics(config)
        result = evaluate(loaded, normalized, judge_status=NOT_FINISHED, metrics=metrics, detail=detail)
        result = judge_result(
            config,
            loaded,
            result,
            normalized,
            connection=connection,
            no_judge=no_judge,
            no_cache=no_cache,
            notice=warnings_only,
            metrics=metrics,
        )
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, default=str) + "\n")
    else:
        out.print(summary_table([result]))
        print_judges(out, [result])
        if result.judge_status.status != "scored":
            out.print(
                f"Judges {result.judge_status.status}: {printable(result.judge_status.reason)}",
                highlight=False,
                markup=False,
            )
    raise typer.Exit(EXIT_PASSED if result.status == "passed" else EXIT_FAILED)


def _scenario(config: Config, path: Path, *, no_judge: bool) -> Scenario:
    """The one scenario of the file. Its `target:` is optional here (no target runs); when it names a
    configured target, the names it expects are checked against what that target declares, as `lint`
    checks them. Its judge: names prompt files that exist (when the judges may run)."""
    prompts = None if no_judge else PromptLibrary.of_project(config.prompts_dir).catalog()
    judge_prompt = config.settings.judge.quality_prompt
    matches = load_scenarios([str(path)], prompts=prompts, judge_prompt=judge_prompt)
    if len(matches) != 1:
        raise ConfigError(f"--scenario {path} holds {len(matches)} scenarios. Fix: name one scenario file.")
    loaded = matches[0].scenario
    declared = catalogs(config).get(loaded.target)
    if declared is not None:
        load_scenarios(
            [str(path)], targets={loaded.target: declared}, prompts=prompts, judge_prompt=judge_prompt
        )
    return loaded


def _rules(config: Config, target: str, convention: str | None) -> TraceRules:
    """The scenario's target's rules (defaults for a target not configured, or none named),
    `--convention` first."""
    if convention is not None and convention not in CONVENTION_NAMES:
        raise ConfigError(
            f'--convention "{convention}" is unknown{did_you_mean(convention, CONVENTION_NAMES)}. '
            f"Fix: use one of: {', '.join(CONVENTION_NAMES)}."
        )
    configured = config.settings.targets.get(target)
    if configured is None:
        return TraceRules(convention=convention or "auto")
    return rules_for(configured, convention)


def _read(
    connection: LangfuseConnection | None, trace_id: str | None, config: Config, rules: TraceRules
) -> tuple[Trace, DetailSource | None]:
    if connection is None or trace_id is None:
        raise ConfigError("--trace-id needs Langfuse. Fix: set the LANGFUSE_* keys, or pass --trace FILE.")
    connection.project_id()
    deadline = config.settings.langfuse.read_deadline_seconds
    with err.status(f"Reading trace {trace_id} from Langfuse (until it settles, up to {deadline:g} s)..."):
        reader = connection.traces.within(Deadline(deadline))
        read = read_trace(reader, trace_id, deadline_seconds=deadline, rules=rules)
    if not read.settled:
        notice(
            err,
            "warning",
            f"trace {trace_id} was still changing in Langfuse after {deadline:g} s; this "
            f"verdict is on the {read.trace.observation_count} observations readable so far.",
        )
    return read.trace, read.detail
