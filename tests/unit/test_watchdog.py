"""The watchdog: deadlines fire in order from its one thread, a cancelled one never fires and lets go
of what it held at once, one failing callback does not stop the next, and closing drops the rest."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable

from evaluator.run._watchdog import Watchdog


class _Work:
    """Something a deadline callback holds (an attempt, in the pipeline)."""


def _holding(work: _Work, fired: list[str]) -> Callable[[], None]:
    return lambda: fired.append(f"late {work}")


def test_deadlines_fire_in_order_and_a_failing_one_does_not_stop_the_next() -> None:
    watchdog = Watchdog()
    fired: list[str] = []
    done = threading.Event()

    def fail() -> None:
        fired.append("fail")
        raise RuntimeError("boom")

    def last() -> None:
        fired.append("last")
        done.set()

    watchdog.at(0.10, last)
    watchdog.at(0.02, fail)
    watchdog.at(0.05, lambda: fired.append("second"))
    assert done.wait(5)
    watchdog.close()
    assert fired == ["fail", "second", "last"]


def test_a_cancelled_deadline_never_fires_and_lets_go_of_its_callback_at_once() -> None:
    watchdog = Watchdog()
    fired: list[str] = []
    work = _Work()
    alive = weakref.ref(work)
    key = watchdog.at(0.05, _holding(work, fired))
    done = threading.Event()
    watchdog.at(0.15, done.set)
    watchdog.cancel(key)
    del work
    gc.collect()
    assert alive() is None  # released by cancel(), not kept until its deadline
    assert done.wait(5)
    watchdog.close()
    assert fired == []


def test_closing_drops_the_deadlines_not_reached() -> None:
    watchdog = Watchdog()
    fired: list[str] = []
    watchdog.at(0.05, lambda: fired.append("too late"))
    watchdog.close()
    threading.Event().wait(0.1)
    assert fired == [] and not watchdog._thread.is_alive()
