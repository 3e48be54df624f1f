"""Reading a trace back from Langfuse, for traces the evaluator did not produce (`validate --trace-id`)
and as a delivery check (`run --verify-langfuse`).

Langfuse makes data readable some seconds after ingestion, and may return an observation twice until
its storage merges rows. So: poll the v2 observations API (all cursor pages, de-duplicated by id) with
backoff until the observation count is stable, or reaches the count we expect, within a deadline; if
that API fails, the traces endpoint is the fallback. Never a fixed sleep.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential,
)

from evaluator.errors import LangfuseAuthError, LangfuseUnavailableError, TraceError
from evaluator.trace import Trace, trace_from_langfuse_trace, trace_from_observations


class TraceReader(Protocol):
    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]: ...
    def trace_body(self, trace_id: str) -> Mapping[str, Any] | None: ...


class _NotSettledError(Exception):
    """The trace is not (fully) readable yet; `trace` is what was read so far."""

    def __init__(self, trace: Trace) -> None:
        super().__init__(f"{trace.observation_count} observations so far")
        self.trace = trace


def read_trace(
    reader: TraceReader,
    trace_id: str,
    *,
    deadline_seconds: float = 60.0,
    expected_observations: int | None = None,
    poll_seconds: float = 0.5,
) -> Trace:
    """The trace as Langfuse stores it, once it has settled; TraceError when it never appears.

    Settled: `expected_observations` are readable, or (not knowing how many to expect) two polls in a
    row saw the same non-zero count.
    """
    seen: list[int] = []

    def poll() -> Trace:
        trace = _read_once(reader, trace_id)
        seen.append(trace.observation_count)
        if expected_observations is not None:
            settled = trace.observation_count >= expected_observations
        else:
            settled = trace.observation_count > 0 and seen[-2:] == [trace.observation_count] * 2
        if not settled:
            raise _NotSettledError(trace)
        return trace

    retrying = Retrying(
        retry=retry_if_exception_type((_NotSettledError, LangfuseUnavailableError)),
        stop=stop_after_delay(deadline_seconds),
        wait=wait_exponential(multiplier=poll_seconds, max=5),
        reraise=False,
    )
    try:
        return retrying(poll)
    except RetryError as exc:
        last = exc.last_attempt.exception()
        if isinstance(last, _NotSettledError) and last.trace.observation_count:
            return last.trace  # readable but incomplete or still changing at the deadline: the best we have
        detail = f" (last error: {last})" if isinstance(last, LangfuseUnavailableError) else ""
        raise TraceError(
            f"trace {trace_id} was not readable in Langfuse within {deadline_seconds:g} s{detail}. Fix: "
            "check the trace id and that the keys belong to its project; ingestion can lag, so a "
            "trace sent moments ago may need a longer wait."
        ) from None


def _read_once(reader: TraceReader, trace_id: str) -> Trace:
    try:
        pages = reader.observation_pages(trace_id)
        return trace_from_observations(pages, trace_id)
    except LangfuseAuthError:
        raise
    except LangfuseUnavailableError:
        body = reader.trace_body(trace_id)  # the older endpoint, as the fallback
        if body is None:
            raise
        return trace_from_langfuse_trace(body)
