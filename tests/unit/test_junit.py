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
