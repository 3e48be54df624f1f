"""The garbage collector during a run, tuned for a run's allocations and restored when the last run ends.

- What was alive when the run began (the interpreter, the imported libraries, the team's modules: over
  100,000 objects, none of them garbage) is left out of its scans. Without this, each full collection
  during a run walks all of it again: about 0.1 ms per scenario at 1,000 scenarios.
- The youngest generation is collected every `YOUNG_THRESHOLD` net allocations instead of Python's
  default 700. A 1,000-scenario run allocates about 100 containers per scenario; at 700 that is some 140
  young collections, most of whose survivors are promoted, so the older generations fill and are walked
  too. Under 64 threads each young collection costs over 1 ms (it touches objects all over the heap).
  Measured with gc callbacks in a 1,000-scenario run of benchmarks/bench_overhead.py: collection time
  0.11 -> 0.02 s embedded, 0.36 -> 0.04-0.07 s with export; cyclic garbage waits a little longer
  (a few thousand objects).

Objects created during the run are collected as usual. Runs may nest or overlap in threads: the first to
start tunes, the last to end restores. A process that froze objects itself (`gc.freeze()` before forking
workers, say) is left frozen; one that set a larger young threshold keeps it. Thresholds set while a run
is under way are replaced, when the last run ends, by the ones from before the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000


class _Tuner:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0  # runs under way
        self._froze = False  # the objects frozen now were frozen by the first of them
        self._thresholds = gc.get_threshold()  # the process's own, taken again as each first run starts

    @contextmanager
    def during_run(self) -> Iterator[None]:
        with self._lock:
            if self._runs == 0:
                self._start()
            self._runs += 1
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1
                if self._runs == 0:
                    self._end()

    def _start(self) -> None:
        self._froze = gc.get_freeze_count() == 0
        if self._froze:
            gc.freeze()
        young, *older = self._thresholds = gc.get_threshold()
        if 0 < young < YOUNG_THRESHOLD:  # 0: the process turned collection off; leave it so
            gc.set_threshold(YOUNG_THRESHOLD, *older)

    def _end(self) -> None:
        if self._froze:
            gc.unfreeze()
            self._froze = False
        gc.set_threshold(*self._thresholds)


collector_tuned_for_run = _Tuner().during_run
