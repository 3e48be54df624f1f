"""Reading traces back from Langfuse (the `TraceReader` role of trace/readback.py)."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi, api_failure
from evaluator.trace import OBSERVATION_FIELDS

__all__ = ["LangfuseTraces"]

# A request made at the read deadline still gets this long, so that the traces endpoint, asked when the
# observations API did not answer in time, gives its own answer (the error the read-back then names).
_LAST_REQUEST_SECONDS = 1.0


class LangfuseTraces:
    def __init__(
        self, api: LangfuseApi, deadline: Deadline | None = None, *, each_seconds: float | None = None
    ) -> None:
        self._api = api
        self._deadline = deadline
        self._each_seconds = each_seconds
        self._each: dict[str, Deadline] = {}  # by trace (or session) id, from its first request

    def within(self, deadline: Deadline) -> LangfuseTraces:
        """This reader, each of its requests taking at most the time left before `deadline` (and at
        least a second) instead of LANGFUSE_TIMEOUT: a read-back polls until its deadline, and a
        request begun just before it would otherwise run on for LANGFUSE_TIMEOUT, twice (the
        observations API, then the traces endpoint as the fallback)."""
        return LangfuseTraces(self._api, deadline)

    def each_within(self, seconds: float) -> LangfuseTraces:
        """As `within`, but each trace read has a deadline of its own, `seconds` from its first request
        (a session's turns, each read within the read deadline)."""
        return LangfuseTraces(self._api, each_seconds=seconds)

    def _timeout(self, key: str) -> float | None:
        deadline = self._deadline
        if deadline is None and self._each_seconds is not None:
            deadline = self._each.get(key)
            if deadline is None:
                deadline = self._each[key] = Deadline(self._each_seconds)
        if deadline is None:
            return None
        return min(float(self._api.timeout), max(_LAST_REQUEST_SECONDS, deadline.remaining()))

    def observation_pages(
        self, trace_id: str, *, expand_metadata: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """Every page of `GET /api/public/v2/observations?traceId=...` (cursor pagination), as JSON;
        the metadata keys of `expand_metadata` whole (Langfuse cuts longer values at 200 characters)."""
        return self._pages(
            "reading observations",
            trace_id,
            trace_id=trace_id,
            fields=OBSERVATION_FIELDS,
            expand_metadata=",".join(expand_metadata) or None,
        )

    def session_pages(self, session_id: str) -> list[dict[str, Any]]:
        """Every page of `GET /api/public/v2/observations?sessionId=...&fields=core,basic`: the
        session's observations, enough to tell its traces apart (`traceId`, `startTime`)."""
        return self._pages(
            f"listing session {session_id}", session_id, session_id=session_id, fields="core,basic"
        )

    def _pages(self, what: str, key: str, **query: Any) -> list[dict[str, Any]]:
        api = self._api
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = api.call(
                what,
                api.client.api.observations.get_many,
                timeout=self._timeout(key),
                limit=1000,
                cursor=cursor,
                **query,
            )
            pages.append(json.loads(page.json()))
            cursor = page.meta.cursor if page.meta else None
            if not cursor or not page.data:
                return pages

    def trace_body(self, trace_id: str) -> dict[str, Any] | None:
        """`GET /api/public/traces/{id}` (no longer in the SDK's client, still served): None on 404."""
        what = f"reading trace {trace_id}"
        path = f"/api/public/traces/{urllib.parse.quote(trace_id, safe='')}"
        response = self._api.http("GET", path, what, timeout=self._timeout(trace_id))
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        try:
            body: dict[str, Any] = response.json()
        except ValueError:
            raise LangfuseUnavailableError(f"Langfuse sent a trace that is not JSON ({trace_id})") from None
        return body
