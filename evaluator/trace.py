"""The normalized trace: what a run did, built the same way from every source.

Sources: spans captured in-process (OpenTelemetry `ReadableSpan`s written by the Langfuse SDK), a
Langfuse trace as returned by `GET /api/public/traces/{id}` (observations embedded), and an observations
page as returned by `GET /api/public/v2/observations` (`{"data": [...], "meta": {...}}`).

Rules (DESIGN.md, Trace model): agents are AGENT observations and tools TOOL observations (types compared
case-insensitively), named by the observation name. An agent with no AGENT ancestor is an *entry agent*.
The tool path is the TOOL observations in start order. The flow is the `flow` metadata value of the
earliest observation that has one, else the name of the first agent that is not an entry agent.
Missing or unknown fields degrade: no type reads as SPAN, no start time sorts first, in input order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evaluator.errors import TraceError

AGENT = "AGENT"
TOOL = "TOOL"
ERROR_LEVEL = "ERROR"
FLOW_KEY = "flow"


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    id: str
    parent_id: str | None
    type: str
    name: str
    start_time: float | None = None  # seconds since the epoch
    end_time: float | None = None
    level: str = "DEFAULT"
    status_message: str | None = None
    input: Any = None
    output: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    prompt_name: str | None = None
    prompt_version: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentCall:
    name: str
    entry: bool
    start_time: float | None
    end_time: float | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    name: str
    agent: str | None  # the nearest enclosing agent
    input: Any
    output: Any
    start_time: float | None
    end_time: float | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Trace:
    id: str
    name: str | None
    agents: tuple[AgentCall, ...]
    tools: tuple[ToolCall, ...]
    flow: str | None
    output: Any
    errors: tuple[str, ...]
    prompts: tuple[tuple[str, int], ...]  # prompt versions linked to observations
    start_time: float | None
    end_time: float | None
    observation_count: int

    @property
    def agent_names(self) -> list[str]:
        return [a.name for a in self.agents]

    @property
    def entry_agents(self) -> frozenset[str]:
        return frozenset(a.name for a in self.agents if a.entry)

    @property
    def tool_path(self) -> list[str]:
        return [t.name for t in self.tools]

    @property
    def duration_seconds(self) -> float | None:
        if self.start_time is None or self.end_time is None:
            return None
        return self.end_time - self.start_time


def build_trace(
    trace_id: str,
    observations: Iterable[Observation],
    *,
    name: str | None = None,
    output: Any = None,
) -> Trace:
    """Normalize observations (any order) into a Trace."""
    ordered = sorted(observations, key=_start_order)
    by_id = {o.id: o for o in ordered}
    nearest_agent = _nearest_agent_ancestors(ordered, by_id)
    agents = tuple(
        AgentCall(
            name=o.name,
            entry=nearest_agent[o.id] is None,
            start_time=o.start_time,
            end_time=o.end_time,
            error=_error(o),
        )
        for o in ordered
        if o.type == AGENT
    )
    tools = tuple(
        ToolCall(
            name=o.name,
            agent=_name_of(by_id, nearest_agent[o.id]),
            input=o.input,
            output=o.output,
            start_time=o.start_time,
            end_time=o.end_time,
            error=_error(o),
        )
        for o in ordered
        if o.type == TOOL
    )
    roots = [o for o in ordered if o.parent_id is None or o.parent_id not in by_id]
    starts = [o.start_time for o in ordered if o.start_time is not None]
    ends = [o.end_time for o in ordered if o.end_time is not None]
    return Trace(
        id=trace_id,
        name=name if name is not None else (roots[0].name if roots else None),
        agents=agents,
        tools=tools,
        flow=_flow(ordered, agents),
        output=output if output is not None else (roots[0].output if roots else None),
        errors=tuple(f"{o.name}: {o.status_message or 'error'}" for o in ordered if o.level == ERROR_LEVEL),
        prompts=tuple(
            dict.fromkeys(
                (o.prompt_name, o.prompt_version)
                for o in ordered
                if o.prompt_name and o.prompt_version is not None
            )
        ),
        start_time=min(starts) if starts else None,
        end_time=max(ends) if ends else None,
        observation_count=len(ordered),
    )


def _start_order(obs: Observation) -> tuple[float, float]:
    """Start time, then end time: Langfuse stores milliseconds, so calls made back to back can share a
    start time, and the one that ended first most likely started first. (sorted() is stable: remaining
    ties keep the source's order.) A missing start sorts first."""
    start = -1.0 if obs.start_time is None else obs.start_time
    return start, float("inf") if obs.end_time is None else obs.end_time


def _nearest_agent_ancestors(
    ordered: Sequence[Observation], by_id: Mapping[str, Observation]
) -> dict[str, str | None]:
    """For every observation, the id of its nearest AGENT ancestor (None: there is none). O(n).

    Walking up stops at the first AGENT parent, so every observation on the walked path shares the
    answer; memoising it makes the whole pass linear even for deep trees.
    """
    memo: dict[str, str | None] = {}
    for obs in ordered:
        path: dict[str, None] = {}  # ordered, with O(1) membership for the cycle check
        current = obs
        while True:
            if current.id in memo:
                answer = memo[current.id]
                break
            path[current.id] = None
            parent = by_id.get(current.parent_id) if current.parent_id else None
            if parent is None or parent.id in path:  # a root, or a cycle in bad input
                answer = None
                break
            if parent.type == AGENT:
                answer = parent.id
                break
            current = parent
        memo.update(dict.fromkeys(path, answer))
    return memo


def _name_of(by_id: Mapping[str, Observation], obs_id: str | None) -> str | None:
    return by_id[obs_id].name if obs_id is not None else None


def _error(obs: Observation) -> str | None:
    return (obs.status_message or "error") if obs.level == ERROR_LEVEL else None


def _flow(ordered: Sequence[Observation], agents: Sequence[AgentCall]) -> str | None:
    for obs in ordered:
        value = obs.metadata.get(FLOW_KEY)
        if value is not None and value != "":
            return str(value)
    return next((a.name for a in agents if not a.entry), None)


# --- Langfuse API bodies ---------------------------------------------------------------------------


def trace_from_langfuse_trace(body: Mapping[str, Any]) -> Trace:
    """From `GET /api/public/traces/{traceId}`: a trace object with `observations` embedded."""
    rows = _newest_by_id([body.get("observations") or []])
    return build_trace(
        str(body.get("id", "")),
        [_from_api(raw) for raw in rows],
        name=body.get("name"),
        output=decode_io(body.get("output")),
    )


def trace_from_observations(pages: Iterable[Mapping[str, Any]], trace_id: str = "") -> Trace:
    """From one or more `GET /api/public/v2/observations` pages."""
    rows = _newest_by_id(page.get("data") or [] for page in pages)
    if not trace_id:
        trace_id = next((str(r["traceId"]) for r in rows if r.get("traceId")), "")
    return build_trace(trace_id, [_from_api(raw) for raw in rows])


def _newest_by_id(row_lists: Iterable[Iterable[Any]]) -> list[Mapping[str, Any]]:
    """Rows de-duplicated by id, keeping the newest `updatedAt`: Langfuse can return an observation
    more than once (across pages, or before its storage merges rows)."""
    newest: dict[str, Mapping[str, Any]] = {}
    for rows in row_lists:
        for raw in rows:
            if not isinstance(raw, dict) or "id" not in raw:
                continue
            kept = newest.get(raw["id"])
            if kept is None or str(raw.get("updatedAt") or "") >= str(kept.get("updatedAt") or ""):
                newest[raw["id"]] = raw
    return list(newest.values())


def _from_api(raw: Mapping[str, Any]) -> Observation:
    metadata = raw.get("metadata")
    if isinstance(metadata, str):
        metadata = decode_io(metadata)
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
        metadata={k: decode_metadata_value(v) for k, v in metadata.items()}
        if isinstance(metadata, dict)
        else {},
        prompt_name=raw.get("promptName"),
        prompt_version=int(version) if isinstance(version, int | str) and str(version).isdigit() else None,
    )


def _timestamp(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def decode_metadata_value(value: Any) -> Any:
    """A metadata value: the SDK JSON-encodes every value (strings too), so decode any JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def decode_io(value: Any) -> Any:
    """An input or output as stored: JSON text of an object, array or string is decoded; anything else
    (plain text, "42", "null") stays the string it is, so a text answer is never turned into a number."""
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        return decode_metadata_value(value)
    return value


def load_trace_file(path: Path) -> Trace:
    """A trace from a JSON file holding either Langfuse API shape; TraceError names what is wrong."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceError(
            f"{path}: cannot read the trace file ({exc}). Fix: check the path given to --trace."
        ) from None
    except ValueError as exc:
        raise TraceError(f"{path}: not JSON ({exc}). Fix: save the Langfuse API response as JSON.") from None
    if isinstance(body, dict) and isinstance(body.get("observations"), list):
        return trace_from_langfuse_trace(body)
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        return trace_from_observations([body])
    raise TraceError(
        f"{path}: not a Langfuse trace (no 'observations' list) nor an observations page (no "
        "'data' list). Fix: save the body of GET /api/public/traces/{id} or "
        "GET /api/public/v2/observations?traceId=..."
    )
