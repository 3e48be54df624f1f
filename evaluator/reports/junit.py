"""JUnit XML for CI systems (`run --junit FILE`): one test suite per run, one test case per scenario.

A failed scenario is a `<failure>` whose message lists its problems (missing and unexpected agents and
tools, the tool path, missing answer text); a scenario that raised, timed out or hit an evaluator error
is an `<error>`. Test case time is the scenario's latency; the class name is `evaluator.<target>`, the
scenario's own, when known (CI systems group cases by it, and keep a case's history by it and its
name). A run stopped early (by a signal, cut off by hung targets, or by its store failing) has a
`<skipped>` test case for each selected scenario without a result, saying why (cut off while running,
or never started), so CI sees it as not run rather than gone. A result the local store did not take
says so in its `<system-out>`. Characters XML 1.0 does not allow (a target's error with ANSI
colour codes, a NUL) are written as their escapes (`\\x1b`): every XML parser reads the file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence, Set
from pathlib import Path

from evaluator.errors import ConfigError
from evaluator.reports._printable import unhidden
from evaluator.results import RunInfo, ScenarioResult, totals
from evaluator.storage import write_whole

__all__ = ["junit_xml", "write_junit"]

# What XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and carriage return; surrogates;
# U+FFFE and U+FFFF. ElementTree writes them as they are, and a parser then refuses the whole file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """`text` with each character XML cannot hold written as its Python escape (ESC as `\\x1b`), and
    each that reorders or hides text too (`unhidden`: a CI page shows the file's names and messages)."""
    return unhidden(_NOT_XML.sub(lambda found: repr(found.group())[1:-1], text))


def junit_xml(
    run: RunInfo,
    results: Sequence[ScenarioResult],
    targets: Mapping[str, str],
    *,
    not_stored: Set[str] = frozenset(),
) -> str:
    """The document; `targets` maps the run's selected scenario ids, in their order, to their target
    names (a run stopped early: those without a result are skipped test cases); `not_stored`: the ids
    of the results the local store did not take (it failed during the run)."""
    counts = totals(results)
    unfinished = _unfinished(run, list(targets), {r.scenario_id for r in results})
    seconds = sum((r.latency_ms or 0.0) for r in results) / 1000
    suite = ET.Element(
        "testsuite",
        name=_xml_text(run.name or run.id),
        tests=str(counts["scenarios"] + len(unfinished)),
        failures=str(counts["failed"]),
        errors=str(counts["error"]),
        skipped=str(len(unfinished)),
        time=f"{seconds:.3f}",
        timestamp=run.started_at,
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="run_id", value=run.id)
    for result in results:
        _case(
            suite,
            result,
            targets.get(result.scenario_id, "scenarios"),
            stored=result.scenario_id not in not_stored,
        )
    for scenario_id, why in unfinished.items():
        case = ET.SubElement(
            suite, "testcase", classname=f"evaluator.{targets[scenario_id]}", name=scenario_id, time="0.000"
        )
        ET.SubElement(case, "skipped", message=_xml_text(why))
    root = ET.Element("testsuites", name="evaluator", tests=suite.get("tests", "0"))
    root.set("failures", suite.get("failures", "0"))
    root.set("errors", suite.get("errors", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _unfinished(run: RunInfo, selected: Sequence[str], finished: Set[str]) -> dict[str, str]:
    """Why each selected scenario without a result has none, in a run stopped early (none in a run
    that ran to its end). As the summary counts them: the pipeline starts scenarios in their order, so
    the first `run.started` were started (cut off while running), the others never started."""
    if not (run.interrupted or run.cut_off):
        return {}
    stopped = (
        f"the run was stopped by {run.signal or 'an interrupt'}"
        if run.interrupted
        else f"the run was cut off ({run.cut_off})"
    )
    return {
        scenario_id: f"{'cut off while running' if index < run.started else 'never started'}: {stopped}"
        for index, scenario_id in enumerate(selected)
        if scenario_id not in finished
    }


def _case(suite: ET.Element, result: ScenarioResult, target: str, *, stored: bool = True) -> None:
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
    said = [f"trace {result.trace_id}"] if result.trace_id else []
    if not stored:
        said.append("not in the local store: it failed during the run")
    if said:
        ET.SubElement(case, "system-out").text = "\n".join(said)


def write_junit(path: Path, document: str) -> None:
    try:
        write_whole(path, document)
    except OSError as exc:
        raise ConfigError(f"--junit {path} cannot be written ({exc}). Fix: choose a writable path.") from None
