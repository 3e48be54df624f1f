"""Scores into Langfuse (the `ScoreSink` role), and the score configs that give their names a type.

Scores do NOT go through the SDK's `create_score` queue (it logs and drops failures), nor through its
API client (its request encoding cost more CPU than the rest of a scenario): each batch is posted as
JSON over one keep-alive connection pool, so every rejection and outage is seen and the score stays in
the local outbox until Langfuse acknowledged it (storage/delivery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from langfuse.api import ConfigCategory, ScoreConfigDataType

from evaluator._time import Deadline
from evaluator.langfuse._http import LangfuseApi, api_failure
from evaluator.metrics import ScoreDefinition
from evaluator.results import Score

__all__ = ["LangfuseScores"]

_SCORES_PATH = "/api/public/scores"


class LangfuseScores:
    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def post_scores(
        self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
    ) -> dict[str, str]:
        """Post one batch; returns {score id: reason} for scores Langfuse rejected (empty: all accepted).

        After a 207, only the rejected scores are re-posted when the answer names them (by id); a 207
        that does not, and a 400 or 413 (which refuse the whole batch for what may be one score),
        split the batch in halves, each posted again, down to the scores at fault. Re-posting is safe:
        ids and timestamps are deterministic, so Langfuse updates, never duplicates.
        """
        if not scores:
            return {}
        what = "posting scores"
        body = [_score_body(s) for s in scores]
        response = self._api.http("POST", _SCORES_PATH, what, deadline=deadline, attempt=attempt, json=body)
        if response.status_code in (400, 413, 207):
            return self._rejected(response, scores, deadline)
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        return {}

    def _rejected(
        self, response: httpx.Response, scores: Sequence[Score], deadline: Deadline | None
    ) -> dict[str, str]:
        """The scores a 207 named, else the guilty ones found by halving the batch (a 400 or 413 refuses
        the whole batch for what may be one score; a 207 that names no ids says no more)."""
        named = _rejected_by_id(response, scores) if response.status_code == 207 else None
        if named is not None:
            return named
        if len(scores) > 1:
            return self._split(scores, deadline)
        reason = "; ".join(_errors(response)) or f"HTTP {response.status_code}: {response.text[:300]}"
        return {scores[0].id: reason}

    def _split(self, scores: Sequence[Score], deadline: Deadline | None) -> dict[str, str]:
        half = len(scores) // 2
        return {
            **self.post_scores(scores[:half], deadline=deadline),
            **self.post_scores(scores[half:], deadline=deadline),
        }

    def ensure_score_configs(self, definitions: Sequence[ScoreDefinition], deadline: Deadline) -> list[str]:
        """Create a score config for each name Langfuse has none for, within `deadline` (no request
        starts after it, none outlasts it); returns the names created."""
        api = self._api
        existing: set[str] = set()
        page = 1
        while True:
            configs = api.call(
                "listing score configs",
                api.client.api.score_configs.get,
                page=page,
                limit=100,
                deadline=deadline,
            )
            existing.update(c.name for c in configs.data)
            if page >= (configs.meta.total_pages or 1):
                break
            page += 1
        created = []
        for definition in definitions:
            if definition.name in existing:
                continue
            api.call(
                "creating a score config",
                api.client.api.score_configs.create,
                name=definition.name,
                data_type=ScoreConfigDataType(definition.data_type),
                description=definition.description,
                deadline=deadline,
                **_config_shape(definition),
            )
            created.append(definition.name)
        return created


def _config_shape(definition: ScoreDefinition) -> dict[str, Any]:
    """NUMERIC: the range 0-1; CATEGORICAL: its categories (Langfuse numbers them); BOOLEAN: nothing
    (Langfuse makes its categories itself)."""
    if definition.data_type == "NUMERIC":
        return {"min_value": 0.0, "max_value": 1.0}
    if definition.data_type == "CATEGORICAL":
        return {
            "categories": [
                ConfigCategory(label=label, value=float(index))
                for index, label in enumerate(definition.categories)
            ]
        }
    return {}


def _score_body(score: Score) -> dict[str, Any]:
    """The JSON of one score, as `POST /api/public/scores` takes it (openapi.yml: CreateScoreRequest)."""
    body: dict[str, Any] = {
        "id": score.id,
        "traceId": score.trace_id,
        "name": score.name,
        "value": score.value,
        "dataType": score.data_type,
        "metadata": dict(score.metadata),
        "timestamp": score.timestamp,
    }
    if score.comment is not None:
        body["comment"] = score.comment
    return body


def _errors(response: httpx.Response) -> list[str]:
    """The per-item error messages of a 207 (`{"accepted", "rejected", "errors": [{"message"}]}`)."""
    try:
        errors = response.json().get("errors") or []
    except (ValueError, AttributeError):
        return []
    return [str(e.get("message", "")) for e in errors if isinstance(e, dict)]


def _rejected_by_id(response: httpx.Response, scores: Sequence[Score]) -> dict[str, str] | None:
    """{id: reason} when every rejection the 207 counts names its score's id in its message; else
    None (then the batch is bisected to find them)."""
    try:
        count = int(response.json().get("rejected", -1))
    except (ValueError, AttributeError, TypeError):
        return None
    named: dict[str, str] = {}
    for message in _errors(response):
        ids = [s.id for s in scores if s.id in message]
        if len(ids) != 1:
            return None
        named[ids[0]] = message
    return named if len(named) == count else None
