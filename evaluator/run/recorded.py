"""A conversation that already happened, evaluated as the dialogue scenario it plays (DESIGN.md,
"Dialogues", Recorded dialogues; `evaluator validate --scenario FILE --session-id ID`, or `--trace FILE`
once per turn): one recorded trace per user turn, in order.

Each turn is evaluated as a run evaluates a dialogue's turn: its single-turn checks on its trace
(`evaluate` of the turn's scenario), its state read from the trace under the target's `state_keys`
names; then the dialogue, its figures and its pass rule come from the same code a run's dialogue does
(`run.dialogue.dialogue_finished`). A state the target gave only through `evaluator.Reply` is not in
the trace, so a recorded turn shows those keys as not measured. The LLM judges do not run on recorded
turns yet (a run judges its dialogues' turns), and the reply of a turn is its trace's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluator._time import utc_now
from evaluator.errors import ConfigError
from evaluator.metrics import MetricSet
from evaluator.results import JudgeStatus, ScenarioResult, evaluate
from evaluator.run.dialogue import (
    TURN_NOT_JUDGED,
    DialogueSettings,
    TurnRan,
    dialogue_finished,
    read_state,
    turn_scenario,
)
from evaluator.run.judging import NO_JUDGE
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Finished
from evaluator.trace import DetailSource, Trace

__all__ = ["RecordedTurn", "check_turn_count", "recorded_dialogue", "recorded_judge_status"]


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


def recorded_judge_status(*, no_judge: bool) -> JudgeStatus:
    """Why the judges skip the recorded turns: they do not judge recorded turns yet (with or without
    an endpoint: naming a missing endpoint would send the user to configure one for nothing)."""
    if no_judge:
        return NO_JUDGE
    return TURN_NOT_JUDGED


def _duration_ms(trace: Trace) -> float | None:
    seconds = trace.duration_seconds
    return None if seconds is None else round(max(0.0, seconds) * 1000, 1)


def recorded_dialogue(
    item: LoadedScenario,
    turns: Sequence[RecordedTurn],
    *,
    session: str,
    settings: DialogueSettings,
    metrics: MetricSet,
    judge_status: JudgeStatus,
) -> ScenarioResult:
    """The dialogue's result from its recorded turns (as many as it has user turns: `check_turn_count`
    first). A turn's latency is its trace's duration."""
    scenario = item.scenario
    ran: dict[int, TurnRan] = {}
    for index, (turn, recorded) in enumerate(zip(scenario.turns or (), turns, strict=True)):
        result = evaluate(
            turn_scenario(scenario, index, turn),
            recorded.trace,
            judge_status=judge_status,
            latency_ms=_duration_ms(recorded.trace),
            finished_at=utc_now(),
            metrics=metrics,
            detail=recorded.detail,
        )
        state = read_state(recorded.trace, None, settings.state_keys)
        ran[index] = TurnRan.of(Finished(result, ()), recorded.trace, state)
    return dialogue_finished(item, ran, session, settings, metrics).result
