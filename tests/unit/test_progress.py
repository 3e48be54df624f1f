"""Progress where no bar can be drawn (a CI log): a line at the start, at most one per interval, the end."""

import io

import pytest
from rich.console import Console

from evaluator.reports import ProgressLines
from evaluator.reports import console as console_module


def test_lines_at_the_start_at_most_one_per_interval_and_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(console_module.time, "monotonic", lambda: now[0])
    log = io.StringIO()
    progress = ProgressLines(Console(file=log, width=80), every=10.0)
    progress.start(50)
    for _ in range(20):  # 20 results in 4 s: no line
        now[0] += 0.2
        progress.advance()
    now[0] += 8.0
    progress.advance()  # 12 s after the last line
    now[0] += 1.0
    progress.advance()
    progress.stop()  # stopped early (a signal): the count it reached
    assert log.getvalue().splitlines() == [
        "scenarios: 0/50 (0:00:00)",
        "scenarios: 21/50 (0:00:12)",
        "scenarios: 22/50 (0:00:13)",
    ]
    progress.stop()  # nothing new to say
    assert len(log.getvalue().splitlines()) == 3


def test_a_stop_before_the_start_says_nothing() -> None:
    log = io.StringIO()
    ProgressLines(Console(file=log)).stop()
    assert log.getvalue() == ""
