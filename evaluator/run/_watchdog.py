"""One thread that fires callbacks at deadlines: how a sync target that runs in its worker thread is
timed out without a thread of its own per call. Python cannot stop a thread, so the callback reports
the scenario as timed out at its deadline while the target keeps its worker (and so its slot) until it
really returns."""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

_log = logging.getLogger(__name__)


class Watchdog:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []  # (deadline, key), earliest first
        self._pending: dict[int, Callable[[], None]] = {}  # key -> what fires; gone once cancelled
        self._keys = itertools.count()
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._watch, daemon=True, name="evaluator-watchdog")
        self._thread.start()

    def at(self, seconds: float, fire: Callable[[], None]) -> int:
        """Call `fire()` after `seconds` (from the watchdog's thread; `fire` must decide itself whether
        the work it watches has ended meanwhile), unless `cancel`led first. Returns the key to cancel."""
        when = time.monotonic() + seconds
        with self._wake:
            key = next(self._keys)
            earliest = not self._heap or when < self._heap[0][0]
            heapq.heappush(self._heap, (when, key))
            self._pending[key] = fire
            if earliest:  # the watchdog sleeps until the earliest deadline: wake it only to move that
                self._wake.notify()
        return key

    def cancel(self, key: int) -> None:
        """The work ended in time: `fire` is dropped now (with all it holds), not at its deadline."""
        with self._wake:
            self._pending.pop(key, None)

    def close(self) -> None:
        """Stop watching; deadlines not reached yet never fire."""
        with self._wake:
            self._closed = True
            self._pending.clear()
            self._wake.notify()
        self._thread.join()

    def _watch(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (not self._heap or self._heap[0][0] > time.monotonic()):
                    self._wake.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                if self._closed:
                    return
                _, key = heapq.heappop(self._heap)
                fire = self._pending.pop(key, None)
            if fire is None:  # cancelled
                continue
            try:
                fire()
            except Exception:  # noqa: BLE001 - one deadline's failure must not stop the ones after it
                _log.exception("a timeout could not be handled")
