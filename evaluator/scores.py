"""Scores: the contract names of DESIGN.md, built from a result, with deterministic ids.

A score id is a UUID5 of (run id, trace id, name), and its timestamp is the result's finish time, frozen:
posting the same score again updates it in Langfuse instead of adding a second one.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.results import ScenarioResult

DataType = Literal["BOOLEAN", "NUMERIC"]
_NAMESPACE = uuid.UUID("6f1d3c1e-4d7b-5a7e-9b0f-2f4c8a1e5d10")

WORKFLOW_SCORES = ("workflow_pass", "workflow_agents_pass", "workflow_tools_pass")
TRAJECTORY_MODES = ("partial_path", "full_path", "path_nodes", "full_workflow")
QUALITY_METRICS = ("answer_quality", "factual_correctness", "completeness")


@dataclass(frozen=True, kw_only=True)
class ScoreDefinition:
    """What a score name means: Langfuse shows it with this type, range and description."""

    name: str
    data_type: DataType
    description: str


DEFINITIONS: tuple[ScoreDefinition, ...] = (
    ScoreDefinition(
        name="workflow_pass",
        data_type="BOOLEAN",
        description="All expected agents and tools called, none unexpected (comment: what failed)",
    ),
    ScoreDefinition(
        name="workflow_agents_pass",
        data_type="BOOLEAN",
        description="No agent missing, no unexpected agent (entry agents are always expected)",
    ),
    ScoreDefinition(
        name="workflow_tools_pass", data_type="BOOLEAN", description="No tool missing, no unexpected tool"
    ),
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
    ScoreDefinition(
        name="quality_answer_quality",
        data_type="NUMERIC",
        description="LLM judge: clear, well-structured, helpful (0-1)",
    ),
    ScoreDefinition(
        name="quality_factual_correctness",
        data_type="NUMERIC",
        description="LLM judge: supported by the sources, no hallucination (0-1)",
    ),
    ScoreDefinition(
        name="quality_completeness",
        data_type="NUMERIC",
        description="LLM judge: meets the scenario's expected answer criteria (0-1)",
    ),
)


@dataclass(frozen=True, kw_only=True)
class Score:
    id: str
    trace_id: str
    name: str
    value: float
    data_type: DataType
    comment: str | None
    timestamp: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def score_id(run_id: str, trace_id: str, name: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{run_id}/{trace_id}/{name}"))


def scores_for(result: ScenarioResult, *, run_id: str) -> list[Score]:
    """Every score a result yields. A run that raised or timed out yields only `workflow_pass` = 0, its
    comment the error (it never finished its workflow; leaving it out would flatter dashboards); nothing
    is scored that was not evaluated (no trajectory of an unfinished run, no skipped judge)."""
    metadata: dict[str, Any] = {
        "scenario_id": result.scenario_id,
        "run_id": run_id,
        "prompts": {name: use.version for name, use in result.prompts.items()},
    }
    values: list[tuple[str, float, DataType, str | None]] = []
    if result.status == "error":  # the run never finished its workflow: dashboards must see it fail
        values.append(("workflow_pass", 0.0, "BOOLEAN", f"error: {result.error}"))
    if result.workflow is not None:
        wf = result.workflow
        values += [
            ("workflow_pass", float(wf.passed), "BOOLEAN", wf.comment() or None),
            (
                "workflow_agents_pass",
                float(wf.agents.passed),
                "BOOLEAN",
                wf.agents.comment() or None,
            ),
            ("workflow_tools_pass", float(wf.tools.passed), "BOOLEAN", wf.tools.comment() or None),
        ]
    if result.trajectory is not None:
        tj = result.trajectory
        comment = (
            f"expected {list(tj.expected)}, actual {list(tj.actual)}; flow expected "
            f"{tj.expected_flow!r}, actual {tj.actual_flow!r}"
        )
        values += [
            (f"trajectory_{mode}", float(getattr(tj, mode)), "NUMERIC", comment) for mode in TRAJECTORY_MODES
        ]
    if result.quality is not None:
        judge_meta = {k: result.quality[k] for k in ("prompt", "model") if k in result.quality}
        metadata = {**metadata, "judge": judge_meta}
        values += [
            (
                f"quality_{metric}",
                float(result.quality[metric]),
                "NUMERIC",
                result.quality.get("reasoning"),
            )
            for metric in QUALITY_METRICS
        ]
    return [
        Score(
            id=score_id(run_id, result.trace_id, name),
            trace_id=result.trace_id,
            name=name,
            value=value,
            data_type=data_type,
            comment=comment,
            timestamp=result.finished_at,
            metadata=metadata,
        )
        for name, value, data_type, comment in values
    ]
