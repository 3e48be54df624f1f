"""The first SIGINT or SIGTERM asks a run to stop and is told at once; the handlers are restored after."""

from __future__ import annotations

import signal
import threading

from evaluator.run._signals import StopSignals


def test_the_first_signal_requests_the_stop_and_is_told() -> None:
    told: list[signal.Signals] = []
    previous = signal.getsignal(signal.SIGTERM)
    with StopSignals(on_first=told.append) as stop:
        signal.raise_signal(signal.SIGTERM)
        assert stop.requested.is_set() and stop.received is signal.SIGTERM
    assert told == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is previous


def test_what_telling_the_first_signal_raises_is_dropped() -> None:
    def fails(_: signal.Signals) -> None:
        raise RuntimeError("a notice that could not be printed")

    with StopSignals(on_first=fails) as stop:
        signal.raise_signal(signal.SIGINT)
    assert stop.requested.is_set() and stop.received is signal.SIGINT


def test_the_note_waits_for_the_line_the_signal_interrupted() -> None:
    console = threading.RLock()  # a console's lock is reentrant: the handler's thread could print inside
    printed: list[str] = []

    def note(_: signal.Signals) -> None:
        with console:
            printed.append("note")

    with StopSignals(on_first=note) as stop:
        with console:  # the main thread is printing a line when the signal comes
            signal.raise_signal(signal.SIGINT)
            printed.append("the line being printed")
        stop.told(timeout=5)
    assert printed == ["the line being printed", "note"]
