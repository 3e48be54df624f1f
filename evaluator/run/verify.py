"""`run --verify-langfuse`: read every trace of a run back from Langfuse and check that its stored form
gives the same verdict as the spans captured in-process (a delivery check, not a second opinion).

Langfuse stores times in milliseconds, so calls made within the same millisecond come back with equal
start times. Both sides order such calls the same way (the trace tree reads every source at millisecond
resolution and breaks ties alike: `trace/conventions/_tree.py`), so they give the same verdict. A
trajectory (its tool path, or its flow: the first non-entry agent) that still differs only inside such
a tie (an in-process time a fraction of a microsecond from a millisecond's end, which a server may
round otherwise) is reported as *unsure*, not as different. The stored trace is judged with
the result's own metrics.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.errors import EvaluatorError, LangfuseUnavailableError, TraceError
from evaluator.metrics import MetricSet
from evaluator.results import ScenarioResult, evaluate
from evaluator.scenarios import Scenario
from evaluator.trace import DEFAULT_RULES, DetailSource, Trace, TraceReader, TraceRules, read_trace

__all__ = ["VerifyReport", "verify_run"]


@dataclass(frozen=True, kw_only=True)
class VerifyReport:
    matched: list[str] = field(default_factory=list)
    differ: dict[str, str] = field(default_factory=dict)  # scenario id -> what differs
    missing: dict[str, str] = field(default_factory=dict)  # scenario id -> why it could not be checked
    ambiguous: dict[str, str] = field(default_factory=dict)  # scenario id -> why the order is unsure
    # Of `missing`: those verification does not cover yet (dialogues), said but not a failure
    not_covered: set[str] = field(default_factory=set)
    # Of `missing`: those not read back because Langfuse did not answer, or the deadline passed first:
    # not known to be missing from Langfuse (said as "not verified"; still not verified, so not ok)
    not_read: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        """Nothing differs, and every trace verification covers was read back."""
        return not self.differ and set(self.missing) <= self.not_covered


def _verdict(result: ScenarioResult) -> dict[str, object]:
    """What must come out the same from the stored trace: the status and every verdict, as its metric
    sees it there (`stored_view`). (The answer is the target's output either way, so its checks come
    out the same by construction.)"""
    verdicts: dict[str, object] = {"status": result.status}
    for key, verdict in result.verdicts.items():
        metric = result.metrics.get(key)
        field = verdict.to_json()
        verdicts[key] = metric.stored_view(field) if metric is not None else field
    return verdicts


def metrics_order_free(metrics: MetricSet, key: str, verdicts: Mapping[str, object]) -> object:
    """What the metric `key` says must match whatever the order of calls (its tool path, as a set)."""
    field, metric = verdicts.get(key), metrics.get(key)
    return metric.order_free(field) if metric is not None and isinstance(field, Mapping) else field


def _tied_starts(trace: Trace) -> bool:
    """Whether tools, or agents, share a start time (their stored order is unknowable)."""
    for calls in (trace.tools, trace.agents):
        starts = Counter(c.start_time for c in calls)
        if any(count > 1 for count in starts.values()):
            return True
    return False


def verify_run(
    reader: TraceReader,
    scenarios: Mapping[str, Scenario],
    results: Sequence[ScenarioResult],
    *,
    deadline_seconds: float,
    rules: Mapping[str, TraceRules] | None = None,
) -> VerifyReport:
    """Compare each finished result with the verdict on its trace as Langfuse stores it, within one
    deadline for the whole run (traces not reached by then are reported missing). Errored runs are
    skipped: they have no verdict to compare; dialogues are reported not checked (not covered yet: said,
    but no failure of the run's)."""
    report = VerifyReport()
    started = time.monotonic()
    for result in results:
        if result.status == "error":
            continue
        if result.dialogue is not None:
            report.missing[result.scenario_id] = "not checked: a dialogue (its turns are not verified yet)"
            report.not_covered.add(result.scenario_id)
            continue
        remaining = deadline_seconds - (time.monotonic() - started)
        if remaining <= 0:
            report.missing[result.scenario_id] = f"not checked: the {deadline_seconds:g} s deadline passed"
            report.not_read.add(result.scenario_id)
            continue
        try:
            scenario = scenarios[result.scenario_id]
            read = read_trace(
                reader,
                result.trace_id,
                deadline_seconds=remaining,
                expected_observations=result.observation_count,
                rules=(rules or {}).get(scenario.target, DEFAULT_RULES),
            )
        except EvaluatorError as exc:
            report.missing[result.scenario_id] = str(exc)
            if isinstance(exc, LangfuseUnavailableError) or (isinstance(exc, TraceError) and exc.unanswered):
                report.not_read.add(result.scenario_id)
            continue
        _compare(report, scenarios[result.scenario_id], result, read.trace, read.detail)
    return report


def _compare(
    report: VerifyReport,
    scenario: Scenario,
    result: ScenarioResult,
    stored: Trace,
    detail: DetailSource | None = None,
) -> None:
    metrics = result.metrics
    again = evaluate(
        scenario,
        stored,
        judge_status=result.judge_status,
        output=result.output,
        metrics=metrics,
        detail=detail,
    )
    local, remote = _verdict(result), _verdict(again)
    if local == remote:
        report.matched.append(result.scenario_id)
        return
    changed = [key for key in local if local.get(key) != remote.get(key)]
    ordered = [key for key in changed if (m := metrics.get(key)) is not None and m.order_sensitive]
    same_calls = all(
        metrics_order_free(metrics, key, local) == metrics_order_free(metrics, key, remote) for key in ordered
    )
    if ordered and set(changed) <= {"status", *ordered} and same_calls and _tied_starts(stored):
        report.ambiguous[result.scenario_id] = (
            "the same tools and agents, but some share a start time in Langfuse, so their stored order "
            "(and the flow) is unsure"
        )
        return
    report.differ[result.scenario_id] = (
        f"{', '.join(changed)} differ ({stored.observation_count} of {result.observation_count} observations "
        "stored)"
    )
