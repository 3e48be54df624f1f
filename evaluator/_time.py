"""Clock helpers: UTC timestamps as the store and Langfuse keep them, deadlines that many steps share, and
work waited for within a bound."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime


def utc_now() -> str:
    """Now, ISO 8601 in UTC with milliseconds: '2026-11-23T05:12:09.123Z'."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Deadline:
    """A point in time several steps share: each asks how long it may still take, so the steps together
    end by the deadline, however the time is spread among them."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self._ends - time.monotonic())

    @property
    def passed(self) -> bool:
        return self.remaining() <= 0

    def end_by(self, other: Deadline) -> None:
        """Come no later than `other` (a step begun before a shared deadline existed joins it)."""
        self._ends = min(self._ends, other._ends)

    def cap(self, seconds: float) -> float:
        """`seconds`, or less when the deadline comes first."""
        return min(seconds, self.remaining())


def bounded(work: Callable[[], object], timeout_seconds: float) -> bool:
    """Run `work()` in a daemon thread and wait at most `timeout_seconds`; False if it is still running.
    (A daemon thread cannot keep the process alive, so a hung service, Langfuse say, cannot hold the
    evaluator.)"""
    worker = threading.Thread(target=work, daemon=True, name="langfuse-bounded")
    worker.start()
    worker.join(timeout_seconds)
    return not worker.is_alive()
