"""Reading traces back from Langfuse (the `TraceReader` role of trace/readback.py)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi, api_failure
from evaluator.trace import OBSERVATION_FIELDS

__all__ = ["LangfuseTraces"]


class LangfuseTraces:
    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]:
        """Every page of `GET /api/public/v2/observations?traceId=...` (cursor pagination), as JSON."""
        api = self._api
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = api.call(
                "reading observations",
                api.client.api.observations.get_many,
                trace_id=trace_id,
                fields=OBSERVATION_FIELDS,
                limit=1000,
                cursor=cursor,
            )
            pages.append(json.loads(page.json()))
            cursor = page.meta.cursor if page.meta else None
            if not cursor or not page.data:
                return pages

    def trace_body(self, trace_id: str) -> dict[str, Any] | None:
        """`GET /api/public/traces/{id}` (no longer in the SDK's client, still served): None on 404."""
        what = f"reading trace {trace_id}"
        response = self._api.http("GET", f"/api/public/traces/{urllib.parse.quote(trace_id, safe='')}", what)
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        try:
            body: dict[str, Any] = response.json()
        except ValueError:
            raise LangfuseUnavailableError(f"Langfuse sent a trace that is not JSON ({trace_id})") from None
        return body
