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
_TELL_WAIT_SECONDS = 2.0  # leaving the block: the note comes before what follows, unless it hangs


class StopSignals:
    """Within the block, the first SIGINT or SIGTERM sets `requested`, names itself in `received` and
    is told to `on_first` (what it raises is dropped). `on_first` runs in a thread of its own, not in
    the handler: the handler interrupts the main thread wherever it is, perhaps halfway through
    printing a line under a console's reentrant lock, which a note printed from the handler would
    split; from its own thread the note waits for that line. Leaving the block waits briefly for it.
    A second signal writes `last_words` to stderr and exits. Outside the main thread (where Python
    allows no handlers) nothing is installed."""

    def __init__(
        self, on_first: Callable[[signal.Signals], None] = lambda _: None, last_words: str = ""
    ) -> None:
        self.requested = threading.Event()
        self.received: signal.Signals | None = None
        self._on_first = on_first
        self._last_words = last_words.encode()
        self._previous: dict[signal.Signals, Any] = {}
        self._telling: threading.Thread | None = None

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._first) for sig in _SIGNALS}
        return self

    def __exit__(self, *exc_info: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self.told(_TELL_WAIT_SECONDS)

    def told(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for `on_first` to have returned (at once when no signal came)."""
        if self._telling is not None:
            self._telling.join(timeout)

    def _first(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum)
        for sig in _SIGNALS:
            signal.signal(sig, self._second)
        self.requested.set()
        self._telling = threading.Thread(
            target=self._tell, args=(self.received,), daemon=True, name="evaluator-stop-notice"
        )
        self._telling.start()

    def _tell(self, received: signal.Signals) -> None:
        with contextlib.suppress(Exception):  # a note that cannot be printed must not stop the run
            self._on_first(received)

    def _second(self, signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):  # one write, no lock: whatever the main thread was doing
            os.write(2, b"\n" + self._last_words)
        os._exit(128 + signum)
