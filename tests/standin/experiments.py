"""Langfuse v4 experiments as the stand-in derives them from the spans it received.

Langfuse v4 records experiments from OpenTelemetry span attributes only (what the SDK's
`run_experiment` writes): every span of an experiment item's trace carries `langfuse.experiment.id`,
`.name`, `.metadata`, `.dataset.id`, `.item.id`, `.item.metadata` and `.item.root_observation_id`; the
item's root observation also carries `langfuse.experiment.description` and
`langfuse.experiment.item.expected_output`. Here:

- an *experiment item* is a span whose id equals its own `item.root_observation_id` (the item's root
  observation): its id is that observation's id, its input and output that observation's;
- an *experiment* is every span carrying its id: its name, dataset and metadata from them, its times
  and its item count from the spans started within the requested window.

Pure functions over observation rows (views.observation_row) and their spans; the server module owns
the data, the locking, the paging and the contract check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from . import views
from .otlp import ReceivedSpan

EXPERIMENT = "langfuse.experiment."
ID = EXPERIMENT + "id"
ROOT_OBSERVATION_ID = EXPERIMENT + "item.root_observation_id"

# GET /api/public/experiment-items field groups (openapi.yml, operation experiments_listItems).
ITEM_FIELD_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "id", "traceId", "startTime", "endTime", "level", "environment", "experimentId",
        "experimentName", "experimentItemId",
    ),
    "dataset": ("experimentDatasetId", "experimentItemVersion"),
    "io": ("input", "output", "expectedOutput"),
    "metadata": ("metadata",),
    "itemMetadata": ("experimentItemMetadata",),
    "experimentMetadata": ("experimentMetadata", "experimentDescription"),
    "scores": ("scores",),
}  # fmt: skip
DEFAULT_ITEM_GROUPS = ("core", "dataset")

# GET /api/public/experiments field groups (operation experiments_list).
EXPERIMENT_FIELD_GROUPS: dict[str, tuple[str, ...]] = {
    "core": ("id", "name", "description", "startTime", "endTime", "itemCount", "datasetId"),
    "metadata": ("metadata",),
    "scores": ("scores",),
}
DEFAULT_EXPERIMENT_GROUPS = ("core",)


def experiment_id_of(span: ReceivedSpan) -> str | None:
    value = span.attributes.get(ID)
    return str(value) if value else None


def is_item_root(span: ReceivedSpan) -> bool:
    """The root observation of an experiment item."""
    return experiment_id_of(span) is not None and span.attributes.get(ROOT_OBSERVATION_ID) == span.span_id


def _json_object(value: Any) -> dict[str, Any] | None:
    decoded = views.json_or_raw(value)
    return decoded if isinstance(decoded, dict) else None


def item_row(row: dict[str, Any], span: ReceivedSpan) -> dict[str, Any]:
    """Every ExperimentItem field of one item's root observation (`select` keeps the requested ones)."""
    attributes = span.attributes
    return {
        "id": span.span_id,
        "traceId": span.trace_id,
        "startTime": row["startTime"],
        "endTime": row["endTime"],
        "level": row["level"],
        "environment": row["environment"],
        "experimentId": str(attributes[ID]),
        "experimentName": str(attributes.get(EXPERIMENT + "name") or ""),
        "experimentItemId": str(attributes.get(EXPERIMENT + "item.id") or ""),
        "experimentDatasetId": attributes.get(EXPERIMENT + "dataset.id"),
        "experimentItemVersion": attributes.get(EXPERIMENT + "item.version"),
        "input": views.json_or_raw(row["input"]),
        "output": views.json_or_raw(row["output"]),
        "expectedOutput": views.json_or_raw(attributes.get(EXPERIMENT + "item.expected_output")),
        "metadata": row["metadata"],
        "experimentItemMetadata": _json_object(attributes.get(EXPERIMENT + "item.metadata")),
        "experimentMetadata": _json_object(attributes.get(EXPERIMENT + "metadata")),
        "experimentDescription": attributes.get(EXPERIMENT + "description"),
    }


def item_scores(
    item: dict[str, Any], scores: Iterable[views.StoredScore], limit: int
) -> list[dict[str, Any]]:
    """The item's and its trace's scores (experiment-level ones are the experiments endpoint's)."""
    found = [
        views.score_v3(score, frozenset({"details"}))
        for score in scores
        if score.body.get("traceId") == item["traceId"]
        and score.body.get("observationId") in (None, item["id"])
    ]
    return found[:limit]


def experiment_rows(
    spans: Sequence[ReceivedSpan], start: datetime, end: datetime | None
) -> list[dict[str, Any]]:
    """Every experiment with spans started in [start, end), newest activity first."""
    grouped: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        key = experiment_id_of(span)
        started = _started(span)
        if key is not None and started >= start and (end is None or started < end):
            grouped.setdefault(key, []).append(span)
    rows = [_experiment_row(key, group) for key, group in grouped.items()]
    return sorted(rows, key=lambda row: (row["endTime"], row["id"]), reverse=True)


def _experiment_row(key: str, spans: list[ReceivedSpan]) -> dict[str, Any]:
    latest = max(spans, key=lambda s: s.start_time_ns)
    attributes = latest.attributes
    first = min(s.start_time_ns for s in spans)
    last = max(s.end_time_ns or s.start_time_ns for s in spans)
    described = next((s for s in spans if s.attributes.get(EXPERIMENT + "description")), None)
    return {
        "id": key,
        "name": str(attributes.get(EXPERIMENT + "name") or ""),
        "description": described.attributes[EXPERIMENT + "description"] if described else None,
        "startTime": views.iso_from_ns(first),
        "endTime": views.iso_from_ns(last),
        "itemCount": sum(1 for s in spans if is_item_root(s)),
        "datasetId": attributes.get(EXPERIMENT + "dataset.id"),
        "metadata": _json_object(attributes.get(EXPERIMENT + "metadata")),
    }


def experiment_scores(
    experiment: dict[str, Any], scores: Iterable[views.StoredScore], limit: int
) -> list[dict[str, Any]]:
    """Scores attached to the experiment itself (`datasetRunId` = its id)."""
    found = [
        views.score_v3(score, frozenset({"details"}))
        for score in scores
        if score.body.get("datasetRunId") == experiment["id"]
    ]
    return found[:limit]


def select(row: dict[str, Any], groups: Iterable[str], catalog: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    keep = {name for group in {"core", *groups} for name in catalog[group]}
    return {key: value for key, value in row.items() if key in keep}


def _started(span: ReceivedSpan) -> datetime:
    return views.parse_iso(views.iso_from_ns(span.start_time_ns))
