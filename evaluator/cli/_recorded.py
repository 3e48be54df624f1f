"""`evaluator validate` of recorded conversations (DESIGN.md, "Dialogues", Recorded dialogues): a dialogue
scenario against its session read from Langfuse (`--session-id`) or a trace file per turn (`--trace`
repeated), printed as `validate` prints a result; and CRAG turn data (`--turns FILE.jsonl`), printed
as the seed's scores dictionary."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from evaluator._time import Deadline
from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, err, langfuse, out, warnings_only
from evaluator.config import Config
from evaluator.errors import ConfigError, LangfuseUnavailableError
from evaluator.langfuse import LangfuseConnection, LangfuseSettings
from evaluator.metrics import dialogue as dm
from evaluator.reports import notice, print_judges, printable, summary_table
from evaluator.results import ScenarioResult, builtin_metrics, with_dialogues
from evaluator.run import (
    CragRecord,
    DialogueSettings,
    RecordedTurn,
    TurnScores,
    check_turn_count,
    dialogue_settings,
    judged_recorded_dialogue,
    load_turn_data,
    new_run_id,
    score_turn_data,
)
from evaluator.scenarios import LoadedScenario
from evaluator.trace import (
    SessionTrace,
    TraceRules,
    detail_from_file,
    in_turn_order,
    list_session,
    load_trace_file,
    read_session,
    session_ids,
)

__all__ = ["RecordedSource", "validate_dialogue", "validate_turns"]

_SHOWN = 20  # undecided turns listed on the terminal (--json lists them all)


@dataclass(frozen=True, kw_only=True)
class RecordedSource:
    """Where a recorded conversation comes from: trace files (one per turn), or a Langfuse session;
    a `trace_id` is refused for a dialogue."""

    files: tuple[Path, ...] = ()
    trace_id: str | None = None
    session_id: str | None = None


def validate_dialogue(
    config: Config,
    item: LoadedScenario,
    source: RecordedSource,
    *,
    rules: TraceRules,
    no_judge: bool,
    no_cache: bool,
    as_json: bool,
) -> None:
    """The dialogue evaluated (and its turns judged, as a run judges them) against its recorded turns,
    printed; exits 0 when it passed, else 1."""
    if source.trace_id is not None:
        raise ConfigError(
            f"--scenario {item.path} is a dialogue (it has turns): its recorded conversation is a trace "
            "per turn. Fix: give --session-id ID (its session in Langfuse), or --trace FILE once per "
            "turn, in order."
        )
    target = item.scenario.target
    settings = dialogue_settings(config, {target}).get(target, DialogueSettings())
    with ExitStack() as stack:
        connection = None
        if source.files:
            turns, session = _files_turns(item, source.files, rules)
            if LangfuseSettings.from_env() is not None:  # judge prompts and traces in that project
                connection = stack.enter_context(langfuse("validate", config))
        else:
            session = source.session_id or ""
            alternative = ", or pass --trace FILE once per turn"
            connection = stack.enter_context(langfuse("--session-id", config, alternative))
            turns = _read_session(connection, session, config, rules, item)
        result = judged_recorded_dialogue(
            config,
            item,
            turns,
            session=session,
            settings=settings,
            metrics=with_dialogues(builtin_metrics(config)),
            connection=connection,
            no_judge=no_judge,
            no_cache=no_cache,
            notice=warnings_only,
        )
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, default=str) + "\n")
    else:
        _print_dialogue(result)
    raise typer.Exit(EXIT_PASSED if result.status == "passed" else EXIT_FAILED)


def _files_turns(
    item: LoadedScenario, files: Sequence[Path], rules: TraceRules
) -> tuple[list[RecordedTurn], str]:
    """The turns of `--trace` given once per turn, in order, and the session they name ("" if none)."""
    check_turn_count(
        item,
        len(files),
        recorded=f"--trace was given {len(files)} time{'s' if len(files) != 1 else ''}",
        fix="give --trace once per user turn of the dialogue, in the order of its turns.",
    )
    turns = [
        RecordedTurn(trace=load_trace_file(path, rules), detail=functools.partial(detail_from_file, path))
        for path in files
    ]
    return turns, _files_session(files)


def _read_session(
    connection: LangfuseConnection, session: str, config: Config, rules: TraceRules, item: LoadedScenario
) -> list[RecordedTurn]:
    """The session's traces, one per turn in time order, read within the read deadline (per trace,
    as `--trace-id` reads one)."""
    try:
        connection.project_id()
    except LangfuseUnavailableError as exc:
        raise ConfigError(
            f"{exc}. Fix: check that Langfuse is up at LANGFUSE_BASE_URL and that LANGFUSE_PUBLIC_KEY "
            "and LANGFUSE_SECRET_KEY are its project's keys, or pass --trace FILE once per turn."
        ) from None
    deadline = config.settings.langfuse.read_deadline_seconds
    expected = len(item.scenario.turns or ())
    with err.status(f"Listing session {session} in Langfuse (until it settles, up to {deadline:g} s)..."):
        listing = list_session(
            connection.traces.within(Deadline(deadline)),
            session,
            deadline_seconds=deadline,
            expected_traces=expected,
        )
    count = len(listing.traces)
    if not listing.settled and count < expected:  # waited for the missing turns, changing or not
        notice(
            err,
            "warning",
            f"session {session} in Langfuse held {count} of the dialogue's {expected} turns' traces "
            f"after waiting {deadline:g} s ([langfuse] read_deadline_seconds) for the rest.",
        )
    elif not listing.settled:
        notice(
            err,
            "warning",
            f"session {session} was still changing in Langfuse after {deadline:g} s; evaluating the "
            f"{count} traces readable so far.",
        )
    check_turn_count(
        item,
        count,
        recorded=f"session {session} in Langfuse holds {count} trace{'s' if count != 1 else ''}",
        fix=(
            "check the session id and the scenario (the conversation may be another dialogue's); a "
            "conversation still being recorded, or ingested, may need a moment: try again."
            if count < expected
            else "give the scenario this conversation plays (one user turn per trace), or check the "
            "session id: a session that holds several conversations, or calls beside the turns (a "
            "title or summary generated in the same session, say), cannot be told apart; then save "
            "each turn's trace and give --trace FILE once per turn, in order (see README, Recorded "
            f"conversations). The session's traces, in time order: {_listed(listing.traces)}."
        ),
    )
    with err.status(f"Reading the {count} traces of session {escape(printable(session))} from Langfuse..."):
        reader = connection.traces.each_within(deadline)
        reads = read_session(reader, listing.traces, deadline_seconds=deadline, rules=rules)
    reads = in_turn_order(listing.traces, reads, [turn.user for turn in item.scenario.turns or ()])
    for index, read in enumerate(reads):
        if not read.settled:
            notice(
                err,
                "warning",
                f"turn {index}: trace {read.trace.id} was still changing in Langfuse after {deadline:g} s; "
                f"this verdict is on the {read.trace.observation_count} observations readable so far.",
            )
    return [RecordedTurn(trace=read.trace, detail=read.detail) for read in reads]


def _listed(traces: Sequence[SessionTrace]) -> str:
    """The session's traces as the error shows them: id and root name, in time order (the first 10)."""
    shown = [f"{t.trace_id} ({t.name or 'unnamed'})" for t in traces[:10]]
    more = f", and {len(traces) - 10} more" if len(traces) > 10 else ""
    return ", ".join(shown) + more


def _files_session(paths: Sequence[Path]) -> str:
    """The session id the trace files name (`session_ids`), when they name one and the same; else ""."""
    found: set[str] = set()
    for path in paths:
        try:
            found |= session_ids(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError):
            continue
    return found.pop() if len(found) == 1 else ""


def _print_dialogue(result: ScenarioResult) -> None:
    out.print(summary_table([result]))
    if result.dialogue is not None:
        out.print(_turn_table(result))
    print_judges(out, [result])
    if result.judge_status.status != "scored":
        out.print(
            f"Judges {result.judge_status.status}: {printable(result.judge_status.reason)}",
            highlight=False,
            markup=False,
        )


def _cut(value: Any, width: int = 60) -> Text:
    """What a turn said, cut to `width`, as written (no markup; control characters as escapes)."""
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value, default=str)
    return Text(printable(text if len(text) <= width else text[: width - 1] + "…"))


def _turn_table(result: ScenarioResult) -> Table:
    """One row per turn: its status, the user's message, the reply, what failed."""
    session = result.dialogue.session_id if result.dialogue is not None else ""
    title = f"Turns of {result.scenario_id}" + (f" (session {session})" if session else "")
    table = Table(title=Text(printable(title)))  # a session id from a trace file or Langfuse: not markup
    for column in ("turn", "status", "user", "reply", "what failed"):
        table.add_column(column, overflow="fold")
    for turn in result.dialogue.turns if result.dialogue is not None else ():
        output = turn.result.output if turn.result is not None else None
        table.add_row(
            str(turn.turn),
            turn.status,
            _cut(turn.input),
            _cut(output),
            Text(printable("; ".join(turn.problems()) or "-")),
        )
    return table


def validate_turns(config: Config, path: Path, *, as_json: bool, no_judge: bool, no_cache: bool) -> None:
    """CRAG turn data scored: the scores dictionary, and the turns nothing could decide. Exit 0."""
    records = load_turn_data(path)
    connection = LangfuseConnection.from_env()  # judge prompts and traces in that project, when keys are set
    try:
        scored = score_turn_data(
            config,
            records,
            no_judge=no_judge,
            no_cache=no_cache,
            connection=connection,
            run_id=new_run_id(),
            notice=lambda kind, message: notice(err, kind, message),  # the note: how to enable the judge
        )
    finally:
        if connection is not None:
            connection.shutdown(config.settings.langfuse.flush_timeout_seconds)
    if as_json:
        sys.stdout.write(json.dumps(scored.to_json(), indent=2) + "\n")
    else:
        _print_scores(path, records, scored)
    raise typer.Exit(EXIT_PASSED)


_COLUMNS = (*dm.CRAG_SCORE_LABELS, ("unjudged", "not decided"))  # the runner's count of turns not decided


def _print_scores(path: Path, records: Sequence[CragRecord], scored: TurnScores) -> None:
    sessions = len({r.session_id for r in records})
    table = Table(title=f"CRAG scores of {path} ({len(records)} turns, {sessions} conversations)")
    table.add_column("group", no_wrap=True)
    for _, label in _COLUMNS:
        table.add_column(label, justify="right")
    for group in ("all", "ego"):
        scores = scored.scores.get(group)
        cells = [_cell(scores.get(key) if scores else None) for key, _ in _COLUMNS]
        table.add_row(group, *cells)
    out.print(table)
    undecided = scored.undecided
    if not undecided:
        return
    out.print(
        f"{len(undecided)} turn(s) could not be decided without the semantic step (neither a miss nor an "
        "exact match): not measured, left out of the figures, never counted as incorrect.",
        highlight=False,
        markup=False,
    )
    status = scored.judge_status  # None: the judge ran, and each turn says why it gave no verdict
    for turn in undecided[:_SHOWN]:
        why = f": {turn.reason}" if status is None else ""
        out.print(printable(f"  {turn.record.label}{why}"), highlight=False, markup=False)
    if len(undecided) > _SHOWN:
        out.print(
            f"  and {len(undecided) - _SHOWN} more: --json lists them all", highlight=False, markup=False
        )
    if status is not None:
        out.print(printable(f"The semantic step did not run: {status.reason}"), highlight=False, markup=False)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
