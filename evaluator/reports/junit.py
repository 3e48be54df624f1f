"""JUnit XML for CI systems (`run --junit FILE`): one test suite per run, one test case per scenario.

A failed scenario is a `<failure>` whose message lists its problems (missing and unexpected agents and
tools, the tool path, missing answer text); a scenario that raised, timed out or hit an evaluator error
is an `<error>`. Test case time is the scenario's latency; the class name is `evaluator.<target>`, the
scenario's own, when known (CI systems group cases by it, and keep a case's history by it and its
name). Characters XML 1.0 does not allow (a target's error with ANSI colour codes, a NUL) are written
as their escapes (`\\x1b`): every XML parser reads the file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from evaluator.errors import ConfigError
from evaluator.results import RunInfo, ScenarioResult, totals

__all__ = ["junit_xml", "write_junit"]

# What XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and carriage return; surrogates;
# U+FFFE and U+FFFF. ElementTree writes them as they are, and a parser then refuses the whole file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """`text` with each character XML cannot hold written as its Python escape (ESC as `\\x1b`)."""
    return _NOT_XML.sub(lambda found: repr(found.group())[1:-1], text)


def junit_xml(run: RunInfo, results: Sequence[ScenarioResult], targets: Mapping[str, str]) -> str:
    """The document; `targets` maps scenario ids to their target names."""
    counts = totals(results)
    seconds = sum((r.latency_ms or 0.0) for r in results) / 1000
    suite = ET.Element(
        "testsuite",
        name=_xml_text(run.name or run.id),
        tests=str(counts["scenarios"]),
        failures=str(counts["failed"]),
        errors=str(counts["error"]),
        skipped="0",
        time=f"{seconds:.3f}",
        timestamp=run.started_at,
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="run_id", value=run.id)
    for result in results:
        _case(suite, result, targets.get(result.scenario_id, "scenarios"))
    root = ET.Element("testsuites", name="evaluator", tests=suite.get("tests", "0"))
    root.set("failures", suite.get("failures", "0"))
    root.set("errors", suite.get("errors", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(suite: ET.Element, result: ScenarioResult, target: str) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"evaluator.{target}",
        name=result.scenario_id,
        time=f"{(result.latency_ms or 0.0) / 1000:.3f}",
    )
    problems = result.problems()
    if result.status == "failed":
        failure = ET.SubElement(
            case, "failure", message=_xml_text("; ".join(problems) or "failed"), type="ScenarioFailed"
        )
        failure.text = _xml_text("\n".join(problems))
    elif result.status == "error":
        kind = "EvaluatorError" if result.evaluator_error is not None else "ScenarioError"
        error = ET.SubElement(case, "error", message=_xml_text(result.error or "error"), type=kind)
        error.text = _xml_text(
            result.evaluator_error.traceback if result.evaluator_error else result.error or ""
        )
    if result.trace_id:
        ET.SubElement(case, "system-out").text = f"trace {result.trace_id}"


def write_junit(path: Path, document: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--junit {path} cannot be written ({exc}). Fix: choose a writable path.") from None
