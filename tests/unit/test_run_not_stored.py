"""RunNotStoredError's message: what is in the store, what is only in the files, what to do."""

from pathlib import Path

from evaluator.errors import StoreError
from evaluator.results import RunInfo
from evaluator.run import RunNotStoredError, SuiteRun
from tests.stored_runs import result

CAUSE = StoreError("cannot write to the store x.db (the disk is full: database or disk is full).")


def _suite(count: int, expected: int) -> SuiteRun:
    run = RunInfo(id="run-1", name="run-1", started_at="2026-11-22T10:00:00.000Z", selected=expected)
    results = [result(f"s{i:02d}") for i in range(count)]
    return SuiteRun(run=run, results=results, expected=expected, store_path=Path("x.db"))


def test_the_end_not_stored_says_the_results_are_in_the_store() -> None:
    error = RunNotStoredError(_suite(2, 2), CAUSE, kept=["--output r.json"])
    assert str(error).startswith(
        "run run-1 is over and its results are in the store, in --output r.json, but"
    )
    assert error.not_stored == ()


def test_results_not_stored_are_named_with_where_they_are_and_the_fix() -> None:
    names = [f"s{i:02d}" for i in range(2, 14)]
    error = RunNotStoredError(_suite(14, 20), CAUSE, not_stored=names).kept_in("--junit j.xml")
    assert error.not_stored == tuple(names)
    assert str(error) == (
        "the store failed during run run-1: 2 of its 14 results are in the store, 12 are not (s02, s03, s04, "
        "s05, s06, s07, s08, s09, s10, s11 and 2 more) and are only in --junit j.xml; 6 scenarios have no "
        "result (none started after the failure); nor is the run's end (finish time and totals). No command "
        "loads results from a file into the store: once it can be written, run again the scenarios whose "
        f"results it does not have. {CAUSE}"
    )


def test_results_not_stored_and_in_no_file_say_so() -> None:
    error = RunNotStoredError(_suite(1, 1), CAUSE, not_stored=["s00"])
    assert (
        "0 of its 1 results are in the store, 1 are not (s00) and are in no file (--output FILE keeps"
        in str(error)
    )
    assert "have no result" not in str(error)


def test_a_run_stopped_by_a_signal_after_its_store_failed_does_not_say_its_results_are_stored() -> None:
    import io

    from rich.console import Console

    from evaluator.reports import print_summary

    run = RunInfo(
        id="run-1",
        name="run-1",
        started_at="2026-11-22T10:00:00.000Z",
        interrupted=True,
        signal="SIGTERM",
        started=3,
    )
    said: dict[int, str] = {}
    for not_stored in (0, 2):
        out = io.StringIO()
        print_summary(Console(file=out, width=200), run, [result("a"), result("b")], 4, not_stored=not_stored)
        said[not_stored] = out.getvalue()
    assert "Stopped by SIGTERM: 2 of 4 scenarios finished and are stored; 1 cut off while running" in said[0]
    assert (
        "Stopped by SIGTERM: 2 of 4 scenarios finished (2 not stored: the local store failed); 1 cut off "
        "while running" in said[2]
    )
