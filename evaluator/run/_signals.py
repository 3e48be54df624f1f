"""Stopping a run on a signal: SIGINT (Ctrl-C) and SIGTERM both ask the run to stop, so it stops
starting scenarios, stores what finished and delivers within its deadline; a second signal exits at
once (status 128 + its number) with the store consistent: committed transactions stand, and SQLite
rolls back one that was open."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """Within the block, the first SIGINT or SIGTERM sets `requested`, names itself in `received` and
    is told to `on_first` (which must not raise; what it raises is dropped). Outside the main thread
    (where Python allows no handlers) nothing is installed."""

    def __init__(self, on_first: Callable[[signal.Signals], None] = lambda _: None) -> None:
        self.requested = threading.Event()
        self.received: signal.Signals | None = None
        self._on_first = on_first
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
        with contextlib.suppress(Exception):  # a handler must not raise into the code it interrupted
            self._on_first(self.received)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(128 + signum)
