"""A conversation that already happened, evaluated as the dialogue scenario it plays (DESIGN.md,
"Dialogues", Recorded dialogues; `evaluator validate --scenario FILE --session-id ID`, or `--trace FILE`
once per turn): one recorded trace per user turn, in order.

Each turn is evaluated as a run evaluates a dialogue's turn: its single-turn checks on its trace
(`evaluate` of the turn's scenario), its state read from the trace under the target's `state_keys`
names, and its judges as a run's judge stage asks them (`judged_turn_scenario`: the quality judge on
every turn with the conversation before it, the correctness judge on a turn with a `ground_truth`);
then the dialogue, its figures and its pass rule come from the same code a run's dialogue does
(`run.dialogue.dialogue_finished`). A state the target gave only through `evaluator.Reply` is not in
the trace, so a recorded turn shows those keys as not measured; the reply of a turn is its trace's
output. The turns are judged one after another (`validate` has no judge stage of its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluator._time import utc_now
from evaluator.config import Config
from evaluator.errors import ConfigError
from evaluator.judge import Judges
from evaluator.langfuse import LangfuseConnection
from evaluator.metrics import MetricSet
from evaluator.results import JudgeStatus, ScenarioResult, evaluate
from evaluator.run.dialogue import (
    TurnRan,
    dialogue_finished,
    exchange,
    judged_turn_scenario,
    read_state,
    turn_scenario,
)
from evaluator.run.judging import NOT_FINISHED, Notice, judged_result, judges_outside_a_run, validate_run_id
from evaluator.run.selection import DialogueSettings
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Finished
from evaluator.trace import DetailSource, Trace

__all__ = ["RecordedTurn", "check_turn_count", "judged_recorded_dialogue", "recorded_dialogue"]


@dataclass(frozen=True, kw_only=True)
class RecordedTurn:
    """One turn's recorded trace, with its observations on demand (None: not at hand)."""

    trace: Trace
    detail: DetailSource | None = None


def check_turn_count(item: LoadedScenario, count: int, *, recorded: str, fix: str) -> None:
    """ConfigError unless `count` recorded traces (`recorded` says where they come from) match the
    dialogue's user turns one to one; `fix` says what to do."""
    expected = len(item.scenario.turns or ())
    if count == expected:
        return
    raise ConfigError(
        f"{recorded}: {count} trace{'s' if count != 1 else ''} for the {expected} user "
        f"turn{'s' if expected != 1 else ''} of dialogue {item.scenario.id} ({item.path}); each turn is "
        f"evaluated against one trace, in time order. Fix: {fix}"
    )


def _duration_ms(trace: Trace) -> float | None:
    seconds = trace.duration_seconds
    return None if seconds is None else round(max(0.0, seconds) * 1000, 1)


def judged_recorded_dialogue(
    config: Config,
    item: LoadedScenario,
    turns: Sequence[RecordedTurn],
    *,
    session: str,
    settings: DialogueSettings,
    metrics: MetricSet,
    connection: LangfuseConnection | None,
    no_judge: bool,
    no_cache: bool,
    notice: Notice,
) -> ScenarioResult:
    """`recorded_dialogue` with the judges `evaluator validate` sets up (`judges_outside_a_run`: the
    verdict cache unless `no_cache`, judge prompts and traces in the connected project); without them
    (`no_judge`, no endpoint) every turn says why in its `judge_status`."""
    with judges_outside_a_run(
        config,
        [item.scenario],
        metrics=metrics,
        connection=connection,
        no_judge=no_judge,
        no_cache=no_cache,
        model=None,
        notice=notice,
    ) as (judges, unjudged):
        return recorded_dialogue(
            item,
            turns,
            session=session,
            settings=settings,
            metrics=metrics,
            judge_status=unjudged or NOT_FINISHED,
            judges=judges,
            run_id=validate_run_id(),
        )


def recorded_dialogue(
    item: LoadedScenario,
    turns: Sequence[RecordedTurn],
    *,
    session: str,
    settings: DialogueSettings,
    metrics: MetricSet,
    judge_status: JudgeStatus,
    judges: Judges | None = None,
    run_id: str = "",
) -> ScenarioResult:
    """The dialogue's result from its recorded turns (as many as it has user turns: `check_turn_count`
    first), each judged by `judges` (None: not judged, `judge_status` says why). A turn's latency is
    its trace's duration."""
    scenario = item.scenario
    ran: dict[int, TurnRan] = {}
    history: list[Mapping[str, str]] = []
    for index, (turn, recorded) in enumerate(zip(scenario.turns or (), turns, strict=True)):
        single = turn_scenario(scenario, index, turn)
        result = evaluate(
            single,
            recorded.trace,
            judge_status=judge_status,
            latency_ms=_duration_ms(recorded.trace),
            finished_at=utc_now(),
            metrics=metrics,
            detail=recorded.detail,
        )
        if judges is not None and result.status != "error":
            result = _judged(judges, single, result, recorded.trace, run_id=run_id, history=history)
        state = read_state(recorded.trace, None, settings.state_keys)
        ran[index] = TurnRan.of(Finished(result, ()), recorded.trace, state)
        history += exchange(turn, ran[index])
    return dialogue_finished(item, ran, session, settings, metrics).result


def _judged(
    judges: Judges,
    single: Scenario,
    result: ScenarioResult,
    trace: Trace,
    *,
    run_id: str,
    history: Sequence[Mapping[str, str]],
) -> ScenarioResult:
    """One turn judged as a run's judge stage judges it: as `judged_turn_scenario`, with the
    conversation before it."""
    scenario = judged_turn_scenario(single)
    return judged_result(judges, scenario, result, trace, run_id=run_id, history=tuple(history))
