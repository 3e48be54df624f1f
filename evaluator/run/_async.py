"""One long-lived event loop for a run, in its own daemon thread: async targets' tasks (so a timeout
really cancels the target's task, instead of abandoning a whole `asyncio.run` in a thread of its own)
and the judge stage's tasks."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

_UNWIND_SECONDS = 1.0  # at close, for the tasks targets left behind to end once cancelled


class EventLoopThread:
    """Runs coroutines on one event loop; `submit` returns a future the caller waits on."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._targets: set[asyncio.Task[object]] = set()  # the targets' own tasks not ended yet (loop thread)
        self._spawned: dict[str, set[asyncio.Task[None]]] = {}  # the run's own tasks (`spawn`), by group
        self._thread = threading.Thread(target=self._run, daemon=True, name="evaluator-async")
        self._thread.start()

    def _run(self) -> None:
        self._loop.run_forever()
        self._loop.close()

    def submit(self, coroutine: Coroutine[Any, Any, object], context: contextvars.Context) -> AsyncCall:
        """Start `coroutine` as a task running in `context` (the caller's: its current span)."""
        call = AsyncCall(self._loop)

        def start() -> None:
            task = self._loop.create_task(coroutine, context=context)
            self._targets.add(task)
            task.add_done_callback(self._targets.discard)
            call.attach(task)

        self._loop.call_soon_threadsafe(start)
        return call

    def spawn(
        self, coroutine: Coroutine[Any, Any, None], group: str, on_done: Callable[[], None] | None = None
    ) -> None:
        """Start `coroutine` as a task of the run's own (from any thread), in `group` (see
        `cancel_spawned`); it reports its own outcome; `on_done` is called once it has ended, however
        (cancelled before its first step included). Tasks still running at `close` are cancelled."""

        def start() -> None:
            task = self._loop.create_task(coroutine)
            tasks = self._spawned.setdefault(group, set())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            if on_done is not None:
                task.add_done_callback(lambda _: on_done())

        self._loop.call_soon_threadsafe(start)

    def cancel_spawned(self, group: str) -> None:
        """Cancel the tasks of `group` that have not ended (from any thread)."""

        def cancel() -> None:
            for task in list(self._spawned.get(group, ())):
                task.cancel()

        self._loop.call_soon_threadsafe(cancel)

    def adopt(self, task: asyncio.Task[object]) -> None:
        """Count a target's task started on the loop (in the loop's thread) as `submit`'s are: `close`
        waits for it to end."""
        self._targets.add(task)
        task.add_done_callback(self._targets.discard)

    def run(self, coroutine: Coroutine[Any, Any, object], timeout: float) -> None:
        """Run `coroutine` on the loop and wait for it, at most `timeout` seconds (from another thread).
        Its failure is raised here; past the timeout it is cancelled."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            future.result(timeout)
        except TimeoutError:
            future.cancel()

    def close(self, timeout: float = 1.0) -> None:
        """Stop the loop once the targets' tasks have ended, waiting up to `timeout` seconds for that.
        A target still running (one that goes on after its cancellation) keeps the loop, as a hung sync
        target keeps its worker: abandoned, it would leave its worker waiting for it for ever. Tasks
        the targets left behind (a heartbeat, say) are cancelled then: nothing waits for them."""
        asyncio.run_coroutine_threadsafe(self._stop_when_idle(), self._loop)
        self._thread.join(timeout)

    async def _stop_when_idle(self) -> None:
        await asyncio.gather(*self._targets, return_exceptions=True)
        left = asyncio.all_tasks() - {asyncio.current_task()}
        for task in left:
            task.cancel()
        if left:  # a moment to unwind; one that will not is dropped with the loop
            await asyncio.wait(left, timeout=_UNWIND_SECONDS)
        self._loop.stop()


class AsyncCall:
    """A target's task on the shared loop: its outcome, and cancellation from another thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.outcome: Future[object] = Future()
        self._task: asyncio.Task[object] | None = None
        self.ended = threading.Event()  # the task has really finished (returned, raised or cancelled)

    def attach(self, task: asyncio.Task[object]) -> None:
        self._task = task
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[object]) -> None:
        if task.cancelled():
            self.outcome.cancel()
        elif (exc := task.exception()) is not None:
            self.outcome.set_exception(exc)
        else:
            self.outcome.set_result(task.result())
        self.ended.set()

    def cancel(self) -> None:
        """Ask the task to stop; `ended` is set once it has."""

        def cancel() -> None:
            if self._task is not None:
                self._task.cancel()

        self._loop.call_soon_threadsafe(cancel)
