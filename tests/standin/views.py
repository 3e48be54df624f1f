"""JSON views of the stand-in's stored data, in the shapes Langfuse's read APIs answer with.

Pure functions: the server module owns the data and the locking; everything here turns stored
spans, scores and prompts into response bodies (checked against openapi.yml by the server).
"""

from __future__ import annotations

import json
import math
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .otlp import ReceivedSpan

PROJECT_ID = "standin-project"
METADATA_TRUNCATION = 200  # characters; observations v2 truncates longer values unless expanded


class _EveryKey:
    """`expandMetadata` as the server applies it when it reads metadata from its full events table
    (`io` or any key to expand asked for): every value whole."""

    def __contains__(self, key: object) -> bool:
        return True


EVERY_KEY: Container[str] = _EveryKey()

OBS = "langfuse.observation."
TRACE = "langfuse.trace."

# GET /api/public/v2/observations field groups (openapi.yml, operation observations_getMany).
# `core` is always returned; the schema also marks modelId/inputPrice/outputPrice/totalPrice
# required (nullable), so they ride along with `core`.
FIELD_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "id", "traceId", "startTime", "endTime", "projectId", "parentObservationId", "type",
        "modelId", "inputPrice", "outputPrice", "totalPrice",
    ),
    "basic": (
        "name", "level", "statusMessage", "version", "environment", "bookmarked", "public",
        "userId", "sessionId", "isRootObservation",
    ),
    "time": ("completionStartTime", "createdAt", "updatedAt"),
    "io": ("input", "output"),
    "metadata": ("metadata",),
    "model": ("providedModelName", "internalModelId", "modelParameters"),
    "usage": ("usageDetails", "costDetails", "totalCost", "usagePricingTierName"),
    "prompt": ("promptId", "promptName", "promptVersion"),
    "metrics": ("latency", "timeToFirstToken"),
    "trace_context": ("tags", "release", "traceName"),
}  # fmt: skip
DEFAULT_FIELD_GROUPS = ("core", "basic")

# GET /api/public/v3/scores field groups besides the always-returned core fields.
SCORE_FIELD_GROUPS = frozenset({"details", "subject", "annotation"})


# ---------------------------------------------------------------------------------------------
# time


def iso_from_ns(nanoseconds: int) -> str:
    moment = datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_from_seconds(seconds: float) -> str:
    return iso_from_ns(int(seconds * 1e9))


def parse_iso(value: str) -> datetime:
    """An ISO 8601 timestamp; raises ValueError when it is not one or has no UTC offset."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no UTC offset")
    return moment


def normalize_iso(value: str) -> str:
    moment = parse_iso(value).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------------------------
# attribute decoding


def json_or_raw(value: Any) -> Any:
    """A JSON-encoded attribute decoded, or the value itself when it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def metadata_value(raw: Any, *, expanded: bool) -> Any:
    """One metadata value as the read APIs return it.

    Langfuse stores metadata as a map of strings (the SDK's JSON encoding of each value), truncates
    long ones on read unless the key is in `expandMetadata`, then JSON-parses what it can.
    """
    text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
    if not expanded and len(text) > METADATA_TRUNCATION:
        return text[:METADATA_TRUNCATION]
    return json_or_raw(text)


def prefixed_metadata(
    attributes: dict[str, Any], prefix: str, expand: Container[str] | None = None
) -> dict[str, Any]:
    """Metadata keys written as `<prefix>.<key>` attributes (one attribute per key)."""
    metadata: dict[str, Any] = {}
    whole = attributes.get(prefix)
    if whole is not None:  # metadata that was not a dict arrives as one attribute
        decoded = json_or_raw(whole)
        metadata.update(decoded if isinstance(decoded, dict) else {"metadata": decoded})
    for key, raw in attributes.items():
        if key.startswith(prefix + "."):
            name = key[len(prefix) + 1 :]
            metadata[name] = metadata_value(raw, expanded=expand is None or name in expand)
    return metadata


def _iso_attribute(value: Any) -> str | None:
    decoded = json_or_raw(value)
    return normalize_iso(decoded) if isinstance(decoded, str) else None


def _numbers(value: Any, kind: type) -> dict[str, Any] | None:
    decoded = json_or_raw(value)
    if not isinstance(decoded, dict):
        return None
    return {str(key): kind(number) for key, number in decoded.items() if number is not None}


# ---------------------------------------------------------------------------------------------
# traces and observations


def is_root(span: ReceivedSpan) -> bool:
    """Langfuse's `isRootObservation`: no physical parent, or marked as (app) root by the SDK."""
    return (
        span.parent_span_id is None
        or bool(span.attributes.get("langfuse.internal.as_root"))
        or bool(span.attributes.get("langfuse.internal.is_app_root"))
    )


def _first(spans: Iterable[ReceivedSpan], key: str) -> Any:
    for span in spans:
        value = span.attributes.get(key, span.resource_attributes.get(key))
        if value is not None:
            return value
    return None


@dataclass(frozen=True)
class TraceSummary:
    """Trace-level fields Langfuse derives from all spans of one trace."""

    trace_id: str
    spans: tuple[ReceivedSpan, ...]  # by start time, roots first
    name: str | None
    tags: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, trace_id: str, spans: Sequence[ReceivedSpan]) -> TraceSummary:
        ordered = tuple(sorted(spans, key=lambda s: (not is_root(s), s.start_time_ns, s.span_id)))
        tags: set[str] = set()
        metadata: dict[str, Any] = {}
        for span in ordered:
            tags.update(str(tag) for tag in span.attributes.get(TRACE + "tags") or ())
            metadata.update(prefixed_metadata(span.attributes, TRACE + "metadata"))
        name = _first(ordered, TRACE + "name") or (ordered[0].name if ordered else None)
        return cls(trace_id, ordered, name, tuple(sorted(tags)), metadata)

    @property
    def root(self) -> ReceivedSpan:
        return self.spans[0]

    def attribute(self, key: str) -> Any:
        return _first(self.spans, key)


def observation_row(
    span: ReceivedSpan, trace: TraceSummary, prompt_id: str | None, expand: Container[str] | None
) -> dict[str, Any]:
    """Every ObservationV2 field of one span; `select_groups` keeps the requested ones."""
    attributes = span.attributes
    costs = _numbers(attributes.get(OBS + "cost_details"), float)
    completion_start = _iso_attribute(attributes.get(OBS + "completion_start_time"))
    received = iso_from_seconds(span.received_at)
    return {
        "id": span.span_id,
        "traceId": span.trace_id,
        "startTime": iso_from_ns(span.start_time_ns),
        "endTime": iso_from_ns(span.end_time_ns) if span.end_time_ns else None,
        "projectId": PROJECT_ID,
        "parentObservationId": span.parent_span_id,
        "type": span.observation_type,
        "modelId": None,
        "inputPrice": None,
        "outputPrice": None,
        "totalPrice": None,
        **_basic_fields(span, trace),
        "completionStartTime": completion_start,
        "createdAt": received,
        "updatedAt": received,
        **dict(zip(("input", "output"), stored_io(span), strict=True)),  # raw strings, as v2 returns them
        "metadata": _observation_metadata(span, expand) if expand is None else v2_metadata(span, expand),
        "providedModelName": attributes.get(OBS + "model.name"),
        "internalModelId": None,
        "modelParameters": json_or_raw(attributes.get(OBS + "model.parameters")),
        "usageDetails": _numbers(attributes.get(OBS + "usage_details"), int),
        "costDetails": costs,
        "totalCost": (costs.get("total", math.fsum(costs.values()))) if costs else None,
        "usagePricingTierName": None,
        "promptId": prompt_id,
        "promptName": attributes.get(OBS + "prompt.name"),
        "promptVersion": attributes.get(OBS + "prompt.version"),
        **_metrics(span, completion_start),
        "tags": list(trace.tags),
        "release": trace.attribute("langfuse.release"),
        "traceName": trace.name,
    }


def _observation_metadata(span: ReceivedSpan, expand: Container[str] | None) -> dict[str, Any]:
    """The SDK's metadata keys; a third-party span's OpenTelemetry attributes too (non-string values
    JSON-encoded, input/output and metadata blobs left out), as the server's OTel ingestion keeps them
    under `attributes`. The v2 endpoint (`expand` given) reads the events table, which stores metadata
    flattened to dotted paths, so each attribute is its own `attributes.<key>` value there, truncated
    like any value unless expanded; the v1 trace view (`expand` None) keeps the one nested object."""
    metadata = prefixed_metadata(span.attributes, OBS + "metadata", expand)
    if span.from_langfuse_sdk:
        return metadata
    kept = {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in span.attributes.items()
        if not key.startswith(_LIFTED) and key not in _DELETED
    }
    if expand is None:
        metadata["attributes"] = metadata_value(kept, expanded=True)
        return metadata
    for key, value in kept.items():
        flat = f"attributes.{key}"
        metadata[flat] = metadata_value(value, expanded=flat in expand)
    return metadata


def v2_metadata(span: ReceivedSpan, expand: Container[str]) -> dict[str, Any]:
    """The v2 observations' metadata: the span's own, then its trace metadata, which wins on a clash
    (the events table holds both, as the server's OTel ingestion writes them)."""
    return {
        **_observation_metadata(span, expand),
        **prefixed_metadata(span.attributes, TRACE + "metadata", expand),
    }


_LIFTED = ("gen_ai.prompt", "gen_ai.completion", "llm.input_messages", "llm.output_messages", "langfuse.")

# Where the server's OTel ingestion (extractInputAndOutput) finds a span's input and output when the
# Langfuse SDK's own attributes are not set: the first pair with a value wins, in this order. Only the
# attribute sources the frameworks under test write are emulated (not span events, nor the key-path
# attributes `gen_ai.prompt.*` and `llm.input_messages.*`, which come after `input.value`).
_IO_SOURCES = (
    ("gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response"),
    ("prompt", "all_messages_events"),
    ("mlflow.spanInputs", "mlflow.spanOutputs"),
    ("traceloop.entity.input", "traceloop.entity.output"),
    ("input.value", "output.value"),  # OpenInference (the OpenAI Agents SDK, smolagents)
    ("input", "output"),
)
_PYDANTIC_AI_IO = ("pydantic_ai.all_messages", "final_result")  # that library's spans only
_LATER_IO_SOURCES = (
    ("tool_arguments", "tool_response"),
    ("gen_ai.input.messages", "gen_ai.output.messages"),
    ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
)


# The input/output attributes the server drops from a span's kept attributes, whichever it used (its
# `potentialInputOutputKeys`, of the sources above: pydantic-ai's tool arguments and response stay).
_DELETED = frozenset(
    {
        *(key for pair in (*_IO_SOURCES, _PYDANTIC_AI_IO, *_LATER_IO_SOURCES[1:]) for key in pair),
        "gcp.vertex.agent.tool_call_args",
        "gcp.vertex.agent.tool_response",
        "events",
        "gen_ai.system_instructions",
    }
)


def stored_io(span: ReceivedSpan) -> tuple[Any, Any]:
    """(input, output) as the server stores them: the Langfuse SDK's, else a framework's (a value
    that is not a string JSON-encoded)."""
    attributes = span.attributes
    found = attributes.get(OBS + "input"), attributes.get(OBS + "output")
    if found == (None, None) and not span.from_langfuse_sdk:
        scoped = (_PYDANTIC_AI_IO,) if span.scope_name == "pydantic-ai" else ()
        for source in (*_IO_SOURCES, *scoped, *_LATER_IO_SOURCES):
            found = attributes.get(source[0]), attributes.get(source[1])
            if found[0] or found[1]:
                break
        else:
            found = None, None
    return tuple(value if value is None or isinstance(value, str) else json.dumps(value) for value in found)  # type: ignore[return-value]


def _basic_fields(span: ReceivedSpan, trace: TraceSummary) -> dict[str, Any]:
    attributes = span.attributes
    failed = span.status_code == "ERROR"
    return {
        "name": span.observation_name,
        "level": attributes.get(OBS + "level") or ("ERROR" if failed else "DEFAULT"),
        "statusMessage": attributes.get(OBS + "status_message") or span.status_message or None,
        "version": attributes.get("langfuse.version"),
        "environment": _first([span], "langfuse.environment") or "default",
        "bookmarked": False,
        "public": bool(trace.attribute(TRACE + "public")),
        "userId": _first([span], "user.id") or trace.attribute("user.id"),
        "sessionId": _first([span], "session.id") or trace.attribute("session.id"),
        "isRootObservation": is_root(span),
    }


def _metrics(span: ReceivedSpan, completion_start: str | None) -> dict[str, Any]:
    latency = (span.end_time_ns - span.start_time_ns) / 1e9 if span.end_time_ns else None
    first_token = None
    if completion_start is not None:
        first_token = parse_iso(completion_start).timestamp() - span.start_time_ns / 1e9
    return {"latency": latency, "timeToFirstToken": first_token}


def select_groups(row: dict[str, Any], groups: Iterable[str]) -> dict[str, Any]:
    keep = {name for group in {"core", *groups} for name in FIELD_GROUPS[group]}
    return {key: value for key, value in row.items() if key in keep}


def observation_v1(row: dict[str, Any]) -> dict[str, Any]:
    """An `ObservationsView` (legacy trace endpoint) from a full ObservationV2 row."""
    usage = row["usageDetails"] or {}
    return {
        **{key: row[key] for key in _V1_COPIED},
        "model": row["providedModelName"],
        "input": json_or_raw(row["input"]),
        "output": json_or_raw(row["output"]),
        "usage": {
            "input": usage.get("input", 0),
            "output": usage.get("output", 0),
            "total": usage.get("total", usage.get("input", 0) + usage.get("output", 0)),
            "unit": "TOKENS",
        },
        "usageDetails": usage,
        "costDetails": row["costDetails"] or {},
        "calculatedInputCost": None,
        "calculatedOutputCost": None,
        "calculatedTotalCost": row["totalCost"],
    }


_V1_COPIED = (
    "id", "traceId", "type", "name", "startTime", "endTime", "completionStartTime",
    "modelParameters", "version", "metadata", "level", "statusMessage", "parentObservationId",
    "promptId", "environment", "promptName", "promptVersion", "modelId", "inputPrice",
    "outputPrice", "totalPrice", "latency", "timeToFirstToken",
)  # fmt: skip


def trace_view(
    trace: TraceSummary, observations: list[dict[str, Any]], scores: list[dict[str, Any]]
) -> dict[str, Any]:
    """`TraceWithFullDetails` for GET /api/public/traces/{traceId}."""
    root = trace.root
    starts = [span.start_time_ns for span in trace.spans]
    ends = [span.end_time_ns for span in trace.spans if span.end_time_ns]
    return {
        "id": trace.trace_id,
        "timestamp": iso_from_ns(root.start_time_ns),
        "name": trace.name,
        "input": json_or_raw(root.attributes.get(OBS + "input")),
        "output": json_or_raw(root.attributes.get(OBS + "output")),
        "sessionId": trace.attribute("session.id"),
        "release": trace.attribute("langfuse.release"),
        "version": trace.attribute("langfuse.version"),
        "userId": trace.attribute("user.id"),
        "metadata": trace.metadata,
        "tags": list(trace.tags),
        "public": bool(trace.attribute(TRACE + "public")),
        "environment": trace.attribute("langfuse.environment") or "default",
        "htmlPath": f"/project/{PROJECT_ID}/traces/{trace.trace_id}",
        "latency": (max(ends) - min(starts)) / 1e9 if ends else None,
        "totalCost": None,
        "observations": observations,
        "scores": scores,
    }


# ---------------------------------------------------------------------------------------------
# scores


@dataclass(frozen=True)
class StoredScore:
    """One score row as Langfuse keeps it: (id, name, timestamp date) identifies the row."""

    body: dict[str, Any]  # as posted, with `id`, `timestamp` and `dataType` filled in
    created_at: str
    updated_at: str
    visible_at: float

    @property
    def id(self) -> str:
        return str(self.body["id"])


def infer_data_type(item: dict[str, Any]) -> str:
    declared = item.get("dataType")
    if declared:
        return str(declared)
    return "CATEGORICAL" if isinstance(item.get("value"), str) else "NUMERIC"


def score_v3(score: StoredScore, groups: frozenset[str]) -> dict[str, Any]:
    body = score.body
    data_type = body["dataType"]
    value: Any = body["value"]
    if data_type == "BOOLEAN":
        value = bool(value)
    elif data_type == "NUMERIC":
        value = float(value)
    view: dict[str, Any] = {
        "id": score.id,
        "projectId": PROJECT_ID,
        "name": body["name"],
        "value": value,
        "dataType": data_type,
        "source": body.get("source") or "API",
        "timestamp": body["timestamp"],
        "environment": body.get("environment") or "default",
        "createdAt": score.created_at,
        "updatedAt": score.updated_at,
    }
    if "details" in groups:
        view |= {key: body.get(key) for key in ("comment", "configId", "metadata")}
    if "subject" in groups:
        view["subject"] = _score_subject(body)
    if "annotation" in groups:
        view |= {"authorUserId": None, "queueId": body.get("queueId")}
    return view


def _score_subject(body: dict[str, Any]) -> dict[str, Any] | None:
    if body.get("observationId"):
        return {"kind": "observation", "id": body["observationId"], "traceId": body.get("traceId")}
    for kind, key in (("trace", "traceId"), ("session", "sessionId"), ("experiment", "datasetRunId")):
        if body.get(key):
            return {"kind": kind, "id": body[key]}
    return None


def score_v1(score: StoredScore) -> dict[str, Any] | None:
    """A `ScoreV1` for the trace endpoint; None for types ScoreV1 cannot express."""
    body = score.body
    base = {
        "id": score.id,
        "traceId": body["traceId"],
        "name": body["name"],
        "source": body.get("source") or "API",
        "observationId": body.get("observationId"),
        "timestamp": body["timestamp"],
        "createdAt": score.created_at,
        "updatedAt": score.updated_at,
        "authorUserId": None,
        "comment": body.get("comment"),
        "metadata": body.get("metadata"),
        "configId": body.get("configId"),
        "queueId": body.get("queueId"),
        "environment": body.get("environment") or "default",
        "dataType": body["dataType"],
    }
    value = body["value"]
    match body["dataType"]:
        case "NUMERIC":
            return base | {"value": float(value)}
        case "BOOLEAN":
            return base | {"value": float(value), "stringValue": "True" if value else "False"}
        case "CATEGORICAL":
            return base | {"value": 0.0, "stringValue": str(value)}
        case "TEXT":
            return base | {"stringValue": str(value)}
    return None


# ---------------------------------------------------------------------------------------------
# prompts and score configs


@dataclass
class PromptVersion:
    name: str
    version: int
    type: str  # "text" or "chat"
    prompt: Any  # a string, or a list of chat messages
    config: Any
    labels: list[str]
    commit_message: str | None
    id: str
    updated_at: str


def prompt_view(version: PromptVersion, tags: Sequence[str]) -> dict[str, Any]:
    return {
        "type": version.type,
        "name": version.name,
        "version": version.version,
        "prompt": version.prompt,
        "config": version.config,
        "labels": list(version.labels),
        "tags": list(tags),
        "commitMessage": version.commit_message,
    }


def prompt_meta(versions: Sequence[PromptVersion], tags: Sequence[str]) -> dict[str, Any]:
    latest = max(versions, key=lambda v: v.version)
    labels = sorted({label for v in versions for label in v.labels})
    return {
        "name": latest.name,
        "type": latest.type,
        "versions": sorted(v.version for v in versions),
        "labels": labels,
        "tags": list(tags),
        "lastUpdatedAt": max(v.updated_at for v in versions),
        "lastConfig": latest.config,
    }


def page_meta(page: int, limit: int, total: int) -> dict[str, int]:
    return {"page": page, "limit": limit, "totalItems": total, "totalPages": math.ceil(total / limit)}
