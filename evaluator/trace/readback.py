"""Reading a trace back from Langfuse, for traces the evaluator did not produce (`validate --trace-id`)
and as a delivery check (`run --verify-langfuse`).

Langfuse makes data readable some seconds after ingestion, in batches, and may return an observation
twice until its storage merges rows. So: poll the v2 observations API (all cursor pages, de-duplicated by
id) with backoff until the trace has *settled*, within a deadline; if that API fails, the traces endpoint
is the fallback. Never a fixed sleep. Settled means: the expected number of observations is readable,
or, not knowing how many to expect, the same non-zero count was seen on polls spanning `settle_seconds`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from evaluator.errors import LangfuseAuthError, LangfuseUnavailableError, TraceError
from evaluator.trace.conventions import DEFAULT_RULES, TraceRules
from evaluator.trace.detail import DetailSource
from evaluator.trace.model import Trace
from evaluator.trace.sources import (
    detail_from_langfuse_trace,
    detail_from_observations,
    trace_from_langfuse_trace,
    trace_from_observations,
)

__all__ = ["ReadBack", "TraceReader", "read_trace"]


class TraceReader(Protocol):
    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]: ...
    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True, kw_only=True)
class ReadBack:
    trace: Trace
    settled: bool  # False: the deadline came first; the trace may be incomplete
    detail: DetailSource | None = None  # its observations and usage, from the same rows, on demand


@dataclass(frozen=True, kw_only=True)
class _Read:
    trace: Trace
    detail: DetailSource


class _NotSettledError(Exception):
    """The trace is not (fully) readable yet; `read` is what was read so far."""

    def __init__(self, read: _Read) -> None:
        super().__init__(f"{read.trace.observation_count} observations so far")
        self.read = read


def read_trace(
    reader: TraceReader,
    trace_id: str,
    *,
    deadline_seconds: float = 60.0,
    expected_observations: int | None = None,
    settle_seconds: float = 3.0,
    poll_seconds: float = 0.5,
    rules: TraceRules = DEFAULT_RULES,
) -> ReadBack:
    """The trace as Langfuse stores it; TraceError when nothing of it became readable in time."""
    stable_since: list[tuple[int, float]] = []  # (count, first time seen) of the current run of equal counts

    def poll() -> _Read:
        read = _read_once(reader, trace_id, rules)
        count, now = read.trace.observation_count, time.monotonic()
        if not stable_since or stable_since[0][0] != count:
            stable_since[:] = [(count, now)]
        if expected_observations is not None:
            settled = count >= expected_observations
        else:
            settled = count > 0 and now - stable_since[0][1] >= settle_seconds
        if not settled:
            raise _NotSettledError(read)
        return read

    retrying = Retrying(
        retry=retry_if_exception_type((_NotSettledError, LangfuseUnavailableError)),
        stop=stop_after_delay(deadline_seconds),
        wait=wait_exponential(multiplier=poll_seconds, max=5),
        reraise=False,
    )
    try:
        read = retrying(poll)
        return ReadBack(trace=read.trace, settled=True, detail=read.detail)
    except RetryError as exc:
        last = exc.last_attempt.exception()
        if isinstance(last, _NotSettledError) and last.read.trace.observation_count:
            return ReadBack(trace=last.read.trace, settled=False, detail=last.read.detail)
        unanswered = isinstance(last, LangfuseUnavailableError)
        detail = f" (last error: {last})" if unanswered else ""
        raise TraceError(
            f"trace {trace_id} was not readable in Langfuse within {deadline_seconds:g} s{detail}. Fix: "
            "check the trace id and that the keys belong to its project; ingestion can lag, so a "
            "trace sent moments ago may need a longer wait ([langfuse] read_deadline_seconds).",
            unanswered=unanswered,
        ) from None


def _read_once(reader: TraceReader, trace_id: str, rules: TraceRules) -> _Read:
    try:
        pages = reader.observation_pages(trace_id)
        trace = trace_from_observations(pages, trace_id, rules)
        return _Read(trace=trace, detail=functools.partial(detail_from_observations, pages))
    except LangfuseAuthError:
        raise
    except LangfuseUnavailableError:
        body = reader.trace_body(trace_id)  # the older endpoint, as the fallback
        if body is None:
            raise
        trace = trace_from_langfuse_trace(body, rules)
        return _Read(trace=trace, detail=functools.partial(detail_from_langfuse_trace, body))
