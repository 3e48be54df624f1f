"""The staged pipeline: target -> trace and metrics -> judges -> record -> deliver, one scenario at a
time through each stage, many scenarios at once.

- **Targets**: `concurrency` long-lived workers. A worker calls a sync target itself (no thread per
  call) and hands an async one to the shared event loop (`_async`). At the timeout the scenario is
  reported as an `error` at once; an async target's task is cancelled, and a sync one, which Python
  cannot stop, keeps its worker until it really returns: a hung target holds its slot (backpressure,
  never more than `concurrency` target calls at once). Should every slot be held by a hung target, the
  scenarios not started yet are cut off after one more timeout, and the run says so.
- **Trace and metrics**: right after a target returns, its worker takes the captured spans, builds the
  trace and runs the metrics (pure and fast: handing them to a thread of their own cost more than the
  work, since under load every wake-up of a thread waits its turn for the interpreter lock).
- **Judges** (when configured, for scenarios with answer criteria or a ground truth): tasks on the run's
  event loop, at most `judge_concurrency` at once, apart from the targets' slots (I/O bound: model calls
  through one shared client). A model that can be awaited is asked on the loop itself (no thread per
  judgement); any other in a pool of `judge_concurrency` threads. A judge never fails a result: what it
  cannot score it says in `judge_status`. After Ctrl-C, results not judged yet are recorded unjudged at
  once, and the judgements under way are cancelled. A dialogue's turns go through the same stage, under
  the same bound, each with the conversation before it; their verdicts go back to the dialogue (which
  records itself once they are all back), not to the record stage; after Ctrl-C, unjudged as well.
- **Record**: one thread commits finished results with their scores and (connected) captured spans to
  the store, many per transaction (what arrived within a short window), and only then reports each as
  finished (`on_result`); delivery reads them from the store while the run goes on (storage.LiveDelivery).
  Should the store fail (a StoreError: disk full, locked past its busy timeout, read-only...), no
  scenario starts after it, nothing more is written to it, and those started finish as they would have
  (their timeouts, their judges): `run` raises `NotRecordedError` with every result, saying which ones
  the store did not take.

An exception inside the evaluator (not the target) is an *evaluator error*: kept with its traceback
in that scenario's result, scored against nobody; the other scenarios go on.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import queue
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Never, Protocol, cast

from evaluator._secrets import failure_text
from evaluator._time import utc_now
from evaluator.config import LLMEndpoint
from evaluator.errors import StoreError, StoreMovedError, TargetTimeoutError, TraceError
from evaluator.judge import Decided, Judges
from evaluator.langfuse import ExperimentLink
from evaluator.metrics import MetricSet
from evaluator.prompts import PromptSource
from evaluator.results import (
    JUDGES_CUT_OFF,
    JUDGES_INTERRUPTED,
    JudgeStatus,
    PromptUse,
    RunInfo,
    ScenarioResult,
    as_evaluator_error,
    default_metrics,
    error_result,
    evaluate,
    evaluator_error_result,
    scores_for,
)
from evaluator.run._async import EventLoopThread
from evaluator.run._gc import collector_tuned_for_run
from evaluator.run._watchdog import Watchdog
from evaluator.run.judging import ajudged_result, judged_result, partly_judged_result
from evaluator.run.target import PromptResolver, Reply, Target, TargetRequest
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Finished, KeptTrace
from evaluator.trace import DEFAULT_RULES, Trace, TraceDetail, TraceRules

if TYPE_CHECKING:  # run.dialogue is imported by `_dialogue`: a run without dialogues does not load it
    from evaluator.run.dialogue import TurnCall, TurnToJudge
    from evaluator.run.selection import DialogueSettings

__all__ = [
    "JUDGE_NOT_AVAILABLE",
    "CapturedTrace",
    "NotRecordedError",
    "Pipeline",
    "Recorder",
    "RootSpan",
    "RunOptions",
    "ScenarioTracer",
    "new_run_id",
]

JUDGE_NOT_AVAILABLE = JudgeStatus(status="skipped", reason="the LLM judges were not configured for this run")
# ... and of a judge that had not ended then, when another judge of the same answer had (its verdict kept)
_JUDGE_UNFINISHED = {
    JUDGES_INTERRUPTED: "the run was interrupted before this judge ended",
    JUDGES_CUT_OFF: "the run stopped early, before this judge ended",
}
_log = logging.getLogger(__name__)
_RECORD_BATCH = 16  # results committed per transaction, at most (each waits in memory until then)
_RECORD_WINDOW = 0.2  # seconds a transaction waits for more results when it has less than a batch
_POLL_SECONDS = 0.2  # how often the waiting thread looks up (keeps Ctrl-C responsive)
_DRAIN_SECONDS = 5.0  # after Ctrl-C, how long finished work may take to reach the store
_CLOSE_SECONDS = 1.0  # for the judge model's client to close at the end of the run
_JUDGES, _TARGETS = "judges", "targets"  # the run's task groups on its event loop


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


class RootSpan(Protocol):
    """The evaluator's root observation of one scenario run (tracing.ScenarioSpan)."""

    def set_output(self, output: object) -> None: ...
    def set_metadata(self, metadata: Mapping[str, object]) -> None: ...
    def set_error(self, message: str) -> None: ...
    def end(self) -> bool: ...


class ScenarioTracer(Protocol):
    """What the pipeline needs from tracing (langfuse.Tracing)."""

    @property
    def client(self) -> Any: ...
    def trace_id_for(self, run_id: str, scenario_id: str) -> str: ...
    def callbacks(self) -> list[Any]: ...
    def scenario_run(
        self,
        *,
        trace_id: str,
        scenario_id: str,
        run_id: str,
        tags: Sequence[str],
        input: object,
        experiment: ExperimentLink | None = None,
        session_id: str | None = None,
    ) -> AbstractContextManager[RootSpan]: ...
    def take(self, trace_id: str, rules: TraceRules = ...) -> CapturedTrace: ...


class CapturedTrace(Protocol):
    """What was captured of one scenario run (tracing.Captured)."""

    @property
    def trace(self) -> Trace: ...
    @property
    def span_count(self) -> int: ...
    def payload(self) -> bytes: ...
    def detail(self) -> TraceDetail: ...


class JudgeTraces(Protocol):
    """Where the judges' exported traces wait for their scenario's result (langfuse.JudgeTracing): those
    of its judgements since last asked, as the store keeps them."""

    def take_kept(self, scenario_id: str) -> Sequence[KeptTrace]: ...


class Recorder(Protocol):
    """Where finished scenarios go before they count as finished (storage.Store)."""

    def record_many(self, run_id: str, finished: Sequence[Finished], *, destination: str | None) -> None: ...


class NotRecordedError(StoreError):
    """The recorder failed during the run (`cause`, its StoreError): no scenario started after it and
    those started finished as they would have. `run` and `results` (in the scenarios' order) are every
    result the run has; `not_recorded` the ids of those the recorder did not take, in the same order."""

    def __init__(
        self, cause: StoreError, run: RunInfo, results: Sequence[ScenarioResult], not_recorded: Sequence[str]
    ) -> None:
        super().__init__(str(cause))
        self.cause, self.run, self.results, self.not_recorded = cause, run, list(results), list(not_recorded)


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    concurrency: int = 4
    timeout_seconds: float = 120.0
    prompt_pins: Mapping[str, int] = field(default_factory=dict)
    run_id: str = ""
    run_name: str = ""
    judge_status: JudgeStatus = JUDGE_NOT_AVAILABLE  # for results the judges do not see
    judge_concurrency: int = 8
    experiment_links: Mapping[str, ExperimentLink] = field(default_factory=dict)  # by scenario id


@dataclass(kw_only=True)
class _Attempt:
    """One scenario's run. Its target call is `running` until it either `returned` or `timed_out`
    (whichever comes first); the result is reported once, by whoever `report()`s first."""

    item: LoadedScenario
    trace_id: str
    resolver: PromptResolver
    started: float = field(default_factory=time.perf_counter)
    root: RootSpan | None = None
    turn: TurnCall | None = None  # a dialogue's turn: its request's extras, and where its result goes
    reply_state: Mapping[str, Any] | None = None  # the state an `evaluator.Reply` gave
    _state: str = "running"
    _reported: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def time_out(self) -> bool:
        """At the deadline: True when the call was still running (it is now timed out)."""
        with self._lock:
            if self._state != "running":
                return False
            self._state = "timed_out"
            return True

    def returned(self) -> bool:
        """The call ended: True when it had not timed out before."""
        with self._lock:
            if self._state == "timed_out":
                return False
            self._state = "returned"
            return True

    @property
    def timed_out(self) -> bool:
        return self._state == "timed_out"

    def report(self) -> bool:
        """True for the first caller only: that one reports the result."""
        with self._lock:
            first, self._reported = not self._reported, True
            return first

    def latency_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    def prompts_used(self) -> dict[str, PromptUse]:
        return {name: PromptUse(version=p.version, source=p.source) for name, p in self.resolver.used.items()}


@dataclass(frozen=True, kw_only=True)
class _ToJudge:
    """A result with verdicts (and its kept spans), on its way to the judges; a dialogue's turn has the
    conversation before it (`history`), and its result goes back to the dialogue (`verdict`)."""

    done: Finished
    scenario: LoadedScenario
    trace: Trace
    history: tuple[Mapping[str, str], ...] | None = None
    verdict: Callable[[Finished], None] | None = None  # None: to the record stage
    decided: Decided = field(default_factory=Decided)  # its judgements (and answers) as they end


class Pipeline:
    """Runs loaded scenarios through the stages; everything it needs is injected."""

    def __init__(
        self,
        *,
        tracer: ScenarioTracer,
        targets: Mapping[str, Target],
        prompts: PromptSource,
        recorder: Recorder,
        destination: str | None = None,
        llm: LLMEndpoint | None = None,
        trace_rules: Mapping[str, TraceRules] | None = None,  # by target name
        judges: Judges | None = None,
        metrics: MetricSet | None = None,
        dialogue_settings: Mapping[str, DialogueSettings] | None = None,  # by target name
        judge_traces: JudgeTraces | None = None,
    ) -> None:
        """`destination`: the Langfuse the run's scores and spans are bound for (None: embedded, so
        its spans are not kept). `judge_traces`: the judges' traces, kept with the results they judged
        (the judges' tracer, when it keeps them)."""
        self._tracer = tracer
        self._trace_rules = dict(trace_rules or {})
        self._targets = targets
        self._prompts = prompts
        self._recorder = recorder
        self._destination = destination
        self._llm = llm
        self._judges = judges
        self._metrics = metrics or default_metrics()  # the run's metrics: results carry them
        self._dialogue_settings = dict(dialogue_settings or {})
        self._judge_traces = judge_traces

    def run(
        self,
        scenarios: Sequence[LoadedScenario],
        options: RunOptions,
        on_result: Callable[[ScenarioResult], None] = lambda _: None,
        on_start: Callable[[RunInfo], None] = lambda _: None,
        stop: threading.Event | None = None,
        *,
        all_stored: threading.Event | None = None,
        on_unrecorded: Callable[[StoreError, int], None] = lambda _, __: None,
    ) -> tuple[RunInfo, list[ScenarioResult]]:
        """Run every scenario; results in the scenarios' order. Ctrl-C (or `stop` being set, e.g. by
        a signal) stops starting scenarios, lets what finished reach the store, and returns it with
        `interrupted=True`. `all_stored` is set once every scenario's result is stored. Should the
        recorder fail, the scenarios started finish, and `NotRecordedError` carries every result;
        `on_unrecorded` hears of the failure at once, with how many started scenarios are not stored."""
        if not options.run_id:
            options = replace(options, run_id=new_run_id())
        run = RunInfo(
            id=options.run_id,
            name=options.run_name or options.run_id,
            started_at=utc_now(),
            prompt_pins=dict(options.prompt_pins),
            selected=len(scenarios),
        )
        on_start(run)
        with (
            collector_tuned_for_run(),
            _Run(
                self,
                scenarios,
                options,
                on_result,
                all_stored or threading.Event(),
                on_unrecorded=on_unrecorded,
            ) as active,
        ):
            stopped = active.wait(stop or threading.Event())
        finished = active.stored()  # after the stages ended: what they stored meanwhile counts too
        ordered = [finished[s.scenario.id] for s in scenarios if s.scenario.id in finished]
        unrecorded, not_recorded = active.not_recorded
        done = RunInfo(
            id=run.id,
            name=run.name,
            started_at=run.started_at,
            finished_at=utc_now(),
            prompt_pins=run.prompt_pins,
            interrupted=stopped == "interrupted",
            signal="SIGINT" if stopped == "interrupted" else None,
            selected=run.selected,
            started=active.started,
            cut_off=stopped if stopped not in (None, "interrupted") else None,
        )
        if unrecorded is not None:
            missing = set(not_recorded)
            raise NotRecordedError(
                unrecorded, done, ordered, [r.scenario_id for r in ordered if r.scenario_id in missing]
            )
        return done, ordered


class _Run:
    """The threads and queues of one run."""

    def __init__(
        self,
        pipeline: Pipeline,
        scenarios: Sequence[LoadedScenario],
        options: RunOptions,
        on_result: Callable[[ScenarioResult], None],
        all_stored: threading.Event,
        *,
        on_unrecorded: Callable[[StoreError, int], None],
    ) -> None:
        self._p = pipeline
        self._on_unrecorded = on_unrecorded
        self._options = options
        self._on_result = on_result
        self._total = len(scenarios)
        self._todo: queue.SimpleQueue[LoadedScenario] = queue.SimpleQueue()
        for item in scenarios:
            self._todo.put(item)
        self._to_record: queue.SimpleQueue[Finished | None] = queue.SimpleQueue()
        self._finished: dict[str, ScenarioResult] = {}  # stored results, by scenario id
        self._finished_lock = threading.Lock()
        self._closed = False  # the run has returned its results: record nothing more
        self._all_stored = all_stored
        if not scenarios:
            self._all_stored.set()
        self._stopping = threading.Event()
        self._starting = True  # scenarios may start (under `_lock`)
        self._interrupted = threading.Event()  # Ctrl-C: what is not judged yet is recorded unjudged
        self._lock = threading.Lock()
        self._judging: dict[str, _ToJudge] = {}  # what the judge stage holds, by scenario id
        self._hung = 0  # workers whose target timed out and has not returned yet
        self.started = 0  # scenarios whose target was called
        self._failure: BaseException | None = None  # the store could not record: the run cannot go on
        self._unrecorded: StoreError | None = None  # the store failed: results are kept here only
        self._not_recorded: list[str] = []  # the scenario ids of the results kept here only
        self._store_stop: str | None = None  # why scenarios were not started, once the store failed
        self._watchdog = Watchdog()
        self._loop: EventLoopThread | None = None
        self._slot_count = min(options.concurrency, len(scenarios))  # target calls at once, at most
        # Every scenario single-turn with an async target: the attempts are tasks on the run's loop
        # (no worker thread, no hop between threads per target call); else `concurrency` workers.
        self._on_loop = bool(scenarios) and all(
            item.scenario.turns is None and _awaitable(pipeline._targets.get(item.scenario.target))
            for item in scenarios
        )
        self._attempts: set[asyncio.Task[None]] = set()  # the loop's attempts not ended yet
        self._workers = [
            threading.Thread(target=self._work, daemon=True, name=f"evaluator-target-{index}")
            for index in range(0 if self._on_loop else self._slot_count)
        ]
        self._recorder = threading.Thread(target=self._record_stage, daemon=True, name="evaluator-record")
        judges = pipeline._judges if scenarios else None
        self._judges = judges
        judged = sum(len(s.scenario.turns) if s.scenario.turns is not None else 1 for s in scenarios)
        self._judge_slots = asyncio.Semaphore(max(1, min(options.judge_concurrency, judged)))
        self._judges_pending = 0  # results handed to the judge stage and not through it yet
        self._judges_idle = threading.Event()
        self._judges_idle.set()
        self._judge_pool: ThreadPoolExecutor | None = None  # for a model that cannot be awaited
        if judges is not None or self._on_loop:
            self._loop = EventLoopThread()
        if judges is not None and not judges.awaitable:
            self._judge_pool = ThreadPoolExecutor(
                max_workers=max(1, min(options.judge_concurrency, judged)),
                thread_name_prefix="evaluator-judge",
            )

    def __enter__(self) -> _Run:
        for thread in (self._recorder, *self._workers):
            thread.start()
        if self._on_loop and self._loop is not None:
            self._loop.spawn(self._dispatch(), _TARGETS)
        return self

    def __exit__(self, *exc_info: object) -> None:
        """The stages end once what reached them is stored (within the drain time after Ctrl-C): the
        judges first, then the record stage; only workers whose target hangs remain."""
        self._stopping.set()
        ends = time.monotonic() + _DRAIN_SECONDS

        def joined(thread: threading.Thread) -> None:
            thread.join(max(0.0, ends - time.monotonic()) if self._interrupted.is_set() else None)

        # The record stage ends after the last judged result. When the run stopped early (Ctrl-C, the
        # cut-off, a failure), the judges get the drain time, and what they still hold then is recorded
        # unjudged (a target blocking the loop would keep them from running at all).
        early = not self._all_stored.is_set()
        if not self._judges_idle.wait(max(0.0, ends - time.monotonic()) if early else None):
            self._settle_judges(JUDGES_CUT_OFF)
        self._to_record.put(None)
        joined(self._recorder)
        self._watchdog.close()
        if self._loop is not None:
            if self._judges is not None:
                try:
                    self._loop.run(self._judges.aclose(), timeout=_CLOSE_SECONDS)
                except Exception as exc:  # noqa: BLE001 - the results are stored; only a client is left open
                    _log.warning("could not close the judge model's client: %s", exc)
            self._loop.close()
        if self._judge_pool is not None:
            self._judge_pool.shutdown(wait=False, cancel_futures=True)

    # --- waiting for the run ---------------------------------------------------------------------

    def wait(self, stop: threading.Event) -> str | None:
        """Until every scenario is stored; why the run stopped early (None: it did not). Results live
        in a dict the record stage fills, so Ctrl-C at any moment loses none of them."""
        stopped: str | None = None
        all_hung_since: float | None = None
        try:
            while not self._all_stored.wait(_POLL_SECONDS):
                if stop.is_set():
                    raise KeyboardInterrupt  # handled as Ctrl-C is, right below
                if self._failure is not None:
                    raise self._failure
                if self._all_reported():  # the store failed, and what had started is over
                    return self._store_stop or None
                all_hung_since = self._all_hung_since(all_hung_since)
                if all_hung_since is not None and time.monotonic() - all_hung_since > self._grace:
                    stopped = self._cut_off()
                    break
        except KeyboardInterrupt:
            stopped = "interrupted"
            self._settle()
        return stopped

    def stored(self) -> dict[str, ScenarioResult]:
        """Every stored result, by scenario id (and, the store having failed, those kept here only:
        `not_recorded`); nothing is recorded after this (a result a judge still holds after Ctrl-C is
        cut off, never stored behind the run's back)."""
        with self._finished_lock:
            self._closed = True
            return dict(self._finished)

    @property
    def not_recorded(self) -> tuple[StoreError | None, list[str]]:
        """The store's failure (None: it took every result) and the ids of the results it did not take."""
        with self._finished_lock:
            return self._unrecorded, list(self._not_recorded)

    def _all_reported(self) -> bool:
        """The store failed, and every scenario started has its result (none starts after the failure)."""
        with self._lock:
            started = self.started if self._store_stop is not None else None
        with self._finished_lock:
            return started is not None and len(self._finished) >= started

    @property
    def _grace(self) -> float:
        return self._options.timeout_seconds

    def _all_hung_since(self, since: float | None) -> float | None:
        """When every target slot became held by a hung target with scenarios still waiting."""
        with self._lock:
            blocked = self._hung >= self._slot_count and not self._todo.empty()
        if not blocked:
            return None
        return since if since is not None else time.monotonic()

    def _cut_off(self) -> str:
        waiting = self._start_none()
        return (
            f"{waiting} scenarios were not started: all {self._slot_count} target slots are held by "
            f"targets that timed out and have not returned for {self._grace:g} s more (fix the hanging "
            "target, or raise --timeout)"
        )

    def _start_none(self, *, ending: bool = True) -> int:
        """No scenario starts from now on (`started` is final); how many were waiting. `ending`: a
        dialogue under way stops too, before its next turn (else it goes on to its end)."""
        with self._lock:
            self._starting = False
            if ending:
                self._stopping.set()
        waiting = 0
        while True:
            try:
                self._todo.get_nowait()
            except queue.Empty:
                break
            waiting += 1
        return waiting

    def _store_failed(self, exc: StoreError) -> None:
        """The store could not take results: no scenario starts, what is started finishes as it would
        have (a dialogue its every turn), its results kept in memory only; the run says why those
        waiting never started, and tells `on_unrecorded` at once how many started and are not stored
        (running, with the judges, or finished and waiting for the record stage)."""
        waiting = self._start_none(ending=False)
        stop = (
            f"{waiting} scenarios were not started: the local store failed during the run" if waiting else ""
        )
        with self._lock:
            self._store_stop = stop
            started = self.started
        with self._finished_lock:
            running = started - len(self._finished)
        try:
            self._on_unrecorded(exc, running)
        except Exception as failed:  # noqa: BLE001 - the caller's callback: the run goes on
            _log.warning("on_unrecorded failed", exc_info=failed)

    def _settle(self) -> None:
        """After Ctrl-C: no scenario starts, and what is already past its target (judges skipped) gets
        to the store within `_DRAIN_SECONDS`, all stages together. What the judges hold or have not
        taken yet goes to the store unjudged at once: a judge waiting on a slow endpoint must not keep
        a finished verdict from it."""
        self._stopping.set()
        with self._lock:
            self._interrupted.set()
        self._settle_judges(JUDGES_INTERRUPTED)

    def _settle_judges(self, status: JudgeStatus) -> None:
        """What the judge stage holds, to the store with the verdicts of the judgements that had ended
        (made and paid for), or unjudged when none had (`status` says why); the judgements under way are
        cancelled (one that ends meanwhile finds its result settled: see `_judge`)."""
        with self._lock:
            held = list(self._judging.values())
            self._judging.clear()
        if self._loop is not None and held:
            self._loop.cancel_spawned(_JUDGES)
        for item in held:
            self._judged_to(item, self._partly_judged(item, status))

    def _partly_judged(self, item: _ToJudge, status: JudgeStatus) -> ScenarioResult:
        result = item.done.result
        if self._judges is not None:
            reason = _JUDGE_UNFINISHED.get(status, status.reason)
            partly = partly_judged_result(self._judges, item.scenario.scenario, result, item.decided, reason)
            if partly is not None:
                return partly
        return _unjudged(item.done, status).result

    # --- stage 1: targets --------------------------------------------------------------------------

    def _next(self) -> LoadedScenario | None:
        """The next scenario to start, counted as started in the same step (so once the run stops
        starting scenarios, `started` is final); None when no more start."""
        with self._lock:
            if self._stopping.is_set() or not self._starting:
                return None
            try:
                item = self._todo.get_nowait()
            except queue.Empty:
                return None
            self.started += 1
            return item

    def _work(self) -> None:
        while (item := self._next()) is not None:
            if item.scenario.turns is not None:
                self._dialogue(item)
                continue
            try:
                attempt = self._new_attempt(item)
            except Exception as exc:  # noqa: BLE001 - the evaluator failed before calling the target
                self._unattempted(item, exc)
                continue
            self._attempt(attempt)

    def _new_attempt(self, item: LoadedScenario, turn: TurnCall | None = None) -> _Attempt:
        return _Attempt(
            item=item,
            trace_id=self._p._tracer.trace_id_for(self._options.run_id, item.scenario.id),
            resolver=PromptResolver(self._p._prompts, self._options.prompt_pins),
            turn=turn,
        )

    async def _dispatch(self) -> None:
        """The attempts of a run on the loop: each scenario's a task of its own, at most `_slot_count`
        at once; a target that timed out holds its slot until its task has really ended."""
        slots = asyncio.Semaphore(self._slot_count)
        while True:
            await slots.acquire()  # Ctrl-C may come while waiting for a slot: nothing starts after it
            item = self._next()
            if item is None:
                return
            task = asyncio.get_running_loop().create_task(self._attempt_on_loop(item, slots))
            self._attempts.add(task)
            task.add_done_callback(self._attempts.discard)

    async def _attempt_on_loop(self, item: LoadedScenario, slots: asyncio.Semaphore) -> None:
        """`_attempt`, as a task on the loop; never raises."""
        try:
            try:
                attempt = self._new_attempt(item)
            except Exception as exc:  # noqa: BLE001 - the evaluator failed before calling the target
                self._unattempted(item, exc)
                return
            try:
                target, request = self._target_request(attempt)
                with self._scenario_run(attempt) as root:
                    attempt.root = root
                    output, error = await self._acall(target, request, attempt)
                self._target_returned(attempt, root, output, error)
            except Exception as exc:  # noqa: BLE001 - the evaluator failed around this target call
                self._attempt_failed(attempt, exc)
        finally:
            slots.release()

    def _dialogue(self, item: LoadedScenario) -> None:
        """Run a dialogue's turns in this worker, one single-turn attempt each (run.dialogue); its
        result goes to the record stage as one scenario's. Never raises."""
        from evaluator.run.dialogue import run_dialogue  # here: a run without dialogues does not load it

        run_id = self._options.run_id

        def attempt_turn(turn_item: LoadedScenario, call: TurnCall) -> None:
            self._attempt(self._new_attempt(turn_item, call))

        def judge_turn(turn: TurnToJudge) -> None:
            item = _ToJudge(
                done=turn.done,
                scenario=turn.scenario,
                trace=turn.trace,
                history=turn.history,
                verdict=turn.verdict,
            )
            with self._lock:  # with Ctrl-C's settling, so nothing reaches the judges after it
                if not self._interrupted.is_set():
                    self._to_judges(item)
                    return
            turn.verdict(_unjudged(turn.done))

        try:
            run_dialogue(
                item,
                run_id=run_id,
                attempt_turn=attempt_turn,
                record=self._to_record.put,
                stopping=self._stopping,
                judge_status=self._options.judge_status,
                metrics=self._p._metrics,
                settings=self._p._dialogue_settings.get(item.scenario.target),
                judge=judge_turn if self._judges is not None else None,
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(exc)

    def _unattempted(self, item: LoadedScenario, exc: Exception) -> None:
        """An evaluator error from before the target call: nothing ran, nothing was traced."""
        _log.error("evaluator error before running scenario %s", item.scenario.id, exc_info=exc)
        try:
            result = evaluator_error_result(
                item.scenario,
                "",
                exc,
                judge_status=self._options.judge_status,
                finished_at=utc_now(),
                metrics=self._p._metrics,
            )
            self._to_record.put(Finished(result, ()))
        except BaseException as failure:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(failure)

    def _attempt(self, attempt: _Attempt) -> None:
        """Run one scenario's target; never raises."""
        try:
            self._call_target(attempt)
        except Exception as exc:  # noqa: BLE001 - the evaluator failed around this target call
            self._attempt_failed(attempt, exc)

    def _attempt_failed(self, attempt: _Attempt, exc: Exception) -> None:
        """The evaluator failed around a target call: an evaluator error, unless already reported."""
        if attempt.report():
            if attempt.root is not None:
                _close_root(attempt.root, output=None, error=None)
            self._report(attempt, partial(self._evaluator_error, attempt, exc))

    def _report(
        self, attempt: _Attempt, result: Callable[[], ScenarioResult], latency_ms: float | None = None
    ) -> None:
        """Hand the attempt's result to the record stage (only its one reporter calls this): `result()`,
        or an evaluator error when making it fails. The run waits for every started scenario, so
        should even that fail, the run stops with the failure instead of waiting for ever."""
        try:
            try:
                made = result()
            except Exception as exc:  # noqa: BLE001 - the evaluator failed making this result
                made = self._evaluator_error(attempt, exc, latency_ms)
            if attempt.turn is not None:  # a dialogue's turn: the dialogue takes it
                attempt.turn.deliver(self._done(made, attempt), None, None)
            else:
                self._to_record.put(self._done(made, attempt))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        """The run cannot go on (a result it cannot make or store): the waiting thread raises `exc`."""
        with self._lock:
            if self._failure is None:
                self._failure = exc

    def _call_target(self, attempt: _Attempt) -> None:
        target, request = self._target_request(attempt)
        with self._scenario_run(attempt) as root:
            attempt.root = root
            output, error = self._call(target, request, attempt)
        self._target_returned(attempt, root, output, error)

    def _target_request(self, attempt: _Attempt) -> tuple[Target, TargetRequest]:
        scenario = attempt.item.scenario
        tracer = self._p._tracer
        turn = attempt.turn
        request = TargetRequest(
            input=scenario.input,
            scenario_id=scenario.id if turn is None else turn.scenario_id,
            run_id=self._options.run_id,
            langfuse=tracer.client,
            callback_factory=tracer.callbacks,
            prompts=attempt.resolver,
            llm=self._p._llm,
            metadata={"tags": list(scenario.tags)},
            history=() if turn is None else turn.history,
            turn=0 if turn is None else turn.index,
            session_id=self._options.run_id if turn is None else turn.session_id,
        )
        return self._p._targets[scenario.target], request

    def _trace_reply_state(self, attempt: _Attempt, root: RootSpan) -> None:
        """A dialogue turn's state given with `evaluator.Reply`, on its root span's metadata under the
        target's state key names too, so the trace alone holds it (a recorded conversation is read
        from its traces: `validate --session-id`)."""
        if attempt.turn is None or not attempt.reply_state:
            return
        from evaluator.run.dialogue import STATE_KEYS  # a dialogue's turn: run.dialogue is loaded already

        settings = self._p._dialogue_settings.get(attempt.item.scenario.target)
        names = settings.state_keys if settings is not None else {}
        state = attempt.reply_state.items()
        metadata = {names.get(key, key): value for key, value in state if key in STATE_KEYS}
        if not metadata:
            return
        try:
            root.set_metadata(metadata)
        except Exception as exc:  # noqa: BLE001 - the turn's result stands without it
            _log.warning("could not record the reported state on the root span: %s", exc)

    def _scenario_run(self, attempt: _Attempt) -> AbstractContextManager[RootSpan]:
        scenario, turn = attempt.item.scenario, attempt.turn
        return self._p._tracer.scenario_run(
            trace_id=attempt.trace_id,
            scenario_id=scenario.id,
            run_id=self._options.run_id,
            tags=scenario.tags,
            input=scenario.input,
            experiment=self._options.experiment_links.get(scenario.id),
            session_id=None if turn is None else turn.session_id,
        )

    def _target_returned(self, attempt: _Attempt, root: RootSpan, output: Any, error: str | None) -> None:
        if isinstance(output, Reply):
            attempt.reply_state = output.state
            output = output.output
        if attempt.report():  # it returned in time: the watchdog will not touch the attempt's span
            attempt.root = None  # the span is ended here, and held no longer than it has to be
            self._trace_reply_state(attempt, root)
            _close_root(root, output=output, error=error)
            latency = attempt.latency_ms()
            if error is None:
                self._after_target(attempt, output, latency)
            else:
                self._report(attempt, lambda: self._target_error(attempt, error, latency), latency)

    def _call(self, target: Target, request: TargetRequest, attempt: _Attempt) -> tuple[Any, str | None]:
        """(output, None), or (None, the target's error message). A sync target is called here, in
        this worker, and timed out by the watchdog; an async one runs on the shared loop."""
        timeout = self._options.timeout_seconds
        deadline = self._watchdog.at(timeout, lambda: self._time_out(attempt))
        try:
            value = self._answer(target(request), attempt)
        except TargetTimeoutError:
            return None, self._timeout_message
        except BaseException as exc:  # noqa: BLE001 - any failure of the system under test (see _failure)
            return None, _failure(exc)
        finally:
            self._call_ended(attempt, deadline)
        return value, None

    def _answer(self, value: object, attempt: _Attempt) -> object:
        """What a target answered, within its timeout: the value it returned, awaited when awaitable;
        from a generator, sync or async (a streamed answer), its text chunks joined, the generator run
        here as the target's own work (its spans in the scenario's trace)."""
        left = self._options.timeout_seconds - (time.perf_counter() - attempt.started)
        if inspect.isasyncgen(value):
            chunks = cast("list[object]", self._await(_collected(value), left))
            return _joined(chunks, attempt.item.scenario.target)
        if inspect.isgenerator(value):
            return _joined(_within_timeout(value, attempt), attempt.item.scenario.target)
        return self._await(value, left) if inspect.isawaitable(value) else value

    def _call_ended(self, attempt: _Attempt, deadline: int) -> None:
        """In time: the watchdog lets go of the attempt now; after its timeout: its slot is free again
        only now."""
        if attempt.returned():
            self._watchdog.cancel(deadline)
        else:
            with self._lock:
                self._hung -= 1

    def _await(self, awaitable: Any, timeout: float) -> object:
        """An async target's result, from its task on the shared loop; cancelled at the timeout."""
        with self._lock:
            self._loop = self._loop or EventLoopThread()
        call = self._loop.submit(_awaited(awaitable), contextvars.copy_context())
        if not call.ended.wait(max(0.0, timeout)):
            call.cancel()
            call.ended.wait()  # the slot is released only once the task has really ended
        if call.outcome.cancelled():
            raise TargetTimeoutError
        return call.outcome.result(timeout=0)

    async def _acall(
        self, target: Target, request: TargetRequest, attempt: _Attempt
    ) -> tuple[Any, str | None]:
        """`_call` on the loop: the target's task runs beside this one. At the timeout the watchdog (its
        own thread: a target that blocks the loop is reported all the same) reports the scenario timed
        out and has the task cancelled; this returns (freeing the slot) only once the task has really
        ended."""
        loop = asyncio.get_running_loop()
        started: list[asyncio.Task[object]] = []  # the target's task, once there is one

        def at_deadline() -> None:  # in the watchdog's thread
            self._time_out(attempt)
            for call in started:
                loop.call_soon_threadsafe(call.cancel)

        left = self._options.timeout_seconds - (time.perf_counter() - attempt.started)
        deadline = self._watchdog.at(max(0.0, left), at_deadline)
        try:
            value = target(request)
            if inspect.isawaitable(value):
                call = loop.create_task(_awaited(value), context=contextvars.copy_context())
                started.append(call)
                if self._loop is not None:
                    self._loop.adopt(call)
                if attempt.timed_out:  # the deadline passed before the task was there to cancel
                    call.cancel()
                await asyncio.wait({call})
                if call.cancelled():
                    cancelled = "CancelledError: the target's task was cancelled"
                    return None, self._timeout_message if attempt.timed_out else cancelled
                value = call.result()
        except Exception as exc:  # noqa: BLE001 - any failure of the system under test
            return None, _failure(exc)
        finally:
            self._call_ended(attempt, deadline)
        return value, None

    @property
    def _timeout_message(self) -> str:
        return f"timed out after {self._options.timeout_seconds:g} s"

    def _time_out(self, attempt: _Attempt) -> None:
        """The watchdog's call at the deadline: a target still running is reported as timed out."""
        if not attempt.time_out():
            return
        with self._lock:
            self._hung += 1
        if not attempt.report():
            return
        if attempt.root is not None:
            _close_root(attempt.root, output=None, error=self._timeout_message)
        latency = attempt.latency_ms()
        # closes its capture: later spans are not kept
        self._report(attempt, lambda: self._target_error(attempt, self._timeout_message, latency), latency)

    # --- stage 2: trace and metrics, in the target's worker ------------------------------------------

    def _after_target(self, attempt: _Attempt, output: Any, latency_ms: float) -> None:
        """The trace and metrics of a target call that returned in time, then on to the judges or
        the store. Should even its evaluator error fail, the run stops with that failure."""
        try:
            done, trace = self._evaluate(attempt, output, latency_ms)
            if attempt.turn is not None:  # a dialogue's turn: the dialogue takes it
                attempt.turn.deliver(done, trace, attempt.reply_state)
                return
            if self._judges is not None and trace is not None and done.result.status != "error":
                with self._lock:  # with Ctrl-C's settling, so nothing reaches the judges after it
                    if not self._interrupted.is_set():
                        self._to_judges(_ToJudge(done=done, scenario=attempt.item, trace=trace))
                        return
                done = _unjudged(done)
            self._to_record.put(done)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(exc)

    def _evaluate(self, attempt: _Attempt, output: Any, latency_ms: float) -> tuple[Finished, Trace | None]:
        """The trace and the metrics of a finished target call; an exception here is the evaluator's."""
        try:
            captured = self._take(attempt)
            if captured.trace.observation_count == 0:
                raise TraceError(
                    f"nothing was captured for trace {attempt.trace_id}, not even the evaluator's root "
                    "span: the spans went to a tracer the evaluator does not see. Fix: create the Langfuse "
                    "client in the target without explicit keys, or report this with how the target sets "
                    "up tracing."
                )
            if captured.trace.observation_count == 1 and _checks_the_workflow(attempt.item.scenario):
                untraced = _nothing_of_the_system(attempt.item.scenario, attempt.trace_id)
                return self._kept(
                    replace(self._target_error(attempt, untraced, latency_ms), output=output), captured
                ), None
            result = evaluate(
                attempt.item.scenario,
                captured.trace,
                judge_status=self._options.judge_status,
                output=output,
                latency_ms=latency_ms,
                prompts=attempt.prompts_used(),
                finished_at=utc_now(),
                metrics=self._p._metrics,
                detail=captured.detail,
            )
            return self._kept(result, captured), captured.trace
        except Exception as exc:  # noqa: BLE001 - an evaluator bug: this scenario's, not the run's
            return Finished(self._evaluator_error(attempt, exc, latency_ms), ()), None

    def _take(self, attempt: _Attempt) -> CapturedTrace:
        """The run's captured spans and trace, read with its target's rules (closing the capture)."""
        rules = self._p._trace_rules.get(attempt.item.scenario.target, DEFAULT_RULES)
        return self._p._tracer.take(attempt.trace_id, rules)

    def _done(self, result: ScenarioResult, attempt: _Attempt) -> Finished:
        """A result that is not a verdict, with whatever spans were captured so far (closing the capture)."""
        try:
            return self._kept(result, self._take(attempt), late_spans=attempt.timed_out)
        except Exception as exc:  # noqa: BLE001 - the result stands; the spans could not be taken
            _log.error("could not keep the spans of scenario %s", result.scenario_id, exc_info=exc)
            return Finished(result, ())

    def _kept(self, result: ScenarioResult, captured: CapturedTrace, *, late_spans: bool = False) -> Finished:
        """The result on its way to the store, with its captured spans when they are kept; its scores
        are added by the record stage (`_scored`)."""
        if self._p._destination is None:  # embedded: the spans never leave this process
            return Finished(result, ())
        return Finished(result, (), captured.payload(), captured.span_count, late_spans)

    # --- stage 3: judges ---------------------------------------------------------------------------

    def _to_judges(self, item: _ToJudge) -> None:
        """Hand a result to the judge stage (under `_lock`, before any Ctrl-C): it is the stage's
        until judged, or until Ctrl-C settles it unjudged."""
        if self._loop is None:  # a run with judges has its loop from the start
            raise RuntimeError("the judge stage has no event loop")
        self._judging[item.done.result.scenario_id] = item
        self._judges_pending += 1
        self._judges_idle.clear()
        self._loop.spawn(self._judge(item), _JUDGES, on_done=self._judge_done)

    def _judge_done(self) -> None:
        """A judge task ended (judged, failed, or cancelled, even before it started)."""
        with self._lock:
            self._judges_pending -= 1
            if self._judges_pending == 0:
                self._judges_idle.set()

    async def _judge(self, item: _ToJudge) -> None:
        """One result through the judges (when it gets a slot), then to the record stage, unless
        Ctrl-C settled it meanwhile (recorded unjudged then, and this task cancelled)."""
        scenario_id = item.done.result.scenario_id
        try:
            async with self._judge_slots:
                with self._lock:
                    held = scenario_id in self._judging
                judged = await self._judged(item) if held else None
                with self._lock:
                    held = self._judging.pop(scenario_id, None) is not None
                if held and judged is not None:
                    self._judged_to(item, judged)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the item it held is lost: the run cannot end well
            self._fail(exc)

    def _judged_to(self, item: _ToJudge, result: ScenarioResult) -> None:
        """A result through the judge stage (judged, or unjudged at Ctrl-C), with its judges' traces
        to keep: to its dialogue (which may record itself now), or to the record stage."""
        keeper = self._p._judge_traces
        kept = keeper.take_kept(item.scenario.scenario.id) if keeper is not None else ()
        done = item.done._replace(result=result, traces=(*item.done.traces, *kept))
        if item.verdict is None:
            self._to_record.put(done)
            return
        try:
            item.verdict(done)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(exc)

    async def _judged(self, item: _ToJudge) -> ScenarioResult:
        """The result with the judges' verdicts; never raises (a judge that fails is *unscored*)."""
        judges = self._judges
        result = item.done.result
        if judges is None or self._interrupted.is_set():
            return _unjudged(item.done).result
        scenario, run_id = item.scenario.scenario, self._options.run_id
        history = item.history
        if self._judge_pool is None:
            return await ajudged_result(
                judges, scenario, result, item.trace, run_id=run_id, history=history, decided=item.decided
            )
        ask = partial(
            judged_result,
            judges,
            scenario,
            result,
            item.trace,
            run_id=run_id,
            history=history,
            decided=item.decided,
        )
        return await asyncio.get_running_loop().run_in_executor(self._judge_pool, ask)

    # --- stage 4: record ---------------------------------------------------------------------------

    def _record_stage(self) -> None:
        """Results, their scores and spans, committed together; only then do they count as finished.
        Should this stage fail, the waiting thread raises the failure (the run cannot end otherwise)."""
        try:
            self._record_all()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            self._fail(exc)

    def _record_all(self) -> None:
        run_id = self._options.run_id
        closing = False
        while not closing:
            batch: list[Finished] = []
            for done in self._batch(self._to_record):
                if done is None:
                    closing = True
                    break
                batch.append(done)
            finished = [self._scored(done, run_id) for done in batch]
            with self._finished_lock:  # committed and counted together, or neither
                if self._closed:
                    return
                failing = self._unrecorded is None
                recorded = self._commit(run_id, finished)
                self._finished.update((f.result.scenario_id, f.result) for f in finished)
                if len(self._finished) >= self._total and self._unrecorded is None:
                    self._all_stored.set()
            if not recorded:  # kept here only: not finished as `on_result` means it (stored)
                if failing and self._unrecorded is not None:
                    self._store_failed(self._unrecorded)
                continue
            for f in finished:
                try:
                    self._on_result(f.result)
                except Exception as exc:  # noqa: BLE001 - the caller's callback: the run goes on
                    _log.warning("on_result failed for scenario %s", f.result.scenario_id, exc_info=exc)

    def _commit(self, run_id: str, finished: Sequence[Finished]) -> bool:
        """`finished` into the store (under `_finished_lock`): True once committed. Once the store
        failed (a StoreError), nothing more is written to it (each try could wait out its busy timeout
        again): the results are kept here only, as `not_recorded`."""
        if self._unrecorded is None and finished:
            try:
                self._p._recorder.record_many(run_id, finished, destination=self._p._destination)
                return True
            except StoreError as exc:
                self._unrecorded = exc
                if isinstance(exc, StoreMovedError):  # what it took went with the file it had open
                    self._not_recorded.extend(self._finished)
        if self._unrecorded is None:
            return True  # nothing to record
        self._not_recorded.extend(f.result.scenario_id for f in finished)
        return False

    @staticmethod
    def _scored(done: Finished, run_id: str) -> Finished:
        """The result with its scores; an exception scoring it makes it an evaluator error (no score)."""
        try:
            scores = scores_for(done.result, run_id=run_id)
        except Exception as exc:  # noqa: BLE001 - an evaluator bug: this scenario's, not the run's
            _log.error("evaluator error scoring scenario %s", done.result.scenario_id, exc_info=exc)
            return done._replace(result=as_evaluator_error(done.result, exc), scores=())
        return done._replace(scores=scores)

    @staticmethod
    def _batch(source: queue.SimpleQueue[Finished | None]) -> list[Finished | None]:
        """The next item (waiting for it), then whatever else is there, up to a batch; when that is
        not a full batch, what else arrives within a short window. One transaction for many results
        even when they trickle in, and one wake-up of this thread for them all, not one per result
        (under load, each wake-up waits its turn for the interpreter lock)."""
        batch = [source.get()]
        for pause in (0.0, _RECORD_WINDOW):
            if batch[-1] is None or len(batch) >= _RECORD_BATCH:
                break
            if pause:
                time.sleep(pause)
            while len(batch) < _RECORD_BATCH and batch[-1] is not None:
                try:
                    batch.append(source.get_nowait())
                except queue.Empty:
                    break
        return batch

    # --- results that are not verdicts -------------------------------------------------------------

    def _target_error(self, attempt: _Attempt, message: str, latency_ms: float) -> ScenarioResult:
        return error_result(
            attempt.item.scenario,
            attempt.trace_id,
            message,
            judge_status=self._options.judge_status,
            latency_ms=latency_ms,
            prompts=attempt.prompts_used(),
            finished_at=utc_now(),
            metrics=self._p._metrics,
        )

    def _evaluator_error(
        self, attempt: _Attempt, exc: BaseException, latency_ms: float | None = None
    ) -> ScenarioResult:
        _log.error(
            "evaluator error in scenario %s (a bug in the evaluator, not the agent's failure)",
            attempt.item.scenario.id,
            exc_info=exc,
        )
        return evaluator_error_result(
            attempt.item.scenario,
            attempt.trace_id,
            exc,
            judge_status=self._options.judge_status,
            latency_ms=latency_ms,
            prompts=attempt.prompts_used(),
            finished_at=utc_now(),
            metrics=self._p._metrics,
        )


def _unjudged(done: Finished, status: JudgeStatus = JUDGES_INTERRUPTED) -> Finished:
    """A result recorded without its judges, because the run was interrupted (or cut off)."""
    return done._replace(result=replace(done.result, judge_status=status))


def _close_root(root: RootSpan, *, output: object, error: str | None) -> None:
    """Record the outcome on the root span and end it. A failure here (an output the SDK cannot
    serialise, say) is logged: the scenario's result does not depend on its span."""
    try:
        if error is not None:
            root.set_error(error)
        elif output is not None:
            root.set_output(output)
    except Exception as exc:  # noqa: BLE001 - the result stands without it
        _log.warning("could not record the outcome on the root span: %s", exc)
    try:
        root.end()
    except Exception as exc:  # noqa: BLE001 - likewise
        _log.warning("could not end the root span: %s", exc)


class _Escaped(Exception):  # noqa: N818 - not an error of its own: it carries the target's
    """A target's SystemExit, KeyboardInterrupt or GeneratorExit, carried out of its task as an ordinary
    exception: raised as themselves, the first two would stop the run's event loop (asyncio re-raises
    them out of the loop), and the run would wait for ever for the scenarios on it."""

    def __init__(self, escaped: BaseException) -> None:
        super().__init__(escaped)
        self.escaped = escaped


def _failure(exc: BaseException) -> str:
    """A target's failure as its result's error. `sys.exit()`, a KeyboardInterrupt it raised itself and
    the like are its failure too: they end its scenario, not the run (a target runs in a worker thread
    or a task, never where Ctrl-C lands: the run's own thread handles that)."""
    return failure_text(exc.escaped if isinstance(exc, _Escaped) else exc)


async def _awaited(value: Any) -> object:
    try:
        return await value
    except BaseException as exc:
        if isinstance(exc, Exception | asyncio.CancelledError):
            raise
        raise _Escaped(exc) from exc


def _within_timeout(stream: Generator[object, Never, object], attempt: _Attempt) -> list[object]:
    """A sync stream's chunks, collected until it ends or its target times out: then it is closed at
    its next chunk (its `finally` runs), and the worker's slot is free again, where collecting it on
    would hold the slot, and the chunks in memory, for as long as it streams."""
    chunks: list[object] = []
    try:
        for chunk in stream:
            if attempt.timed_out:
                raise TargetTimeoutError
            chunks.append(chunk)
    finally:
        stream.close()
    return chunks


async def _collected(stream: AsyncIterator[object]) -> list[object]:
    return [chunk async for chunk in stream]


def _joined(chunks: Iterable[object], target: str) -> str:
    """A streamed answer: its text chunks joined. Chunks of another kind (a graph's state updates,
    say) leave the answer unknown: an error naming the target and the fix, not a verdict on them."""
    parts = list(chunks)
    texts = [chunk for chunk in parts if isinstance(chunk, str)]
    if len(texts) < len(parts):
        other = next(chunk for chunk in parts if not isinstance(chunk, str))
        raise TypeError(
            f'target "{target}" streamed its answer as {type(other).__name__} chunks, not text, so the '
            "answer is unknown. Fix: return the final answer (e.g. the last state's message), or yield text."
        )
    return "".join(texts)


def _awaitable(target: Target | None) -> bool:
    """Whether calling `target` gives an awaitable for certain (an `async def` function or method)."""
    return target is not None and (
        inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(type(target).__call__)
    )


def _checks_the_workflow(scenario: Scenario) -> bool:
    """Whether the scenario (or the dialogue turn) expects agents or tools, found or avoided, or a
    tool path: what a trace holding nothing of the system cannot show."""
    expected = scenario.expected
    return bool(
        expected.agents.include
        or expected.agents.exclude
        or expected.tools.include
        or expected.tools.exclude
        or expected.trajectory is not None
    )


def _nothing_of_the_system(scenario: Scenario, trace_id: str) -> str:
    """Why a run whose trace holds only the evaluator's root span is not checked: its agents and tools
    ran or not, the trace cannot tell, so none is called missing or avoided (not a failed scenario)."""
    return (
        f"trace {trace_id} holds nothing of target {scenario.target} but the evaluator's own root span: "
        "the system answered without recording an agent, tool or model call, so the agents and tools "
        "this scenario expects cannot be checked (neither found nor avoided). Fix: trace the system as "
        "Langfuse's docs do for its framework (README, \"Tracing your system\"): @observe, LangChain's "
        "CallbackHandler, OpenAIAgentsInstrumentor for the OpenAI Agents SDK, Agent.instrument_all() "
        "for pydantic-ai."
    )
