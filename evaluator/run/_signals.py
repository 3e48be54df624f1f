"""Stopping a run on a signal: SIGINT (Ctrl-C) and SIGTERM both ask the run to stop, so it stops
starting scenarios, stores what finished and delivers within its deadline; a second signal exits at
once (status 128 + its number) with the store consistent: committed transactions stand, and SQLite
rolls back one that was open."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """Within the block, the first SIGINT or SIGTERM sets `requested` and names itself in `received`.
    Outside the main thread (where Python allows no handlers) nothing is installed."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.received: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._first) for sig in _SIGNALS}
        return self

    def __exit__(self, *exc_info: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _first(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum)
        for sig in _SIGNALS:
            signal.signal(sig, _exit_at_once)
        self.requested.set()


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(128 + signum)
