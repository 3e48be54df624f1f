"""`run --verify-langfuse`: read every trace of a run back from Langfuse and check that its stored form
gives the same verdict as the spans captured in-process (a delivery check, not a second opinion)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.errors import EvaluatorError
from evaluator.evaluation import evaluate
from evaluator.readback import TraceReader, read_trace
from evaluator.results import ScenarioResult
from evaluator.scenario import Scenario


@dataclass(frozen=True, kw_only=True)
class VerifyReport:
    matched: list[str] = field(default_factory=list)
    differ: dict[str, str] = field(default_factory=dict)  # scenario id -> what differs
    missing: dict[str, str] = field(default_factory=dict)  # scenario id -> why

    @property
    def ok(self) -> bool:
        return not self.differ and not self.missing


def _verdict(result: ScenarioResult) -> dict[str, object]:
    return {
        "status": result.status,
        "workflow": result.workflow.to_json() if result.workflow else None,
        "trajectory": result.trajectory.to_json() if result.trajectory else None,
    }


def verify_run(
    reader: TraceReader,
    scenarios: Mapping[str, Scenario],
    results: Sequence[ScenarioResult],
    *,
    deadline_seconds: float,
) -> VerifyReport:
    """Compare each finished result with the verdict on its trace as Langfuse stores it, within one
    deadline for the whole run. Errored runs are skipped: they have no verdict to compare."""
    report = VerifyReport()
    started = time.monotonic()
    for result in results:
        if result.status == "error":
            continue
        remaining = max(deadline_seconds - (time.monotonic() - started), 1.0)
        try:
            stored = read_trace(
                reader,
                result.trace_id,
                deadline_seconds=remaining,
                expected_observations=result.observation_count,
            )
        except EvaluatorError as exc:
            report.missing[result.scenario_id] = str(exc)
            continue
        again = evaluate(
            scenarios[result.scenario_id], stored, judge_status=result.judge_status, output=result.output
        )
        local, remote = _verdict(result), _verdict(again)
        if local == remote:
            report.matched.append(result.scenario_id)
        else:
            changed = [key for key in local if local[key] != remote[key]]
            report.differ[result.scenario_id] = (
                f"{', '.join(changed)} differ ({stored.observation_count} of {result.observation_count} "
                "observations stored)"
            )
    return report
