"""Scores read back from Langfuse (the `ScoreHistory` role), for `report --source langfuse` and
`compare --source langfuse`: every page of `GET /api/public/v3/scores` (cursor pagination, 100 a page),
with their details (comment, metadata) and subject (the trace they are on).

Cloud read quotas are small, so a 429 waits as long as Retry-After asks (or a growing pause when it does
not say) and tries again, within the deadline. A 5xx (a gateway's 502, a 503 while Langfuse restarts) is
tried again too, after the same growing pause, at most `_SERVER_ERROR_TRIES` times a page: a read of many
pages should not fail on one passing error, nor wait out the deadline on a server that keeps failing.
Other failures raise at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi, api_failure

__all__ = ["LangfuseScoreHistory"]

_SCORES_V3 = "/api/public/v3/scores"
_PAGE = 100
_FIRST_PAUSE_SECONDS = 1.0
_MAX_PAUSE_SECONDS = 30.0
_SERVER_ERROR_TRIES = 3  # a page answered with a 5xx: tried this often in all


class LangfuseScoreHistory:
    def __init__(self, api: LangfuseApi, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._api = api
        self._sleep = sleep

    def all_scores(self, deadline: Deadline, *, from_timestamp: str | None = None) -> list[dict[str, Any]]:
        """Every score of the project (since `from_timestamp`), newest first, as the v3 API shows them."""
        scores: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": _PAGE, "fields": "details,subject"}
            if cursor:
                params["cursor"] = cursor
            if from_timestamp:
                params["fromTimestamp"] = from_timestamp
            page = self._page(params, deadline)
            scores.extend(page.get("data") or [])
            cursor = (page.get("meta") or {}).get("cursor")
            if not cursor:
                return scores

    def _page(self, params: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        what = "reading scores"
        pause = _FIRST_PAUSE_SECONDS
        server_errors = 0
        while True:
            try:
                response = self._api.http("GET", _SCORES_V3, what, deadline=deadline, params=params)
            except LangfuseUnavailableError as exc:
                if exc.status is not None and exc.status >= 500:
                    server_errors += 1
                if not _passing(exc, server_errors):
                    raise
                wait = exc.retry_after if exc.retry_after is not None else pause
                if wait >= deadline.remaining():
                    raise LangfuseUnavailableError(
                        f"{exc}; {'rate-limited' if exc.status == 429 else 'failing'} past the "
                        f"{deadline.seconds:g} s read deadline ([langfuse] read_deadline_seconds)",
                        status=exc.status,
                    ) from None
                self._sleep(wait)
                pause = min(pause * 2, _MAX_PAUSE_SECONDS)
                continue
            if response.status_code >= 300:
                raise api_failure(
                    what, response.status_code, response.headers, response.text, self._api.base_url
                )
            body: dict[str, Any] = response.json()
            return body


def _passing(failure: LangfuseUnavailableError, server_errors: int) -> bool:
    """Whether a failed page is worth asking again: a 429, or a 5xx not yet answered
    `_SERVER_ERROR_TRIES` times."""
    if failure.status == 429:
        return True
    return failure.status is not None and failure.status >= 500 and server_errors < _SERVER_ERROR_TRIES
