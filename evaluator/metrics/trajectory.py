"""Trajectory scores: how the actual tool path compares with the expected one (four modes).

From seeds/evaluation-and-feedback-spec.md (Scoring), with P the expected ordered tool path, Q the actual
one (TOOL observations in start order, repeats kept) and F the optional expected flow:

- partial_path  = length of the common prefix of P and Q / len(P)   ("correct until the first error")
- full_path     = 1.0 if Q == P else 0.0
- path_nodes    = size of the multiset intersection of P and Q / len(P)   (order ignored)
- full_workflow = 1.0 if full_path == 1.0 and the flow equals F (or F is not given) else 0.0

An empty P scores 1.0 in every mode when Q is empty too, else 0.0 (calling tools when none were
expected is wrong in every mode). Extra tools after a matching prefix lower full_path, not partial_path
or path_nodes: those measure how much of P was achieved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
    Verdict,
    number,
    number_at,
)
from evaluator.scenarios import TrajectorySpec
from evaluator.trace import Trace

__all__ = ["TrajectoryMetric", "TrajectoryScore", "score_paths", "score_trajectory"]

MODES = ("partial_path", "full_path", "path_nodes", "full_workflow")


@dataclass(frozen=True, kw_only=True)
class TrajectoryScore:
    expected: tuple[str, ...]
    actual: tuple[str, ...]
    expected_flow: str | None
    actual_flow: str | None
    partial_path: float
    full_path: float
    path_nodes: float
    full_workflow: float

    @property
    def passed(self) -> bool:
        """The seed's default mode, full workflow (the strictest), decides pass or fail."""
        return self.full_workflow == 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "expected": list(self.expected),
            "actual": list(self.actual),
            "flow": {"expected": self.expected_flow, "actual": self.actual_flow},
            "partial_path": self.partial_path,
            "full_path": self.full_path,
            "path_nodes": self.path_nodes,
            "full_workflow": self.full_workflow,
        }

    def scores(self) -> list[ScoreValue]:
        comment = (
            f"expected {list(self.expected)}, actual {list(self.actual)}; flow expected "
            f"{self.expected_flow!r}, actual {self.actual_flow!r}"
        )
        return [
            ScoreValue(name=f"trajectory_{mode}", value=getattr(self, mode), comment=comment)
            for mode in MODES
        ]

    def problems(self) -> list[str]:
        if self.passed:
            return []
        found = []
        if self.expected_flow is not None and self.actual_flow != self.expected_flow:
            found.append(f"flow {self.actual_flow} (expected {self.expected_flow})")
        if self.full_path != 1.0:
            found.append(f"path {' > '.join(self.actual) or '(none)'}")
        return found


def score_paths(
    expected: Sequence[str],
    actual: Sequence[str],
    *,
    expected_flow: str | None = None,
    actual_flow: str | None = None,
) -> TrajectoryScore:
    p, q = tuple(expected), tuple(actual)
    if not p:
        partial = full = nodes = 1.0 if not q else 0.0
    else:
        prefix = next((i for i, (a, b) in enumerate(zip(p, q, strict=False)) if a != b), min(len(p), len(q)))
        partial = prefix / len(p)
        full = 1.0 if q == p else 0.0
        nodes = sum((Counter(p) & Counter(q)).values()) / len(p)
    flow_ok = expected_flow is None or expected_flow == actual_flow
    return TrajectoryScore(
        expected=p,
        actual=q,
        expected_flow=expected_flow,
        actual_flow=actual_flow,
        partial_path=partial,
        full_path=full,
        path_nodes=nodes,
        full_workflow=1.0 if full == 1.0 and flow_ok else 0.0,
    )


def score_trajectory(spec: TrajectorySpec, trace: Trace, named: Collection[str] = ()) -> TrajectoryScore:
    """`named`: tool names the scenario mentions; hand-offs through those tools are in the path."""
    actual = trace.tool_path_naming({*spec.tools, *named})
    return score_paths(spec.tools, actual, expected_flow=spec.flow, actual_flow=trace.flow)


_PREFIX = "trajectory_"


class TrajectoryMetric(MetricBase):
    """The four trajectory modes, for scenarios that give `expected.trajectory`; its figures are each
    mode's mean (`trajectory_<mode>`), the full-workflow one gated by compare. Its verdict depends on
    the order of the calls."""

    key = "trajectory"
    order_sensitive = True
    definitions = (
        ScoreDefinition(
            name="trajectory_partial_path",
            data_type="NUMERIC",
            description="Expected tools matched in order until the first mismatch / expected length",
        ),
        ScoreDefinition(
            name="trajectory_full_path",
            data_type="NUMERIC",
            description="1 when the tool path equals the expected path exactly, else 0",
        ),
        ScoreDefinition(
            name="trajectory_path_nodes",
            data_type="NUMERIC",
            description="Expected tools present regardless of order (multiset) / expected length",
        ),
        ScoreDefinition(
            name="trajectory_full_workflow",
            data_type="NUMERIC",
            description="1 when the full path and the flow both match, else 0 (the strictest mode)",
        ),
    )
    figures = (
        Figure(name="trajectory_partial_path", value=number_at("trajectory", "partial_path"), rate=True),
        Figure(name="trajectory_full_path", value=number_at("trajectory", "full_path"), rate=True),
        Figure(name="trajectory_path_nodes", value=number_at("trajectory", "path_nodes"), rate=True),
        Figure(
            name="trajectory_full_workflow",
            value=number_at("trajectory", "full_workflow"),
            rate=True,
            label="full wf",
            chart="Tool path and flow exactly as expected (full workflow)",
            delta=True,
            gate=Gate(label="full-workflow trajectory mean", threshold=3.0, setting="full_workflow_drop"),
        ),
    )

    def passed_in(self, field: Mapping[str, Any]) -> bool | None:
        full = number(field.get("full_workflow"))
        return None if full is None else full == 1.0

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        modes = {
            name.removeprefix(_PREFIX): value
            for name, score in scores.items()
            if name.startswith(_PREFIX) and (value := number(score.get("value"))) is not None
        }
        return modes or None

    def cell(self, verdict: Verdict) -> str:
        t = verdict.to_json()
        partial, full, nodes, workflow = (
            t["partial_path"],
            t["full_path"],
            t["path_nodes"],
            t["full_workflow"],
        )
        return f"{partial:.2f} / {full:.0f} / {nodes:.2f} / {workflow:.0f}"

    def column(self) -> str:
        return "trajectory\npartial / full / nodes / workflow"

    def order_free(self, field: Mapping[str, Any]) -> object:
        return sorted(field.get("actual") or ())

    def evaluate(self, context: MetricContext) -> TrajectoryScore | None:
        expected = context.scenario.expected
        spec = expected.trajectory
        if spec is None:
            return None
        tools = expected.tools
        return score_trajectory(spec, context.trace, {*tools.include, *tools.exclude, *tools.allow})
