"""Traces from Langfuse API bodies and files: a trace as returned by `GET /api/public/traces/{id}`
(observations embedded), and observations pages as returned by `GET /api/public/v2/observations`
(`{"data": [...], "meta": {...}}`), from the API or saved as JSON.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from evaluator._json import loads_or
from evaluator.errors import TraceError
from evaluator.trace.build import build_trace
from evaluator.trace.conventions import DEFAULT_RULES, TraceRules
from evaluator.trace.detail import TraceDetail
from evaluator.trace.model import Observation, Trace
from evaluator.trace.otel_mapping import ATTRIBUTES_KEY
from evaluator.trace.usage import usage_from_langfuse

__all__ = [
    "OBSERVATION_FIELDS",
    "decode_io",
    "decode_metadata_value",
    "detail_from_file",
    "detail_from_langfuse_trace",
    "detail_from_observations",
    "load_trace_file",
    "session_ids",
    "trace_from_langfuse_trace",
    "trace_from_observations",
]


def trace_from_langfuse_trace(body: Mapping[str, Any], rules: TraceRules = DEFAULT_RULES) -> Trace:
    """From `GET /api/public/traces/{traceId}`: a trace object with `observations` embedded (or the
    Langfuse UI's trace download, `{"observations": [...], "scores": [...]}`: the trace id its rows')."""
    rows = _newest_by_id([body.get("observations") or []])
    trace_metadata = body.get("metadata")
    if isinstance(trace_metadata, str):
        trace_metadata = decode_io(trace_metadata)
    shared = _user_metadata(trace_metadata) if isinstance(trace_metadata, dict) else {}
    return build_trace(
        str(body.get("id") or next((r["traceId"] for r in rows if r.get("traceId")), "")),
        [_from_api(raw, shared) for raw in rows],
        name=body.get("name"),
        output=decode_io(body.get("output")),
        rules=rules,
    )


def detail_from_langfuse_trace(body: Mapping[str, Any]) -> TraceDetail:
    """The observations and usage of `GET /api/public/traces/{traceId}`'s body (its embedded rows)."""
    trace_metadata = body.get("metadata")
    if isinstance(trace_metadata, str):
        trace_metadata = decode_io(trace_metadata)
    shared = _user_metadata(trace_metadata) if isinstance(trace_metadata, dict) else {}
    return _detail(_newest_by_id([body.get("observations") or []]), shared)


def detail_from_observations(pages: Iterable[Mapping[str, Any]]) -> TraceDetail:
    """The observations and usage of `GET /api/public/v2/observations` pages (usage: the `usage` field
    group's `usageDetails`, `costDetails`, `totalCost`, where a row has them)."""
    return _detail(_newest_by_id(page.get("data") or [] for page in pages), None)


def detail_from_file(path: Path) -> TraceDetail:
    """The observations and usage of a trace file `load_trace_file` read (read again: only on demand)."""
    body = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(body, dict) and isinstance(body.get("observations"), list):
        return detail_from_langfuse_trace(body)
    return detail_from_observations([body])


def _detail(rows: Sequence[Mapping[str, Any]], shared: Mapping[str, Any] | None) -> TraceDetail:
    usage = {
        str(row["id"]): usage_from_langfuse(row)
        for row in rows
        if row.get("usageDetails") or row.get("costDetails") or row.get("totalCost") is not None
    }
    return TraceDetail(observations=tuple(_from_api(row, shared) for row in rows), usage=usage)


def trace_from_observations(
    pages: Iterable[Mapping[str, Any]], trace_id: str = "", rules: TraceRules = DEFAULT_RULES
) -> Trace:
    """From one or more `GET /api/public/v2/observations` pages."""
    rows = _newest_by_id(page.get("data") or [] for page in pages)
    if not trace_id:
        trace_id = next((str(r["traceId"]) for r in rows if r.get("traceId")), "")
    return build_trace(trace_id, [_from_api(raw) for raw in rows], rules=rules)


def session_ids(body: object) -> set[str]:
    """The session ids a saved trace file names: the trace body's own, or its rows' (a v2 observations
    page), their keys read as the API spells them (`_camel_case_keys`: an SDK page dumped with
    `model_dump()` says `session_id`)."""
    data = body.get("data") if isinstance(body, dict) else None
    rows = data if isinstance(data, list) else [body]
    named = (_camel_case_keys(row).get("sessionId") for row in rows if isinstance(row, dict))
    return {str(session) for session in named if session}


_SPAN_KEYS = ("attributes", "resourceAttributes", "scope")  # the server's keys for the span itself


def _user_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The trace's metadata as users set it: without the OpenTelemetry attributes, resource and scope
    the server also keeps there (of the span that set the trace), which are not its observations'."""
    return {
        k: v
        for k, v in metadata.items()
        if k not in _SPAN_KEYS and not k.startswith(tuple(f"{p}." for p in _SPAN_KEYS))
    }


def _newest_by_id(row_lists: Iterable[Iterable[Any]]) -> list[Mapping[str, Any]]:
    """Rows de-duplicated by id, keeping the newest `updatedAt`: Langfuse can return an observation
    more than once (across pages, or before its storage merges rows)."""
    newest: dict[str, Mapping[str, Any]] = {}
    for rows in row_lists:
        for given in rows:
            if not isinstance(given, dict) or "id" not in given:
                continue
            raw = _camel_case_keys(given)
            kept = newest.get(raw["id"])
            if kept is None or str(raw.get("updatedAt") or "") >= str(kept.get("updatedAt") or ""):
                newest[raw["id"]] = raw
    return list(newest.values())


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")  # `start_time`; not `_private` nor `a.b_c`


def _camel_case_keys(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row's own keys as the API spells them: the Python SDK's models dumped with `model_dump()`
    (not `.json()`, `.dict()` or `model_dump_json()`) keep their snake_case field names
    (`parent_observation_id`, `start_time`); the values, metadata keys among them, stay as they are."""
    if not any(_SNAKE.fullmatch(key) for key in raw):
        return raw
    renamed = {}
    for key, value in raw.items():
        head, *rest = key.split("_") if _SNAKE.fullmatch(key) else (key,)
        renamed[head + "".join(part.title() for part in rest)] = value
    return renamed


def _from_api(raw: Mapping[str, Any], trace_metadata: Mapping[str, Any] | None = None) -> Observation:
    """One observation; `trace_metadata` (the trace view's) joins its metadata, winning on a clash, as
    the v2 observations hold it."""
    metadata = raw.get("metadata")
    if isinstance(metadata, str):
        metadata = decode_io(metadata)
    metadata = {
        k: decode_metadata_value(v)
        for k, v in {**(metadata if isinstance(metadata, dict) else {}), **(trace_metadata or {})}.items()
    }
    attributes = _attributes(metadata)
    version = raw.get("promptVersion")
    return Observation(
        id=str(raw.get("id", "")),
        parent_id=raw.get("parentObservationId") or None,
        type=str(raw.get("type") or "SPAN").upper(),
        name=str(raw.get("name") or ""),
        start_time=_timestamp(raw.get("startTime")),
        end_time=_timestamp(raw.get("endTime")),
        level=str(raw.get("level") or "DEFAULT").upper(),
        status_message=raw.get("statusMessage"),
        input=decode_io(raw.get("input")),
        output=decode_io(raw.get("output")),
        metadata=metadata,
        prompt_name=raw.get("promptName"),
        prompt_version=int(version) if isinstance(version, int | str) and str(version).isdigit() else None,
        attributes=attributes,
    )


def _attributes(metadata: dict[str, Any]) -> dict[str, Any]:
    """A third-party span's OpenTelemetry attributes, taken out of its metadata, each value a string
    as in-process capture keeps it. The server keeps them under `attributes`: one nested object in the
    trace view, but flattened to `attributes.<key>` values in the v2 observations (the events table
    stores metadata as dotted paths)."""
    nested = metadata.pop(ATTRIBUTES_KEY, None)
    attributes = dict(nested) if isinstance(nested, dict) else {}
    prefix = ATTRIBUTES_KEY + "."
    for key in [k for k in metadata if k.startswith(prefix)]:
        value = metadata.pop(key)
        attributes[key[len(prefix) :]] = value if isinstance(value, str) else json.dumps(value)
    return attributes


def _timestamp(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None  # NaN or Infinity: no time
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def decode_metadata_value(value: Any) -> Any:
    """A metadata value: the SDK JSON-encodes every value (strings too), so decode any JSON."""
    if isinstance(value, str):
        return loads_or(value, value)  # not JSON: the text itself
    return value


def decode_io(value: Any) -> Any:
    """An input or output as stored: JSON text of an object, array or string is decoded; anything else
    (plain text, "42", "null") stays the string it is, so a text answer is never turned into a number."""
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        return decode_metadata_value(value)
    return value


# How an observations page is asked for, by the read-back and by a user saving a trace file: every
# field group a verdict needs (Langfuse returns only `core` and `basic` unless asked). With `io` asked
# for, the server reads metadata whole (its full events table); without, it cuts values over 200
# characters, and the values verdicts read (the `flow`, the attributes naming agents and tools) are short.
OBSERVATION_FIELDS = "core,basic,io,metadata,usage,prompt,time"
_PAGE_REQUEST = f"GET /api/public/v2/observations?traceId=...&fields={OBSERVATION_FIELDS}"


def load_trace_file(path: Path, rules: TraceRules = DEFAULT_RULES) -> Trace:
    """A trace from a JSON file holding either Langfuse API shape; TraceError names what is wrong."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceError(
            f"{path}: cannot read the trace file ({exc}). Fix: check the path given to --trace."
        ) from None
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
        raise TraceError(f"{path}: not JSON ({exc}). Fix: save the Langfuse API response as JSON.") from None
    if isinstance(body, dict) and isinstance(body.get("observations"), list):
        if "id" not in body:  # the web UI's download, not the trace endpoint's body (always whole)
            _check_page_fields(path, body["observations"])
        _check_row_values(path, body["observations"])
        trace = trace_from_langfuse_trace(body, rules)
    elif isinstance(body, dict) and isinstance(body.get("data"), list):
        _check_page_fields(path, body["data"])
        _check_row_values(path, body["data"])
        trace = trace_from_observations([body], rules=rules)
    elif isinstance(body, list) and any(isinstance(row, dict) and "depth" in row for row in body):
        # the UI's log view export: rows with a depth but no parent ids, their names suffixed with ids
        raise TraceError(
            f"{path}: a list of observations without parent ids (the Langfuse log view's Download as JSON "
            "or Copy as JSON), so agents and tools cannot be placed. Fix: save the trace view's Download "
            f"(trace-ID.json), or {_PAGE_REQUEST}"
        )
    elif isinstance(body, dict) and "resourceSpans" in body:
        raise TraceError(
            f"{path}: OpenTelemetry spans (OTLP JSON), not read here. Fix: save the trace as Langfuse "
            f"stores it, {_PAGE_REQUEST}"
        )
    else:
        raise TraceError(
            f"{path}: not a Langfuse trace (no 'observations' list) nor an observations page (no "
            f"'data' list). Fix: save the body of GET /api/public/traces/{{id}} or {_PAGE_REQUEST}"
        )
    if trace.observation_count == 0:  # nothing to draw a verdict from: not a failed scenario
        raise TraceError(
            f"{path}: the trace holds no observations. Fix: save it once Langfuse shows its "
            "observations (ingestion takes a few seconds), or check the trace id."
        )
    return trace


def _check_row_values(path: Path, rows: Sequence[Any]) -> None:
    """Each observation's id a string, its parent's a string or null, its times a string, a number of
    seconds or null (an edited or hand-made file can hold anything there: a traceback otherwise)."""
    for index, given in enumerate(rows):
        if not isinstance(given, dict):
            continue
        row = _camel_case_keys(given)
        wrong = [key for key in _ROW_VALUES if key in row and not _fits(key, row[key])]
        if wrong:
            name = f"observation {index + 1}" + (f" ({row['id']})" if isinstance(row.get("id"), str) else "")
            found = ", ".join(f"{key} is {json.dumps(row[key])[:60]}" for key in wrong)
            raise TraceError(
                f"{path}: {name}: {found}, where Langfuse writes a string"
                + ("" if wrong == ["id"] else " (or null)")
                + f". Fix: save the trace from Langfuse again, {_PAGE_REQUEST}"
            )


_ROW_VALUES = ("id", "parentObservationId", "startTime", "endTime")


def _fits(key: str, value: object) -> bool:
    if key == "id":
        return isinstance(value, str)
    if key == "parentObservationId":
        return value is None or isinstance(value, str)
    return value is None or isinstance(value, str) or _timestamp(value) is not None  # ISO text, or seconds


def _check_page_fields(path: Path, rows: Sequence[Any]) -> None:
    """Observations saved without their metadata and input/output (Langfuse's v2 endpoint returns only
    the `core` and `basic` field groups unless asked; the web UI's trace download leaves them out of a
    trace of 350 or more observations, and its older form out of every trace) would read every framework
    span as a plain one and the answer as empty: wrong verdicts, so refused."""
    missing = [  # a field group is every row's or none's: one row without the key does not make a page
        key
        for key in ("metadata", "output")
        if rows and all(isinstance(row, dict) and key not in row for row in rows)
    ]
    if missing:
        raise TraceError(
            f"{path}: the observations have no {' and no '.join(missing)} field (saved without them: a "
            "v2 observations page without `fields`, or a Langfuse UI trace download that left them out; "
            f"verdicts would be wrong). Fix: save {_PAGE_REQUEST}"
        )
