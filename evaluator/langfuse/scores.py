"""Scores into Langfuse (the `ScoreSink` role), and the score configs that give their names a type.

Scores do NOT go through the SDK's `create_score` queue (it logs and drops failures): each batch is
posted synchronously through the SDK's API client, so every rejection and outage is seen and the score
stays in the local outbox until Langfuse acknowledged it (storage/delivery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langfuse.api import (
    ConfigCategory,
    CreateScoreBatchResults,
    CreateScoreRequest,
    ScoreConfigDataType,
    ScoreDataType,
)

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi
from evaluator.metrics import ScoreDefinition
from evaluator.results import Score


class LangfuseScores:
    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def post_scores(self, scores: Sequence[Score], *, deadline: Deadline | None = None) -> dict[str, str]:
        """Post one batch; returns {score id: reason} for scores Langfuse rejected (empty: all accepted).

        A 207 names no ids, and a 400 or 413 refuses the whole batch for what may be one score, so such
        a batch is re-posted one score at a time to learn which; re-posting is safe because ids and
        timestamps are deterministic (Langfuse updates, never duplicates).
        """
        if not scores:
            return {}
        api = self._api
        try:
            response = api.call(
                "posting scores",
                api.client.api.scores.create,
                request=[_score_request(s) for s in scores],
                deadline=deadline,
            )
        except LangfuseUnavailableError as exc:
            if exc.status not in (400, 413):
                raise
            if len(scores) == 1:
                return {scores[0].id: str(exc)}
            return self._post_one_by_one(scores, deadline)
        if isinstance(response, CreateScoreBatchResults) and response.rejected:
            if len(scores) == 1:
                return {scores[0].id: "; ".join(e.message for e in response.errors) or "rejected"}
            return self._post_one_by_one(scores, deadline)
        return {}

    def _post_one_by_one(self, scores: Sequence[Score], deadline: Deadline | None) -> dict[str, str]:
        rejected: dict[str, str] = {}
        for score in scores:
            rejected.update(self.post_scores([score], deadline=deadline))
        return rejected

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


def _score_request(score: Score) -> CreateScoreRequest:
    return CreateScoreRequest(
        id=score.id,
        trace_id=score.trace_id,
        name=score.name,
        value=score.value,
        data_type=ScoreDataType(score.data_type),
        comment=score.comment,
        metadata=dict(score.metadata),
        timestamp=datetime.fromisoformat(score.timestamp),
    )
