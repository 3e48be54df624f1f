"""Console output in a CI log: progress where no bar can be drawn (a line at the start, at most one per
interval, the end), and no control characters of a target's error in the summary."""

import io
from dataclasses import replace

import pytest
from rich.console import Console

from evaluator.reports import ProgressLines, notice, print_summary, summary_table
from evaluator.reports import console as console_module
from evaluator.results import JudgeStatus, RunInfo
from evaluator.results.evaluate import error_result
from tests.builders import scenario

SKIPPED = JudgeStatus(status="skipped", reason="")


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


def test_a_target_error_with_control_characters_is_shown_as_escapes_in_the_summary() -> None:
    """Its ANSI colours (or a NUL) would be obeyed by a terminal and kept by a CI log, and misalign the
    table: the summary shows them as escapes."""
    failed = error_result(
        scenario(id="coloured"), "t", "\x1b[31mred\x1b[0m \x00 [/]", judge_status=SKIPPED, latency_ms=1.0
    )
    log = io.StringIO()
    Console(file=log, width=200).print(summary_table([failed]))
    assert "\\x1b[31mred\\x1b[0m \\x00 [/]" in log.getvalue()
    assert "\x1b" not in log.getvalue() and "\x00" not in log.getvalue()


def test_text_from_outside_in_the_run_s_lines_is_shown_as_escapes() -> None:
    """A judge endpoint's error page, a name from the trace in a warning and the run's name: each line
    of the summary that quotes them shows their control characters as escapes, never obeys them."""
    hostile = "\x1b[2J\x1b]0;title\x07[/]"
    result = replace(
        error_result(scenario(id="s1"), "t", "failed", judge_status=SKIPPED, latency_ms=1.0),
        judge_status=JudgeStatus(status="unscored", reason="the judges did not score"),
        judge_detail={"quality": {"status": "unscored", "reason": f"HTTP 502: {hostile}", "calls": 1}},
        warnings=(f'tool "search" is missing, and "Search{hostile}" ran',),
    )
    run = RunInfo(id="run-1", name=f"nightly{hostile}", started_at="2026-11-25T10:00:00Z")
    log = io.StringIO()
    console = Console(file=log, width=300)
    print_summary(console, run, [result], 1)
    notice(console, "error", f"Langfuse answered HTTP 500: {hostile}")
    text = log.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert text.count("\\x1b[2J\\x1b]0;title\\x07[/]") == 4, (
        text
    )  # the run, the warning, the reason, the notice
