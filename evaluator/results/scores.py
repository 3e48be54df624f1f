"""Scores: the contract names of DESIGN.md, built from a result's verdicts, with deterministic ids.

A score id is a UUID5 of (run id, trace id, name), and its timestamp is the result's finish time, frozen:
posting the same score again updates it in Langfuse instead of adding a second one.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluator.metrics import DataType, ScoreDefinition, ScoreValue, metric_definitions
from evaluator.results.model import ScenarioResult

__all__ = ["CORRECTNESS_CATEGORIES", "DEFINITIONS", "JUDGE_DEFINITIONS", "Score", "score_id", "scores_for"]

_NAMESPACE = uuid.UUID("6f1d3c1e-4d7b-5a7e-9b0f-2f4c8a1e5d10")
_NAMESPACE_BYTES = _NAMESPACE.bytes

CORRECTNESS_CATEGORIES = ("correct", "miss", "hallucination")
QUALITY_DEFINITIONS = (
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
CORRECTNESS_DEFINITION = ScoreDefinition(
    name="correctness",
    data_type="CATEGORICAL",
    description="Against the ground truth: correct (exact or judged), miss (I don't know), hallucination",
    categories=CORRECTNESS_CATEGORIES,
)
JUDGE_DEFINITIONS = (*QUALITY_DEFINITIONS, CORRECTNESS_DEFINITION)
DEFINITIONS: tuple[ScoreDefinition, ...] = (*metric_definitions(), *JUDGE_DEFINITIONS)
_TYPES: Mapping[str, DataType] = {d.name: d.data_type for d in DEFINITIONS}


@dataclass(frozen=True, kw_only=True)
class Score:
    """One score. `value` is a number, or for a CATEGORICAL score the category's name."""

    id: str
    trace_id: str
    name: str
    value: float | str
    data_type: DataType
    comment: str | None
    timestamp: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def score_id(run_id: str, trace_id: str, name: str) -> str:
    """`uuid.uuid5(_NAMESPACE, "run/trace/name")`, formatted straight from the SHA-1 digest (RFC 4122
    name-based ids: version 5, variant 10): a third of the uuid module's cost, on every score recorded."""
    name_bytes = f"{run_id}/{trace_id}/{name}".encode()
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name_bytes, usedforsecurity=False).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _values(result: ScenarioResult) -> list[ScoreValue]:
    if result.evaluator_error is not None:
        return []  # the evaluator failed, not the agent: nothing is scored against it
    if result.status == "error":  # the run never finished its workflow: dashboards must see it fail
        return [ScoreValue(name="workflow_pass", value=0.0, comment=f"error: {result.error}")]
    verdicts = [*result.verdicts.values(), *result.judged.values()]
    return [value for verdict in verdicts for value in verdict.scores()]


def _typed(value: float | str, data_type: DataType) -> float | str:
    return str(value) if data_type == "CATEGORICAL" else float(value)


def scores_for(result: ScenarioResult, *, run_id: str) -> list[Score]:
    """Every score a result yields. A run that raised or timed out yields only `workflow_pass` = 0, its
    comment the error (it never finished its workflow; leaving it out would flatter dashboards); nothing
    is scored that was not evaluated (no trajectory of an unfinished run, no skipped or unscored judge),
    and nothing at all when the evaluator itself failed. A judge's scores add its prompt name and
    version, model and judge trace id to the metadata."""
    metadata: dict[str, Any] = {
        "scenario_id": result.scenario_id,
        "run_id": run_id,
        "prompts": {name: use.version for name, use in result.prompts.items()},
    }
    return [
        Score(
            id=score_id(run_id, result.trace_id, value.name),
            trace_id=result.trace_id,
            name=value.name,
            value=_typed(value.value, _TYPES[value.name]),
            data_type=_TYPES[value.name],
            comment=value.comment,
            timestamp=result.finished_at,
            metadata={**metadata, **value.metadata},
        )
        for value in _values(result)
    ]
