"""How long the SDK's client for a key lives once a run is over.

The SDK keeps one client (its resource manager) per public key for the whole process, and one that was
shut down stays shut down: every later `Langfuse()` or `get_client()` with that key gets it back, and
drops what it is given ("Score dropped: Langfuse client has been shut down"). So a run shuts the SDK
down at its end only when the process ends with it (a command: `evaluator run`, inside `one_command()`).
Anywhere else (a script, a notebook, a test session running several suites) the run flushes and leaves
the client running for the team's own code, and the client is shut down at the process's exit, waiting
at most the bound it was left with: the SDK's own exit hook flushes without one.

The exit hook cannot start the threads that bound each shutdown: from Python 3.12 the interpreter is
finalizing when exit hooks run, and `Thread.start()` raises "can't create new thread at interpreter
shutdown" (3.12.1). So a thread for each client to be shut down at exit is started beforehand, when the
client is left running, and waits for its work.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from evaluator._time import bounded

if TYPE_CHECKING:
    from langfuse import Langfuse

__all__ = ["in_command", "one_command", "shut_down_at_exit", "shut_down_now"]

_lock = threading.Lock()
_commands = 0  # nesting depth of one_command()
_at_exit: dict[str, tuple[Langfuse, float]] = {}  # public key -> (client, seconds to wait at exit)
# Threads started ahead for the exit hook, each running one work put here; never fewer than _at_exit's
# clients (the most clients left running at once).
_standby: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_standby_threads = 0


@contextmanager
def one_command() -> Iterator[None]:
    """Within: the process ends when this work does (the console script), so a run shuts the SDK down
    at its end, within the run's own deadline, and nothing is left to wait for at exit."""
    global _commands  # noqa: PLW0603 - one flag for the process: the run's end may be on any thread
    with _lock:
        _commands += 1
    try:
        yield
    finally:
        with _lock:
            _commands -= 1


def in_command() -> bool:
    with _lock:
        return _commands > 0


def shut_down_at_exit(public_key: str, client: Langfuse, seconds: float) -> None:
    """Shut `client` down when the process exits, waiting at most `seconds` (the last bound given for
    the key wins). The exit hook is registered again each time, so it comes after the SDK's own hook of
    every client so far (exit hooks run last first) and runs before them: the SDK's shutdown takes its
    own hook off, and a Langfuse that hangs cannot hold the exit."""
    global _standby_threads  # noqa: PLW0603 - counts the threads started for the process's exit
    with _lock:
        _at_exit[public_key] = (client, seconds)
        while _standby_threads < len(_at_exit):
            threading.Thread(
                target=_run_one_standby_work, daemon=True, name="langfuse-shutdown-at-exit"
            ).start()
            _standby_threads += 1
        atexit.unregister(_shut_down_all)
        atexit.register(_shut_down_all)


def shut_down_now(public_key: str, client: Langfuse, seconds: float) -> bool:
    """Shut `client` down now, waiting at most `seconds`; nothing is left for the exit. False when it
    did not finish in time (its thread cannot keep the process alive)."""
    with _lock:
        _at_exit.pop(public_key, None)
    return bounded(client.shutdown, seconds)


def _run_one_standby_work() -> None:
    _standby.get()()  # a daemon thread: one that is still waiting, or hung, does not hold the exit


def _shut_down_all() -> None:
    """Each client shut down on a thread of its own (side by side: many keys), waited for at most its
    own bound from now."""
    with _lock:
        clients = list(_at_exit.values())
        _at_exit.clear()
    start = time.monotonic()
    waits = []
    for client, seconds in clients:
        finished = threading.Event()
        _standby.put(_then_set(client.shutdown, finished))
        waits.append((finished, seconds))
    for finished, seconds in waits:
        finished.wait(max(0.0, start + seconds - time.monotonic()))


def _then_set(work: Callable[[], object], finished: threading.Event) -> Callable[[], None]:
    def run() -> None:
        try:
            work()
        finally:
            finished.set()

    return run
