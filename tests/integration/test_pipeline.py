"""The pipeline's bounds, with real embedded tracing: hung targets keep their slots (never more target
calls at once than the bound), timeouts report at their deadline, no thread outlives the run but the
hung targets' own, and an evaluator bug is the evaluator's error, scored against nobody."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from evaluator.errors import StoreError
from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.results import ScenarioResult, scores_for
from evaluator.run import Pipeline, RunOptions, TargetRequest
from evaluator.run.pipeline import NotRecordedError
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Finished, Store
from tests.builders import scenario
from tests.integration.toy_targets import Gauge

T = TypeVar("T")


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test, so hung targets end and their workers with them."""
    event = threading.Event()
    yield event
    event.set()


def _items(*inputs: str) -> list[LoadedScenario]:
    return [
        LoadedScenario(
            scenario=scenario(id=f"s{i}", input=text, expected={"agents": {"strict": False}}),
            path=Path("x.yaml"),
        )
        for i, text in enumerate(inputs)
    ]


def _pipeline(tracing: Tracing, target: Callable[[TargetRequest], object], store: Store) -> Pipeline:
    return Pipeline(
        tracer=tracing, targets={"demo": target}, prompts=PromptLibrary(Path("-")), recorder=store
    )


def _evaluator_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("evaluator-")}


def test_hung_targets_keep_their_slots(tracing: Tracing, release: threading.Event) -> None:
    gauge = Gauge()

    def target(request: TargetRequest) -> str:
        with gauge:
            if request.input == "hang":
                release.wait(30)
            else:
                time.sleep(0.02)
        return "ok"

    before = _evaluator_threads()
    items = _items("hang", "hang", *["quick"] * 10)
    run, results = _pipeline(tracing, target, Store(None)).run(
        items, RunOptions(concurrency=3, timeout_seconds=0.3)
    )
    assert gauge.peak <= 3  # two slots held by hung targets: the quick ones ran one at a time
    by_status = {r.scenario_id: r.status for r in results}
    assert [by_status[f"s{i}"] for i in range(2)] == ["error", "error"]
    assert all(by_status[f"s{i}"] == "passed" for i in range(2, 12))
    assert results[0].error == "timed out after 0.3 s"
    assert run.cut_off is None
    leftover = _evaluator_threads() - before
    assert len(leftover) == 2 and all(t.name.startswith("evaluator-target-") for t in leftover)
    release.set()
    for thread in leftover:
        thread.join(5)
    assert not any(t.is_alive() for t in leftover)


def test_every_slot_hung_cuts_the_rest_off(tracing: Tracing, release: threading.Event) -> None:
    gauge = Gauge()

    def target(request: TargetRequest) -> str:
        with gauge:
            release.wait(30)
        return "late"

    store = Store(None)
    started = time.monotonic()
    run, results = _pipeline(tracing, target, store).run(
        _items(*["hang"] * 5), RunOptions(concurrency=2, timeout_seconds=0.2)
    )
    assert time.monotonic() - started < 5
    assert gauge.peak == 2
    assert [r.status for r in results] == ["error", "error"]
    assert run.cut_off is not None and run.cut_off.startswith("3 scenarios were not started")
    assert len(store.results(run.id)) == 2


def test_timeout_reports_at_the_deadline_not_when_the_target_returns(
    tracing: Tracing, release: threading.Event
) -> None:
    reported: list[float] = []

    def target(request: TargetRequest) -> str:
        release.wait(30)
        return "late"

    started = time.monotonic()
    _pipeline(tracing, target, Store(None)).run(
        _items("hang"), RunOptions(timeout_seconds=0.3), on_result=lambda _: reported.append(time.monotonic())
    )
    assert reported and reported[0] - started < 3  # reported near 0.3 s, while the target still hangs


def test_an_async_target_is_cancelled_at_its_timeout(tracing: Tracing) -> None:
    cancelled = threading.Event()

    async def target(request: TargetRequest) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    before = _evaluator_threads()
    # 1 s, not less: on a loaded machine a shorter deadline can pass before the task first runs, and a
    # task cancelled before it starts never sees CancelledError.
    _, [result] = _pipeline(tracing, target, Store(None)).run(_items("a"), RunOptions(timeout_seconds=1.0))
    assert result.status == "error" and result.error == "timed out after 1 s"
    assert cancelled.wait(5)
    assert _evaluator_threads() - before == set()  # nothing hangs: the task really ended


def test_an_evaluator_error_is_kept_and_scored_against_nobody(
    tracing: Tracing, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from evaluator.run import pipeline

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("observations")

    monkeypatch.setattr(pipeline, "evaluate", broken)
    store = Store(None)
    run, [result] = _pipeline(tracing, lambda request: "fine", store).run(_items("x"), RunOptions())
    assert result.status == "error"
    assert result.evaluator_error is not None and result.evaluator_error.type == "KeyError"
    assert "raise KeyError" in result.evaluator_error.traceback
    assert store.count_scores() == 0  # no workflow_pass = 0 blaming the agent
    [stored] = store.results(run.id)
    assert stored["evaluator_error"]["type"] == "KeyError"
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert "evaluator error in scenario s0" in record.getMessage() and record.exc_info is not None


def test_an_async_target_that_outlives_its_cancellation_keeps_its_slot_until_it_ends(
    tracing: Tracing,
) -> None:
    async def target(request: TargetRequest) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(1.5)  # cleans up for a while before it gives in
            raise
        return "late"

    before = _evaluator_threads()
    _, [result] = _pipeline(tracing, target, Store(None)).run(_items("a"), RunOptions(timeout_seconds=1.0))
    assert result.status == "error" and result.error == "timed out after 1 s"
    deadline = time.monotonic() + 10
    while _evaluator_threads() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _evaluator_threads() - before == set()  # its worker and the loop ended with the task


def _run_within(seconds: float, run: Callable[[], T]) -> T:
    """`run()`'s return, failing the test (not hanging it) when it has not ended within `seconds`."""
    outcome: list[T] = []
    thread = threading.Thread(target=lambda: outcome.append(run()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the run did not end within {seconds} s"
    return outcome[0]


def _failing_for(name: str, real: Callable[..., object]) -> Callable[..., object]:
    """`real`, except for the scenario or trace named `name`, where it raises (an evaluator bug)."""

    def maybe(*args: object, **kwargs: object) -> object:
        if any(name in (getattr(a, "scenario_id", None), getattr(a, "id", None), a) for a in args):
            raise RuntimeError(f"an evaluator bug at {name}")
        return real(*args, **kwargs)

    return maybe


@pytest.mark.parametrize(
    ("where", "inputs"),
    [
        ("scores_for", ("fine", "fine")),  # scoring, in the record stage
        ("error_result", ("raise", "fine")),  # the target's error, in its worker
        ("error_result", ("hang", "fine")),  # the timeout, in the watchdog
    ],
)
def test_an_evaluator_error_anywhere_ends_as_that_scenarios_error_and_the_run_goes_on(
    tracing: Tracing,
    monkeypatch: pytest.MonkeyPatch,
    release: threading.Event,
    where: str,
    inputs: tuple[str, ...],
) -> None:
    from evaluator.run import pipeline

    monkeypatch.setattr(pipeline, where, _failing_for("s0", getattr(pipeline, where)))

    def target(request: TargetRequest) -> str:
        if request.input == "raise":
            raise ValueError("the agent failed")
        if request.input == "hang":
            release.wait(30)
        return "fine"

    store = Store(None)
    options = RunOptions(concurrency=2, timeout_seconds=0.5)
    run, results = _run_within(20, lambda: _pipeline(tracing, target, store).run(_items(*inputs), options))
    first, second = results
    assert first.status == "error" and first.evaluator_error is not None
    assert first.evaluator_error.message == "an evaluator bug at s0"
    assert second.status == "passed"
    expected = scores_for(second, run_id=run.id)
    assert expected and store.count_scores() == len(expected)  # none for the evaluator's error


def test_a_scenario_the_evaluator_cannot_start_is_its_error_and_the_run_goes_on(
    tracing: Tracing, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tracing, "trace_id_for", _failing_for("s0", tracing.trace_id_for))
    run = _pipeline(tracing, lambda request: "fine", Store(None)).run
    _, (first, second) = _run_within(20, lambda: run(_items("a", "b"), RunOptions()))
    assert first.status == "error" and first.evaluator_error is not None and first.trace_id == ""
    assert second.status == "passed"


def test_a_failing_on_result_callback_does_not_stop_the_run(tracing: Tracing) -> None:
    told: list[str] = []

    def on_result(result: ScenarioResult) -> None:
        told.append(result.scenario_id)
        raise RuntimeError("a progress bar that broke")

    run = _pipeline(tracing, lambda request: "fine", Store(None)).run
    _, results = _run_within(20, lambda: run(_items("a", "b", "c"), RunOptions(), on_result=on_result))
    assert [r.status for r in results] == ["passed"] * 3
    assert sorted(told) == ["s0", "s1", "s2"]


def test_a_run_that_cannot_even_report_a_scenario_raises_instead_of_waiting(
    tracing: Tracing, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.run import pipeline

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("an evaluator bug, twice over")

    monkeypatch.setattr(pipeline, "evaluate", broken)
    monkeypatch.setattr(pipeline, "evaluator_error_result", broken)  # its evaluator error fails too

    def run() -> BaseException | None:
        try:
            _pipeline(tracing, lambda request: "fine", Store(None)).run(_items("a"), RunOptions())
        except RuntimeError as exc:
            return exc
        return None

    failure = _run_within(20, run)
    assert failure is not None and "twice over" in str(failure)


def test_a_task_an_async_target_leaves_behind_does_not_keep_the_loop(tracing: Tracing) -> None:
    left: list[asyncio.Task[None]] = []

    async def target(request: TargetRequest) -> str:
        left.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))  # a heartbeat, say
        return "fine"

    before = _evaluator_threads()
    _, [result] = _pipeline(tracing, target, Store(None)).run(_items("a"), RunOptions())
    assert result.status == "passed"
    assert _evaluator_threads() - before == set() and left[0].cancelled()


class _FailingRecorder:
    """The store, until its `ok` batches are in: then every write fails, as a full disk's does."""

    def __init__(self, store: Store, ok: int = 0) -> None:
        self.store, self.ok, self.calls = store, ok, 0
        self.failed = threading.Event()

    def record_many(self, run_id: str, finished: Sequence[Finished], *, destination: str | None) -> None:
        self.calls += 1
        if self.calls > self.ok:
            self.failed.set()
            raise StoreError("cannot write to the store x.db (the disk is full: database or disk is full).")
        self.store.record_many(run_id, finished, destination=destination)


def test_a_store_failing_mid_run_starts_nothing_more_and_keeps_every_result_computed(
    tracing: Tracing,
) -> None:
    """The store fails on the first result: the scenario running then finishes (its result kept, not
    lost), no other starts, nothing more is written, and the run's results all come back with it."""
    recorder = _FailingRecorder(Store(None))
    reported: list[ScenarioResult] = []

    def target(request: TargetRequest) -> str:
        if request.input == "in flight":  # started before the failure, ends after it
            assert recorder.failed.wait(10)
            time.sleep(0.3)
        return "ok"

    pipeline = Pipeline(
        tracer=tracing, targets={"demo": target}, prompts=PromptLibrary(Path("-")), recorder=recorder
    )
    with pytest.raises(NotRecordedError) as raised:
        pipeline.run(
            _items("first", "in flight", "never", "never"),
            RunOptions(concurrency=1),
            on_result=reported.append,
        )
    failure = raised.value
    assert isinstance(failure, StoreError) and "the disk is full" in str(failure.cause)
    assert [(r.scenario_id, r.status) for r in failure.results] == [("s0", "passed"), ("s1", "passed")]
    assert failure.not_recorded == ["s0", "s1"]
    assert failure.run.started == 2 and failure.run.selected == 4
    assert failure.run.cut_off == "2 scenarios were not started: the local store failed during the run"
    assert recorder.calls == 1  # the failed store was not asked again
    assert reported == []  # `on_result`: once stored, and none was


def test_a_store_failing_mid_run_keeps_those_stored_before_and_says_which_are_not(tracing: Tracing) -> None:
    store = Store(None)
    recorder = _FailingRecorder(store, ok=1)
    gate = threading.Event()

    def target(request: TargetRequest) -> str:
        if request.input != "first":
            assert gate.wait(10)  # ends once the first result is stored
        return "ok"

    pipeline = Pipeline(
        tracer=tracing, targets={"demo": target}, prompts=PromptLibrary(Path("-")), recorder=recorder
    )
    with pytest.raises(NotRecordedError) as raised:
        pipeline.run(
            _items("first", "second", "third"),
            RunOptions(concurrency=3),
            on_result=lambda _: gate.set(),
        )
    failure = raised.value
    assert [r.scenario_id for r in failure.results] == ["s0", "s1", "s2"]
    assert failure.not_recorded == ["s1", "s2"]
    assert failure.run.cut_off is None  # every scenario had started
    assert [r["scenario_id"] for r in store.results(failure.run.id)] == ["s0"]


def test_a_dialogue_under_way_when_the_store_fails_runs_its_every_turn(tracing: Tracing) -> None:
    """No scenario starts after the failure, but a dialogue under way is not cut short: its later
    turns are part of what was running, each within its timeout, as they would have been."""
    from evaluator.scenarios import Scenario

    recorder = _FailingRecorder(Store(None))
    turns_called: list[str] = []

    def target(request: TargetRequest) -> str:
        if request.input.startswith("turn"):
            turns_called.append(request.input)
            if request.input == "turn 0":
                assert recorder.failed.wait(10)  # the store fails while this turn runs
        return "ok"

    dialogue = Scenario.model_validate(
        {"id": "d", "target": "demo", "turns": [{"user": f"turn {i}"} for i in range(3)]}
    )
    items = [*_items("first"), LoadedScenario(scenario=dialogue, path=Path("d.yaml"))]
    pipeline = Pipeline(
        tracer=tracing, targets={"demo": target}, prompts=PromptLibrary(Path("-")), recorder=recorder
    )
    with pytest.raises(NotRecordedError) as raised:
        pipeline.run(items, RunOptions(concurrency=2))
    assert turns_called == ["turn 0", "turn 1", "turn 2"]
    by_id = {r.scenario_id: r for r in raised.value.results}
    assert by_id["d"].status == "passed", by_id["d"].error
    assert [t["status"] for t in by_id["d"].to_json()["turns"]] == ["passed"] * 3
    assert raised.value.not_recorded == ["s0", "d"]


class _BatchSizes:
    """The store, noting how many results each transaction commits."""

    def __init__(self, store: Store) -> None:
        self.store, self.sizes = store, list[int]()

    def record_many(self, run_id: str, finished: Sequence[Finished], *, destination: str | None) -> None:
        self.sizes.append(len(finished))
        self.store.record_many(run_id, finished, destination=destination)


def test_a_transaction_commits_at_most_16_results(tracing: Tracing) -> None:
    """Results wait in memory until their transaction: at most 16 of them, however fast they come."""
    recorder = _BatchSizes(Store(None))
    pipeline = Pipeline(
        tracer=tracing,
        targets={"demo": lambda request: "ok"},
        prompts=PromptLibrary(Path("-")),
        recorder=recorder,
    )
    _, results = pipeline.run(_items(*(f"q{i}" for i in range(80))), RunOptions(concurrency=8))
    assert len(results) == 80 and sum(recorder.sizes) == 80
    assert max(recorder.sizes) <= 16  # (80 results within the 0.2 s window: one transaction before)


def test_a_tool_output_nested_too_deeply_to_decode_is_kept_as_text(tracing: Tracing) -> None:
    """JSON text a decoder cannot read for its depth (thousands of nested lists) in a tool's input and
    output and in the answer is text, as any text that is not JSON: the scenario is evaluated, not an
    evaluator error (RecursionError, where the trace's values are decoded)."""
    deep = "[" * 100_000 + "]" * 100_000  # past the decoder's depth on every Python

    def target(request: TargetRequest) -> str:
        with request.langfuse.start_as_current_observation(
            as_type="tool", name="search", input={"q": deep}
        ) as t:
            t.update(output=deep)
        return deep

    _, [result] = _pipeline(tracing, target, Store(None)).run(_items("x"), RunOptions())
    assert result.evaluator_error is None and result.status != "error", result.error
    assert result.output == deep and result.workflow is not None
    assert result.workflow.tools.unexpected == ("search",)  # a verdict drawn from the trace (strict)
