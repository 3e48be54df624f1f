"""The garbage collector during a run: what was alive when the run began (the interpreter, the imported
libraries, the team's modules: over 100,000 objects, none of them garbage) is left out of its scans
until the run ends.

Without this, each full collection during a run walks all of it again: about 0.1 ms per scenario at
1,000 scenarios, measured by benchmarks/bench_overhead.py. Objects created during the run are
collected as usual. Runs may nest or overlap in threads: the first to start freezes, the last to end
unfreezes. A process that froze objects itself (`gc.freeze()` before forking workers, say) is left as
it is.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Freezer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0  # runs under way
        self._ours = False  # the objects frozen now were frozen by the first of them

    @contextmanager
    def during_run(self) -> Iterator[None]:
        with self._lock:
            if self._runs == 0:
                self._ours = gc.get_freeze_count() == 0
                if self._ours:
                    gc.freeze()
            self._runs += 1
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1
                if self._runs == 0 and self._ours:
                    gc.unfreeze()
                    self._ours = False


earlier_objects_frozen = _Freezer().during_run
