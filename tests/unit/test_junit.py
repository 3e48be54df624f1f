"""JUnit XML: well-formed, one test case per scenario, failures with their problems, errors apart."""

import xml.etree.ElementTree as ET

from evaluator.reports import junit_xml
from evaluator.results import JudgeStatus, RunInfo
from evaluator.results.evaluate import error_result, evaluator_error_result
from tests.builders import scenario
from tests.stored_runs import result

SKIPPED = JudgeStatus(status="skipped", reason="")


def test_counts_failures_and_errors() -> None:
    results = [
        result("ok", latency_ms=1500.0),
        result("broken", workflow=False),
        error_result(
            scenario(id="timeout"), "t", "timed out after 60 s", judge_status=SKIPPED, latency_ms=None
        ),
        evaluator_error_result(scenario(id="bug"), "t", RuntimeError("boom <&>"), judge_status=SKIPPED),
    ]
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00.000Z")
    root = ET.fromstring(junit_xml(run, results, {"ok": "research"}))  # noqa: S314 (our own output)
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "nightly", "4", "1", "2",
    )  # fmt: skip
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["ok", "broken", "timeout", "bug"]
    assert cases["ok"].get("time") == "1.500" and cases["ok"].get("classname") == "evaluator.research"
    assert list(cases["ok"]) == [cases["ok"].find("system-out")]
    failure = cases["broken"].find("failure")
    assert failure is not None and failure.get("message") == "missing a"
    error = cases["timeout"].find("error")
    assert error is not None and error.get("message") == "timed out after 60 s"
    bug = cases["bug"].find("error")
    assert bug is not None and bug.get("type") == "EvaluatorError" and "boom <&>" in (bug.text or "")


def test_characters_xml_cannot_hold_are_written_as_escapes() -> None:
    """A target's error with ANSI colours or a NUL (or a run name with one) kept the file parseable."""
    results = [
        error_result(
            scenario(id="coloured"),
            "t",
            "\x1b[31mred\x1b[0m <&> \x00 \x08",
            judge_status=SKIPPED,
            latency_ms=1.0,
        ),
        evaluator_error_result(scenario(id="bug"), "t", RuntimeError("bell \x07"), judge_status=SKIPPED),
    ]
    run = RunInfo(id="run-1", name="nightly \x1b", started_at="2026-11-22T10:00:00.000Z")
    root = ET.fromstring(junit_xml(run, results, {}))  # noqa: S314 (our own output)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "nightly \\x1b"
    errors = {case.get("name"): case.find("error") for case in suite.iter("testcase")}
    coloured, bug = errors["coloured"], errors["bug"]
    assert coloured is not None and coloured.get("message") == "\\x1b[31mred\\x1b[0m <&> \\x00 \\x08"
    assert coloured.text == coloured.get("message")
    assert bug is not None and "bell \\x07" in (bug.text or "")


def test_a_stopped_run_lists_every_selected_scenario_those_without_a_result_skipped_saying_why() -> None:
    """The first `started` scenarios were started (the summary's rule): one of them without a result
    was cut off while running; the rest never started. Each keeps its name and class name."""
    targets = {"a": "research", "b": "research", "c": "writer", "d": "writer", "e": "research"}
    run = RunInfo(
        id="run-1",
        name="nightly",
        started_at="2026-11-22T10:00:00.000Z",
        interrupted=True,
        signal="SIGTERM",
        started=3,
    )
    root = ET.fromstring(junit_xml(run, [result("a"), result("b", workflow=False)], targets))  # noqa: S314
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"), root.get("tests")) == (
        "5", "1", "3", "5",
    )  # fmt: skip
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert sorted(cases) == ["a", "b", "c", "d", "e"]
    assert {name: case.get("classname") for name, case in cases.items()} == {
        name: f"evaluator.{target}" for name, target in targets.items()
    }
    skipped = {name: case.find("skipped") for name, case in cases.items()}
    assert skipped["a"] is None and skipped["b"] is None
    assert {name: s.get("message") for name, s in skipped.items() if s is not None} == {
        "c": "cut off while running: the run was stopped by SIGTERM",
        "d": "never started: the run was stopped by SIGTERM",
        "e": "never started: the run was stopped by SIGTERM",
    }


def test_a_run_cut_off_by_hung_targets_skips_the_scenarios_never_started_saying_why() -> None:
    why = "1 scenarios were not started: all 1 target slots are held by targets that timed out"
    run = RunInfo(id="run-1", name="", started_at="2026-11-22T10:00:00.000Z", started=1, cut_off=why)
    hung = error_result(scenario(id="hung"), "t", "timed out", judge_status=SKIPPED, latency_ms=None)
    root = ET.fromstring(junit_xml(run, [hung], {"hung": "toy", "left": "toy"}))  # noqa: S314
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("errors"), suite.get("skipped")) == (
        "2", "1", "1",
    )  # fmt: skip
    left = suite.find("testcase[@name='left']/skipped")
    assert left is not None and left.get("message") == f"never started: the run was cut off ({why})"


def test_a_run_that_ran_to_its_end_has_nothing_skipped() -> None:
    """Even a signal that came once every scenario had finished leaves the run whole."""
    run = RunInfo(id="run-1", name="n", started_at="2026-11-22T10:00:00.000Z", signal="SIGTERM", started=1)
    root = ET.fromstring(junit_xml(run, [result("a")], {"a": "research"}))  # noqa: S314
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("skipped")) == ("1", "0")
    assert suite.find("testcase/skipped") is None


def test_a_result_the_store_did_not_take_says_so() -> None:
    """The store failed during the run: the results it did not take say so beside their trace."""
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00.000Z")
    document = junit_xml(run, [result("kept"), result("only-here")], {}, not_stored={"only-here"})
    root = ET.fromstring(document)  # noqa: S314 (our own output)
    said = {case.get("name"): case.findtext("system-out") or "" for case in root.iter("testcase")}
    assert "not in the local store" not in said["kept"]
    assert said["only-here"].endswith("\nnot in the local store: it failed during the run")


def test_characters_that_reorder_or_hide_text_are_written_as_escapes() -> None:
    """A CI page shows the file's names and messages: a right-to-left override in a target's error
    showed the rest of the line reversed, as in the terminal before."""
    results = [
        error_result(scenario(id="s"), "t", "failed: \u202etxt.exe", judge_status=SKIPPED, latency_ms=1.0)
    ]
    run = RunInfo(id="run-1", name="nightly\u200b", started_at="2026-11-22T10:00:00.000Z")
    root = ET.fromstring(junit_xml(run, results, {}))  # noqa: S314 (our own output)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "nightly\\u200b"
    error = next(suite.iter("testcase")).find("error")
    assert error is not None and error.get("message") == "failed: \\u202etxt.exe"
