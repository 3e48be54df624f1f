"""`run_suite()` called as users call it from Python: with targets of every shape users write, from
inside a running event loop, and many times in one process."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from evaluator import Scenario, SuiteOptions, SuiteRun, TargetRequest, run_suite
from evaluator.run import Target

T = TypeVar("T")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project: an empty evaluator.toml (every setting its default), the working folder."""
    (tmp_path / "evaluator.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _scenario(id: str = "s1", target: str = "demo") -> Scenario:
    return Scenario.model_validate(
        {"id": id, "target": target, "input": "q?", "expected": {"agents": {"include": ["worker"]}}}
    )


def _work(request: TargetRequest) -> str:
    with request.langfuse.start_as_current_observation(as_type="agent", name="worker"):
        return "answer"


async def _work_async(request: TargetRequest) -> str:
    await asyncio.sleep(0)
    return _work(request)


def _within(seconds: float, call: Callable[[], T]) -> T:
    """`call()` in a thread of its own, failing the test (instead of hanging it) past `seconds`."""
    outcome: list[T] = []
    thread = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        pytest.fail(f"the run did not return within {seconds} s")
    return outcome[0]


def _run(targets: dict[str, Target], *scenarios: Scenario) -> SuiteRun:
    return _within(
        30, lambda: run_suite(scenarios=scenarios, targets=targets, options=SuiteOptions(timeout=10))
    )


def _statuses(suite: SuiteRun) -> dict[str, tuple[str, str | None]]:
    return {r.scenario_id: (r.status, r.error) for r in suite.results}


def test_a_target_calling_sys_exit_or_raising_keyboard_interrupt_fails_its_scenario(project: Path) -> None:
    def exits(request: TargetRequest) -> str:
        _work(request)
        sys.exit(3)

    def interrupted(request: TargetRequest) -> str:
        raise KeyboardInterrupt

    suite = _run(
        {"demo": _work, "exits": exits, "interrupted": interrupted},
        _scenario("ok"),
        _scenario("exits", "exits"),
        _scenario("interrupted", "interrupted"),
    )
    assert _statuses(suite) == {
        "ok": ("passed", None),
        "exits": ("error", "SystemExit: 3"),
        "interrupted": ("error", "KeyboardInterrupt: "),
    }
    assert not suite.run.interrupted  # the target's KeyboardInterrupt is not the user's Ctrl-C


@pytest.mark.parametrize("escape", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()])
def test_an_async_target_raising_system_exit_and_the_like_leaves_the_run_loop_running(
    project: Path, escape: BaseException
) -> None:
    async def escapes(request: TargetRequest) -> str:
        _work(request)
        raise escape

    async def answers(request: TargetRequest) -> str:
        await asyncio.sleep(0.2)  # still running on the loop when the other one raises
        return _work(request)

    expected = ("error", f"{type(escape).__name__}: {escape}")
    scenarios = (_scenario("ok"), _scenario("escapes", "escapes"))
    # every target async: the attempts are tasks on the run's loop
    on_loop = _run({"demo": answers, "escapes": escapes}, *scenarios)
    assert _statuses(on_loop) == {"ok": ("passed", None), "escapes": expected}
    # a sync target beside: workers, each async call a task on the loop
    beside = _run({"demo": _work, "escapes": escapes}, *scenarios)
    assert _statuses(beside) == {"ok": ("passed", None), "escapes": expected}


def _open_files(under: Path) -> list[str]:
    """The files under `under` this process holds open (Linux's /proc)."""
    held = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            held.append(str(fd.readlink()))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return [path for path in held if path.startswith(str(under))]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_runs_one_after_another_leave_no_file_open_and_no_thread_behind(project: Path) -> None:
    """As a notebook or a test session runs suite after suite: each run's store connection is closed
    when it returns, not whenever the garbage collector finds it (it may never: turned off here)."""
    _run({"demo": _work}, _scenario())  # the first run starts the tracing that the next ones share
    threads = threading.active_count()
    gc.disable()
    try:
        for index in range(5):
            assert _run({"demo": _work}, _scenario(f"s{index}")).passed
            assert _open_files(project) == []
    finally:
        gc.enable()
    assert threading.active_count() == threads


def test_a_streamed_answer_is_its_text_chunks_joined_and_its_work_is_in_the_trace(project: Path) -> None:
    def streams(request: TargetRequest) -> Iterator[str]:
        with request.langfuse.start_as_current_observation(as_type="agent", name="worker"):
            yield "ans"
            yield "wer"

    async def streams_async(request: TargetRequest) -> AsyncIterator[str]:
        with request.langfuse.start_as_current_observation(as_type="agent", name="worker"):
            yield "answer"

    def streams_states(request: TargetRequest) -> Iterator[dict[str, str]]:
        yield {"worker": "answer"}

    suite = _run(
        {"demo": streams, "async": streams_async, "states": streams_states},
        _scenario("sync"),
        _scenario("async", "async"),
        _scenario("states", "states"),
    )
    outcomes = {r.scenario_id: (r.status, r.output) for r in suite.results}
    assert outcomes["sync"] == outcomes["async"] == ("passed", "answer")  # the worker agent was seen
    states = next(r for r in suite.results if r.scenario_id == "states")
    assert states.status == "error"
    assert states.error is not None
    assert states.error.startswith('TypeError: target "states" streamed its answer as dict chunks, not text')


def test_a_stream_that_hangs_is_cut_off_at_the_timeout(project: Path) -> None:
    release = threading.Event()

    def hangs(request: TargetRequest) -> Iterator[str]:
        yield "partial"
        release.wait(30)

    async def hangs_async(request: TargetRequest) -> AsyncIterator[str]:
        yield "partial"
        await asyncio.sleep(30)

    options = SuiteOptions(timeout=0.5)
    scenarios = [_scenario("sync"), _scenario("async", "async")]
    try:
        suite = _within(
            10,
            lambda: run_suite(
                scenarios=scenarios, targets={"demo": hangs, "async": hangs_async}, options=options
            ),
        )
    finally:
        release.set()
    assert _statuses(suite) == {
        "sync": ("error", "timed out after 0.5 s"),
        "async": ("error", "timed out after 0.5 s"),
    }


@pytest.mark.parametrize("target", [_work, _work_async], ids=["sync", "async"])
def test_run_suite_works_from_inside_a_running_event_loop(project: Path, target: Target) -> None:
    """As a notebook cell calls it (README): directly from a coroutine, or in a thread of the loop."""

    async def main() -> tuple[SuiteRun, SuiteRun]:
        scenarios = [_scenario()]
        direct = run_suite(scenarios=scenarios, targets={"demo": target})
        threaded = await asyncio.to_thread(run_suite, scenarios=scenarios, targets={"demo": target})
        return direct, threaded

    direct, threaded = _within(30, lambda: asyncio.run(main()))
    assert direct.passed
    assert threaded.passed


def test_a_stream_still_streaming_at_its_timeout_is_closed_and_frees_its_slot(project: Path) -> None:
    # A sync stream that goes on past the timeout (a chunk every 20 ms): it is closed at its next chunk
    # after the deadline. Before, the worker kept collecting it (memory growing) and held the only slot,
    # so the other scenarios were cut off as "not started".
    closed = threading.Event()
    ends = threading.Event()

    def streams_on(request: TargetRequest) -> Iterator[str]:
        try:
            while not ends.wait(0.02):
                yield "chunk "
        finally:
            closed.set()

    options = SuiteOptions(timeout=0.5, concurrency=1)
    scenarios = [_scenario("streaming", "stream"), _scenario("s2"), _scenario("s3")]
    try:
        suite = _within(
            20,
            lambda: run_suite(
                scenarios=scenarios, targets={"stream": streams_on, "demo": _work}, options=options
            ),
        )
    finally:
        ends.set()
    statuses = _statuses(suite)
    assert statuses["streaming"] == ("error", "timed out after 0.5 s")
    assert statuses["s2"][0] == statuses["s3"][0] == "passed"
    assert suite.run.cut_off is None
    assert closed.wait(5)  # the generator was closed (its finally ran), not left running
