"""Running a dialogue (DESIGN.md, "Dialogues"): the target called once per user turn, in order, each turn
a single-turn attempt of the pipeline with its own trace (root span `<scenario id>#<turn>`) in the
dialogue's Langfuse session (`<run id>:<scenario id>`); then the dialogue's result, scored by the
dialogue metrics (metrics.dialogue), goes to the record stage as one scenario's.

A turn's state after the turn is read from its trace (`Trace.reported`: the last observation by end
time whose metadata carries the key, under the target's `state_keys` names) and from an
`evaluator.Reply`'s `state`, which wins per key. Its CRAG verdict is its single-turn `correctness` (a
miss or an exact match decided by rule, with or without a judge; none when only a judge could decide),
which CRAG's two-errors rule and conversation score take. A turn that errors (raised, timed out) ends the
dialogue: the later turns are `not run` and the dialogue is `error`. At a timeout the watchdog's thread
delivers the failed turn, and the dialogue is recorded at once; the worker leaves it when the hung
target returns.

When the run has judges, each turn that came back is handed to the run's judge stage (`judge`) as a
single-turn result is, with the conversation before it: the quality judge on every turn (its own
`answer.criteria`, else `TURN_CRITERIA`, the seed's metric-11 rubric), the correctness judge on a turn
with a `ground_truth`. The next turn does not wait for the verdict (it needs only the reply); the
dialogue is recorded once it has ended and every verdict has come back, judged or, after Ctrl-C,
unjudged: the judge stage hands every turn it took back exactly once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, Literal

from evaluator._time import utc_now
from evaluator.judge import QUALITY_DIMENSIONS, TURN_CRITERIA, CorrectnessJudge, QualityJudge
from evaluator.metrics import (
    MetricSet,
    SessionContext,
    Verdict,
    answer_text,
    final_answer,
    number,
    session_id,
)
from evaluator.metrics import dialogue as dm
from evaluator.results import (
    DialogueOutcome,
    JudgeStatus,
    PromptUse,
    ScenarioResult,
    TurnOutcome,
    turn_status,
    with_dialogues,
)
from evaluator.run.selection import DialogueSettings
from evaluator.scenarios import AnswerSpec, DialogueTurn, LoadedScenario, Scenario, TurnExpected
from evaluator.storage import Finished, KeptTrace
from evaluator.trace import Trace

__all__ = [
    "STATE_KEYS",
    "JudgeTurn",
    "TurnCall",
    "TurnRan",
    "TurnToJudge",
    "dialogue_finished",
    "exchange",
    "judged_turn_scenario",
    "read_state",
    "run_dialogue",
    "turn_scenario",
]

STATE_KEYS = ("intent", "domain", "acts", "slots", "action")
_log = logging.getLogger(__name__)
Deliver = Callable[[Finished, Trace | None, Mapping[str, Any] | None], None]
History = tuple[Mapping[str, str], ...]


@dataclass(frozen=True, kw_only=True)
class TurnToJudge:
    """A turn that came back, on its way to the judges: the scenario they judge it as
    (`judged_turn_scenario`), its recorded form and trace, the conversation before it, and where its
    result goes once judged (or settled unjudged)."""

    scenario: LoadedScenario
    done: Finished
    trace: Trace
    history: History
    verdict: Callable[[Finished], None]


JudgeTurn = Callable[[TurnToJudge], None]
"""The run's judge stage for dialogue turns: it calls the turn's `verdict` exactly once."""


@dataclass(frozen=True, kw_only=True)
class TurnCall:
    """What the pipeline adds to a dialogue turn's target call, and where the turn's result goes."""

    scenario_id: str  # the dialogue's
    index: int
    history: tuple[Mapping[str, str], ...]
    session_id: str
    deliver: Deliver


def turn_scenario(scenario: Scenario, index: int, turn: DialogueTurn) -> Scenario:
    """The single-turn scenario of one turn: its message and its single-turn expectations."""
    return scenario.model_copy(
        update={
            "id": f"{scenario.id}#{index}",
            "input": turn.user,
            "expected": turn.expected.single_turn(),
            "turns": None,
            "policy": None,
            "goal": None,
        }
    )


def judged_turn_scenario(scenario: Scenario) -> Scenario:
    """A turn's single-turn scenario as the judges see it: with `TURN_CRITERIA` as its answer criteria
    when it gives none, so that the quality judge scores every turn (seed metric 11)."""
    answer = scenario.expected.answer
    if answer is not None and answer.criteria:
        return scenario
    criteria = (answer or AnswerSpec()).model_copy(update={"criteria": TURN_CRITERIA})
    return scenario.model_copy(update={"expected": scenario.expected.model_copy(update={"answer": criteria})})


def read_state(
    trace: Trace | None, reply_state: Mapping[str, Any] | None, names: Mapping[str, str]
) -> dict[str, Any]:
    """The turn's reported state by canonical key: from the trace under the target's names, each key
    an `evaluator.Reply` gave replaced by its value. A key reported nowhere is absent."""
    state: dict[str, Any] = {}
    if trace is not None:
        for key in STATE_KEYS:
            name = names.get(key, key)
            if name in trace.reported:
                state[key] = trace.reported[name]
    state.update({key: value for key, value in (reply_state or {}).items() if key in STATE_KEYS})
    return state


def _labels(value: Any) -> str | list[str] | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple | set | frozenset) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _slots(value: Any) -> dict[str, dict[str, object]] | None:
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return {str(domain): {str(k): v for k, v in slots.items()} for domain, slots in value.items()}
    return None


def predicted_state(state: Mapping[str, Any]) -> tuple[dm.DialogueState, list[str]]:
    """The reported state as the metrics read it, and a warning per key of a shape they cannot read
    (that key is then not measured)."""
    parsed = {
        "intent": _labels(state.get("intent")),
        "domain": state.get("domain") if isinstance(state.get("domain"), str) else None,
        "acts": _labels(state.get("acts")),
        "slots": _slots(state.get("slots")),
        "action": state.get("action") if isinstance(state.get("action"), str) else None,
    }
    warnings = [
        f"the reported {key} {state[key]!r} is not of a shape the dialogue metrics read "
        f"({_SHAPES[key]}); it is not measured"
        for key in STATE_KEYS
        if key in state and state[key] is not None and parsed[key] is None
    ]
    return (
        dm.DialogueState.of(
            intent=parsed["intent"],
            domain=parsed["domain"],  # type: ignore[arg-type]
            acts=parsed["acts"],
            slots=parsed["slots"],  # type: ignore[arg-type]
            action=parsed["action"],  # type: ignore[arg-type]
        ),
        warnings,
    )


_SHAPES = {
    "intent": "a string or a list of strings",
    "domain": "a string",
    "acts": "a list of strings",
    "slots": "an object of domain -> {slot: value}",
    "action": "a string",
}


def expected_state(expected: TurnExpected) -> dm.DialogueState:
    return dm.DialogueState.of(
        intent=expected.intent,
        domain=expected.domain,
        acts=expected.acts,
        slots=expected.slots,
        action=expected.action,
    )


def _said(value: Any) -> str:
    """What a tool output says, for finding names in it: its strings one a line, however nested (as
    JSON, an escaped newline would join the next line's first word to an `n`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(_said(v) for v in value.values())
    if isinstance(value, list | tuple):
        return "\n".join(_said(v) for v in value)
    return "" if value is None else str(value)


@dataclass(kw_only=True)
class TurnRan:
    """A turn that came back: its recorded form, what it reported, its reply as text (the final answer
    in what the target returned, as the answer checks read it: of a LangGraph state, the last message
    an agent wrote, not the whole checkpointed conversation) and what its tools returned, as text
    (None: it ran no tool, or has no trace). `of` takes them from its trace, so that the trace (all its
    observations) is let go of once the turn is evaluated, not kept until the dialogue ends."""

    done: Finished
    state: dict[str, Any]
    reply: str = ""
    tool_outputs: tuple[str, ...] | None = None

    @classmethod
    def of(cls, done: Finished, trace: Trace | None, state: dict[str, Any]) -> TurnRan:
        tools = trace.tools if trace is not None else ()
        said = tuple(_said(tool.output) for tool in tools) if tools else None
        agents = trace.agent_names if trace is not None else ()
        reply = answer_text(final_answer(done.result.output, agents))
        return cls(done=done, state=state, reply=reply, tool_outputs=said)


def exchange(turn: DialogueTurn, got: TurnRan) -> History:
    """A turn as the conversation before the next turn holds it (what the judges are shown): the
    user's message, then the turn's reply."""
    return ({"role": "user", "content": turn.user}, {"role": "assistant", "content": got.reply})


class _Dialogue:
    """The turns of one dialogue as they come back, and its result, recorded once."""

    def __init__(
        self,
        item: LoadedScenario,
        *,
        run_id: str,
        record: Callable[[Finished], None],
        judge_status: JudgeStatus,
        metrics: MetricSet,
        settings: DialogueSettings,
        judge: JudgeTurn | None = None,
    ) -> None:
        self.item = item
        self.session = session_id(run_id, item.scenario.id)
        self._record = record
        self._judge_status = judge_status
        self._judge = judge  # None: the run has no judges (the turns say why in `judge_status`)
        self._metrics = metrics
        self._settings = settings
        self._lock = threading.Lock()
        self.ran: dict[int, TurnRan] = {}
        self.ended = False
        self._judging: set[int] = set()  # turns handed to the judges, their verdict not back yet
        self._unfinished: str | None = None
        self._recorded = False

    def deliver(
        self,
        index: int,
        history: History,
        done: Finished,
        trace: Trace | None,
        reply: Mapping[str, Any] | None,
        *,
        turn: Scenario,
    ) -> None:
        """A turn (`turn`: its single-turn scenario, as it ran) came back, in the worker or in the
        watchdog's thread at a timeout: on to the judges when the run has them; an error ends the
        dialogue at once."""
        state = read_state(trace, reply, self._settings.state_keys)
        judge = self._judge if trace is not None and done.result.status != "error" else None
        with self._lock:
            if self.ended:
                return
            self.ran[index] = TurnRan.of(done, trace, state)
            if judge is not None:
                self._judging.add(index)
        if judge is not None and trace is not None:
            judge(
                TurnToJudge(
                    scenario=LoadedScenario(scenario=judged_turn_scenario(turn), path=self.item.path),
                    done=done,
                    trace=trace,
                    history=history,
                    verdict=partial(self.judged, index),
                )
            )
        if done.result.status == "error":
            self.finish()

    def judged(self, index: int, done: Finished) -> None:
        """A turn's result back from the judges (judged, or unjudged after Ctrl-C), with its judges'
        traces to keep; the last one of an ended dialogue records it."""
        with self._lock:
            got = self.ran.get(index)
            if got is None or index not in self._judging:
                return
            self._judging.discard(index)
            got.done = got.done._replace(result=done.result, traces=done.traces)
            ready = self._ready()
        if ready:
            self._finished()

    def finish(self, unfinished: str | None = None) -> None:
        """No more turns: `unfinished` says why turns were left unrun. The dialogue's result is
        recorded (once) as soon as every verdict it waits for is back."""
        with self._lock:
            if self.ended:
                return
            self.ended = True
            self._unfinished = unfinished
            ready = self._ready()
        if ready:
            self._finished()

    def _ready(self) -> bool:
        """Under the lock: whether to record now (ended, no verdict awaited, not recorded yet)."""
        if not self.ended or self._judging or self._recorded:
            return False
        self._recorded = True
        return True

    def _finished(self) -> None:
        with self._lock:
            ran = dict(self.ran)
        self._record(
            dialogue_finished(
                self.item, ran, self.session, self._settings, self._metrics, unfinished=self._unfinished
            )
        )


def _policy(scenario: Scenario, settings: DialogueSettings) -> dict[str, tuple[str, ...]]:
    return dm.normalise_policy(scenario.policy if scenario.policy is not None else settings.policy)


def _turns_scored(
    scenario: Scenario, ran: Mapping[int, TurnRan]
) -> tuple[list[int], list[dm.Turn], list[str]]:
    """The turns that ran to the end (indexes), as the dialogue metrics take them, and warnings."""
    indexes, turns, warnings = [], [], []
    for index, turn in enumerate(scenario.turns or ()):
        got = ran.get(index)
        if got is None or got.done.result.status == "error":
            break
        predicted, found = predicted_state(got.state)
        warnings += [f"turn {index}: {warning}" for warning in found]
        indexes.append(index)
        turns.append(
            dm.Turn(
                expected=expected_state(turn.expected),
                predicted=predicted,
                reply=got.reply,
                tool_outputs=got.tool_outputs,
                correctness=_crag_turn(got.done.result),
                quality=_quality(got.done.result),
            )
        )
    return indexes, turns, warnings


def _crag_turn(result: ScenarioResult) -> dm.CragTurn | None:
    """The turn's CRAG verdict (its `correctness`: decided by rule in the metrics stage, or by a
    judge), as CRAG's multi-turn rules take it; None when the turn has none (no ground truth, or only
    a judge could decide and none did)."""
    verdict = result.judged.get(CorrectnessJudge.key)
    if verdict is None:
        return None
    document = verdict.to_json()
    label = _CRAG_LABELS.get(document.get("verdict"))
    return (
        None if label is None else dm.CragTurn(verdict=label, exact_match=document.get("exact_match") is True)
    )


_CRAG_LABELS: dict[object, dm.CragVerdict] = {
    "correct": "correct",
    "miss": "miss",
    "hallucination": "hallucination",
}


_QUALITY = dict(zip(dm.QUALITY_KEYS, QUALITY_DIMENSIONS, strict=True))
"""Each dialogue quality key -> the quality judge's dimension it is the mean of."""


def _quality(result: ScenarioResult) -> dict[str, float] | None:
    """The quality judge's scores of a turn by dialogue quality key; None: not judged, or unscored."""
    quality = result.judged.get(QualityJudge.key)
    scores = quality.to_json() if quality is not None else {}
    found = {
        key: value
        for key, dimension in _QUALITY.items()
        if (value := number(scores.get(dimension))) is not None
    }
    return found or None


def dialogue_finished(
    item: LoadedScenario,
    ran: Mapping[int, TurnRan],
    session: str,
    settings: DialogueSettings,
    metrics: MetricSet,
    *,
    unfinished: str | None = None,
) -> Finished:
    """The dialogue's result from the turns that came back, with their spans together. A dialogue
    left `unfinished` (the run stopped) whose turns did not fail is an `error` saying so."""
    scenario = item.scenario
    indexes, turns, warnings = _turns_scored(scenario, ran)
    goal = dm.Goal.of(book=scenario.goal.book, inform=scenario.goal.inform) if scenario.goal else None
    figures = (
        dm.score_dialogue(turns, policy=_policy(scenario, settings), goal=goal, entities=settings.entities)
        if turns
        else None
    )
    outcomes = _outcomes(scenario, ran, indexes, figures.turns if figures else (), turns)
    dialogue = DialogueOutcome(session_id=session, turns=tuple(outcomes), figures=figures)
    results = [got.done.result for got in ran.values()]
    error = next((r for r in results if r.status == "error"), None)
    message = None if error is None else f"turn {error.scenario_id.rsplit('#', 1)[-1]}: {error.error}"
    # a turn the evaluator failed ends the dialogue as the evaluator's error, scored against nobody
    failure = error.evaluator_error if error is not None else None
    completed = figures is None or figures.task_completion.value != 0.0
    status: Literal["passed", "failed", "error"] = (
        "error"
        if message is not None or unfinished is not None
        else "passed"
        if completed and all(o.status == "passed" for o in outcomes)
        else "failed"
    )
    never = tuple(key for key in STATE_KEYS if not any(key in got.state for got in ran.values()))
    prompts: dict[str, PromptUse] = {}
    for r in results:
        prompts.update(r.prompts)
    verdicts = _rolled_up(scenario, ran, metrics)
    if figures is not None:
        verdicts["dialogue"] = dm.DialogueVerdict(
            figures=figures, unreported=never, passed_all=status == "passed", error=message or unfinished
        )
    result = ScenarioResult(
        scenario_id=scenario.id,
        trace_id=results[0].trace_id if results else "",
        status=status,
        verdicts=verdicts,
        judge_status=_judge_status(ran),
        output=results[-1].output if results else None,
        latency_ms=round(sum(r.latency_ms or 0.0 for r in results), 1),
        error=message or unfinished,
        prompts=prompts,
        finished_at=utc_now(),
        observation_count=sum(r.observation_count for r in results),
        handoffs=_handoffs(ran),
        warnings=tuple(dict.fromkeys([w for r in results for w in r.warnings] + warnings)),
        metrics=_with_dialogues(metrics),
        dialogue=dialogue,
        evaluator_error=failure,
    )
    return _with_spans(result, [got.done for got in ran.values()], session)


@lru_cache(maxsize=4)
def _with_dialogues(metrics: MetricSet) -> MetricSet:
    """The run's metrics with the dialogue metric (`with_dialogues`), one set for all its dialogues
    (a set of its own for each cost 36 µs, and some 50 objects the collector walks until the run ends)."""
    return with_dialogues(metrics)


def _handoffs(ran: Mapping[int, TurnRan]) -> tuple[Mapping[str, Any], ...]:
    """The dialogue's hand-offs: each turn's, in turn order, with its `turn` (a turn's own are in its
    entry of `turns`)."""
    return tuple({**h, "turn": i} for i in sorted(ran) for h in ran[i].done.result.handoffs)


def _judge_status(ran: Mapping[int, TurnRan]) -> JudgeStatus:
    """The dialogue's judge status: `unscored` naming each turn a judge could not score, else `scored`
    when a judge scored a turn, else the first turn's (why the judges skipped it)."""
    statuses = [(index, ran[index].done.result.judge_status) for index in sorted(ran)]
    if not statuses:
        return JudgeStatus(status="skipped", reason="no turn ran")
    unscored = [f"turn {index}: {status.reason}" for index, status in statuses if status.status == "unscored"]
    if unscored:
        return JudgeStatus(status="unscored", reason="; ".join(unscored))
    if any(status.status == "scored" for _, status in statuses):
        return JudgeStatus(status="scored", reason="")
    return statuses[0][1]


def _rolled_up(scenario: Scenario, ran: Mapping[int, TurnRan], metrics: MetricSet) -> dict[str, Verdict]:
    """The trace metrics' roll-ups over the turns that came back, in turn order (the per-agent
    analysis per session: DESIGN.md, Per-agent analysis); a turn that errored has no verdicts."""
    turns = []
    for index in range(len(scenario.turns or ())):
        got = ran.get(index)
        if got is None:
            break
        turns.append(got.done.result.verdicts)
    return metrics.roll_up(SessionContext(scenario=scenario, traces=tuple(turns))) if turns else {}


def _outcomes(
    scenario: Scenario,
    ran: Mapping[int, TurnRan],
    indexes: Sequence[int],
    figures: Sequence[Any],
    turns: Sequence[dm.Turn],
) -> list[TurnOutcome]:
    scored = dict(zip(indexes, zip(figures, turns, strict=True), strict=True))
    outcomes = []
    for index, turn in enumerate(scenario.turns or ()):
        expected = turn.expected.model_dump(mode="json", exclude_defaults=True)
        got = ran.get(index)
        if got is None:
            outcomes.append(TurnOutcome(turn=index, input=turn.user, expected=expected, status="not run"))
            continue
        figure, evaluated = scored.get(index, (None, None))
        matched = None
        if (
            evaluated is not None
            and evaluated.expected.action is not None
            and evaluated.predicted.action is not None
        ):
            matched = evaluated.expected.action == evaluated.predicted.action
        status = "error" if figure is None else turn_status(got.done.result, figure, action_matched=matched)
        outcomes.append(
            TurnOutcome(
                turn=index,
                input=turn.user,
                expected=expected,
                status=status,
                result=got.done.result,
                state=got.state if figure is not None else None,
                figures=figure,
            )
        )
    return outcomes


def _with_spans(result: ScenarioResult, turns: Sequence[Finished], session: str) -> Finished:
    """The dialogue as recorded: each turn's kept spans apart, as the trace they are (in Langfuse on its
    own, the exporter counting its spans), in the dialogue's session; then its judges' traces."""
    kept = tuple(
        KeptTrace(
            trace_id=done.result.trace_id,
            spans=done.spans,
            span_count=done.span_count,
            late_spans=done.late_spans,
            session_id=session,
        )
        for done in turns
        if done.spans
    )
    judges = tuple(trace for done in turns for trace in done.traces)
    return Finished(result, (), traces=kept + judges)


def run_dialogue(
    item: LoadedScenario,
    *,
    run_id: str,
    attempt_turn: Callable[[LoadedScenario, TurnCall], None],
    record: Callable[[Finished], None],
    stopping: threading.Event,
    judge_status: JudgeStatus,
    metrics: MetricSet,
    settings: DialogueSettings | None = None,
    judge: JudgeTurn | None = None,
) -> None:
    """Run the dialogue's turns in order (`attempt_turn` runs one as the pipeline runs a scenario, and
    delivers its result to the `TurnCall`), each handed to `judge` when the run has judges, then
    `record` its result (once its verdicts are back). Stops early on a failed turn, or when the run is
    stopping (the turns that ran are kept, the rest `not run`)."""
    scenario = item.scenario
    dialogue = _Dialogue(
        item,
        run_id=run_id,
        record=record,
        judge_status=judge_status,
        metrics=metrics,
        settings=settings or DialogueSettings(),
        judge=judge,
    )
    history: list[Mapping[str, str]] = []
    unfinished = None
    for index, turn in enumerate(scenario.turns or ()):
        if stopping.is_set():
            unfinished = f"the run stopped before turn {index}: the dialogue is unfinished"
            break
        if dialogue.ended:
            break
        before = tuple(history)
        single = turn_scenario(scenario, index, turn)
        call = TurnCall(
            scenario_id=scenario.id,
            index=index,
            history=before,
            session_id=dialogue.session,
            deliver=partial(dialogue.deliver, index, before, turn=single),  # the judges' scenario too
        )
        attempt_turn(LoadedScenario(scenario=single, path=item.path), call)
        got = dialogue.ran.get(index)
        if got is None and not dialogue.ended:
            unfinished = f"turn {index} gave no result"
        if got is None or got.done.result.status == "error":
            break
        history += exchange(turn, got)
    dialogue.finish(unfinished)
