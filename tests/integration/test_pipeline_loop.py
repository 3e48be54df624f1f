"""The pipeline's bounds when every scenario is single-turn with an async target, so its attempts are
tasks on the run's event loop (no worker threads): never more target calls at once than the bound,
targets that outlive their cancellation keep their slots, every slot held cuts the rest off, Ctrl-C
stops starting scenarios and keeps what finished; a run mixing sync and async targets goes through
the workers as before."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.run import Pipeline, RunOptions, TargetRequest
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Store
from tests.builders import scenario
from tests.integration.toy_targets import Gauge


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _items(*inputs: str, target: str = "demo") -> list[LoadedScenario]:
    return [
        LoadedScenario(
            scenario=scenario(id=f"s{i}", input=text, target=target, expected={"agents": {"strict": False}}),
            path=Path("x.yaml"),
        )
        for i, text in enumerate(inputs)
    ]


def _pipeline(tracing: Tracing, store: Store, **targets: Callable[[TargetRequest], object]) -> Pipeline:
    return Pipeline(tracer=tracing, targets=targets, prompts=PromptLibrary(Path("-")), recorder=store)


def _target_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("evaluator-target")}


def test_async_attempts_run_on_the_loop_within_the_bound_without_worker_threads(tracing: Tracing) -> None:
    gauge = Gauge()
    seen: list[set[str]] = []
    before = _target_threads()  # another test's hung workers may still be ending

    async def target(request: TargetRequest) -> str:
        with gauge:
            seen.append(_target_threads() - before)
            await asyncio.sleep(0.02)
        return f"ok {request.input}"

    store = Store(None)
    run, results = _pipeline(tracing, store, demo=target).run(_items(*["q"] * 12), RunOptions(concurrency=3))
    assert gauge.peak == 3  # the bound, reached and never passed
    assert [r.status for r in results] == ["passed"] * 12
    assert all(r.output == "ok q" for r in results)
    assert seen and all(names == set() for names in seen)  # no worker thread was started
    assert run.started == 12 and len(store.results(run.id)) == 12


def test_targets_that_outlive_their_cancellation_hold_every_slot_and_cut_the_rest_off(
    tracing: Tracing,
) -> None:
    gauge = Gauge()

    async def target(request: TargetRequest) -> str:
        with gauge:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await asyncio.sleep(3)  # cleans up for a while before it gives in
                raise
        return "late"

    store = Store(None)
    started = time.monotonic()
    run, results = _pipeline(tracing, store, demo=target).run(
        _items(*["hang"] * 5), RunOptions(concurrency=2, timeout_seconds=0.3)
    )
    assert time.monotonic() - started < 3  # reported at the deadlines, not when the targets gave in
    assert gauge.peak == 2
    assert [r.status for r in results] == ["error", "error"]
    assert all(r.error == "timed out after 0.3 s" for r in results)
    assert run.cut_off is not None and run.cut_off.startswith("3 scenarios were not started: all 2 target")
    assert len(store.results(run.id)) == 2


def test_a_target_that_returns_after_its_timeout_freed_its_slot_only_then(tracing: Tracing) -> None:
    gauge = Gauge()

    async def target(request: TargetRequest) -> str:
        with gauge:
            if request.input == "slow":
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    await asyncio.sleep(0.5)
                    raise
            await asyncio.sleep(0.01)
        return "ok"

    _, results = _pipeline(tracing, Store(None), demo=target).run(
        _items("slow", *["quick"] * 6), RunOptions(concurrency=2, timeout_seconds=0.3)
    )
    assert gauge.peak <= 2
    assert [r.status for r in results] == ["error", *["passed"] * 6]


def test_ctrl_c_stops_starting_scenarios_and_keeps_what_finished(tracing: Tracing) -> None:
    stop = threading.Event()

    async def target(request: TargetRequest) -> str:
        if request.input == "third":
            stop.set()  # Ctrl-C while this one runs
            await asyncio.sleep(0.3)
        return "ok"

    store = Store(None)
    run, results = _pipeline(tracing, store, demo=target).run(
        _items("first", "second", "third", *["never"] * 5), RunOptions(concurrency=1), stop=stop
    )
    assert run.interrupted
    assert [r.scenario_id for r in results][:2] == ["s0", "s1"]
    assert all(r.status == "passed" for r in results)
    assert run.started <= 4 and len(store.results(run.id)) == len(results)


def test_a_target_that_raises_is_its_scenarios_error(tracing: Tracing) -> None:
    async def target(request: TargetRequest) -> str:
        raise ValueError("no such index")

    _, [result] = _pipeline(tracing, Store(None), demo=target).run(_items("q"), RunOptions())
    assert result.status == "error" and result.error == "ValueError: no such index"


def test_a_run_mixing_sync_and_async_targets_goes_through_the_workers(tracing: Tracing) -> None:
    names: list[str] = []

    async def async_target(request: TargetRequest) -> str:
        return "async"

    def sync_target(request: TargetRequest) -> str:
        names.append(threading.current_thread().name)
        return "sync"

    items = [*_items("a", "b", target="fast"), *_items("c", target="plain")]
    items[2] = LoadedScenario(scenario=items[2].scenario.model_copy(update={"id": "s9"}), path=Path("x.yaml"))
    _, results = _pipeline(tracing, Store(None), fast=async_target, plain=sync_target).run(
        items, RunOptions(concurrency=2)
    )
    assert [r.output for r in results] == ["async", "async", "sync"]
    assert names and names[0].startswith("evaluator-target-")


def test_a_target_that_blocks_the_loop_is_reported_at_its_deadline_and_cut_off(tracing: Tracing) -> None:
    """An `async def` target that blocks (time.sleep, a blocking client) stops the loop: the watchdog's
    own thread reports it at the deadline all the same, and with its slot held the rest is cut off."""
    reported: list[float] = []

    async def target(request: TargetRequest) -> str:
        time.sleep(2.5)  # blocks the event loop itself
        return "late"

    started = time.monotonic()
    run, results = _pipeline(tracing, Store(None), demo=target).run(
        _items("a", "b", "c"),
        RunOptions(concurrency=1, timeout_seconds=0.3),
        on_result=lambda _: reported.append(time.monotonic() - started),
    )
    assert reported and reported[0] < 1.5  # at the deadline, not when the target gave the loop back
    assert [r.status for r in results] == ["error"] and results[0].error == "timed out after 0.3 s"
    assert run.cut_off is not None and run.cut_off.startswith("2 scenarios were not started")


def test_ctrl_c_while_every_slot_is_busy_starts_nothing_more(tracing: Tracing) -> None:
    stop = threading.Event()
    calls: list[str] = []

    async def target(request: TargetRequest) -> str:
        calls.append(request.input)
        stop.set()  # Ctrl-C while the only slot is busy and the dispatcher waits for it
        await asyncio.sleep(0.6)
        return "ok"

    run, _ = _pipeline(tracing, Store(None), demo=target).run(
        _items("first", "second", "third"), RunOptions(concurrency=1), stop=stop
    )
    time.sleep(1.0)  # the first target has ended and freed its slot: the dispatcher saw it
    assert run.interrupted and calls == ["first"] and run.started == 1
