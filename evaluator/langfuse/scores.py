"""Scores into Langfuse (the `ScoreSink` role), and the score configs that give their names a type.

Scores do NOT go through the SDK's `create_score` queue (it logs and drops failures), nor through its
API client (its request encoding cost more CPU than the rest of a scenario): each batch is posted as
JSON over one keep-alive connection pool, so every rejection and outage is seen and the score stays in
the local outbox until Langfuse acknowledged it (storage/delivery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from langfuse.api import ConfigCategory, ScoreConfigDataType

from evaluator._secrets import redact
from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
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

        A 207 whose errors name their scores (an `id` or `index` field, or the id in the message)
        costs at most one more POST: an item refused for its content (a 4xx status, or none given) is
        rejected for good, with Langfuse's reason; the items refused with a 5xx or 429 are re-posted
        alone, once, and refused so again they fail the batch as an outage (the delivery's retries and
        deadline take over). A 207 with no errors accepted everything. A 207 that does not name what
        it refused, and a 400 or 413 (which refuse the whole batch for what may be one score), split
        the batch in halves, each posted again, down to the scores at fault. Re-posting is safe: ids
        and timestamps are deterministic, so Langfuse updates, never duplicates.
        """
        return self._post(scores, deadline=deadline, attempt=attempt, repost=True)

    def _post(
        self, scores: Sequence[Score], *, deadline: Deadline | None, attempt: int, repost: bool
    ) -> dict[str, str]:
        if not scores:
            return {}
        what = "posting scores"
        body = [_score_body(s) for s in scores]
        response = self._api.http("POST", _SCORES_PATH, what, deadline=deadline, attempt=attempt, json=body)
        named = _named_errors(response, scores) if response.status_code == 207 else None
        if named is not None:
            return self._named(named, deadline=deadline, attempt=attempt, repost=repost)
        if response.status_code in (400, 413, 207):
            return self._bisected(response, scores, deadline)
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        return {}

    def _named(
        self, errors: Sequence[_ItemError], *, deadline: Deadline | None, attempt: int, repost: bool
    ) -> dict[str, str]:
        """The items a 207 refused for their content, rejected; those refused for a passing reason
        re-posted once (refused so again: an outage, raised)."""
        rejected = {e.score.id: e.reason for e in errors if not e.transient}
        passing = [e for e in errors if e.transient]
        if not passing:
            return rejected
        if not repost:
            first = passing[0]
            raise LangfuseUnavailableError(
                f"Langfuse at {self._api.base_url} refused {len(passing)} score(s) twice for a passing "
                f"reason while posting scores (score {first.score.id}: {first.reason})",
                status=first.status,
            )
        scores = [e.score for e in passing]
        return rejected | self._post(scores, deadline=deadline, attempt=attempt + 1, repost=False)

    def _bisected(
        self, response: httpx.Response, scores: Sequence[Score], deadline: Deadline | None
    ) -> dict[str, str]:
        """The guilty scores, found by halving the batch (a 400 or 413 refuses the whole batch for
        what may be one score; a 207 that names nothing says no more); a single score is the guilty
        one."""
        if len(scores) > 1:
            half = len(scores) // 2
            return {
                **self.post_scores(scores[:half], deadline=deadline),
                **self.post_scores(scores[half:], deadline=deadline),
            }
        reason = (
            "; ".join(_messages(response)) or f"HTTP {response.status_code}: {redact(response.text)[:300]}"
        )
        return {scores[0].id: reason}

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
    """NUMERIC: its range (0-1, or as the definition bounds it: a count has no top); CATEGORICAL: its
    categories (Langfuse numbers them); BOOLEAN: nothing (Langfuse makes its categories itself)."""
    if definition.data_type == "NUMERIC":
        low, high = definition.bounds
        return {key: value for key, value in (("min_value", low), ("max_value", high)) if value is not None}
    if definition.data_type == "CATEGORICAL":
        return {
            "categories": [
                ConfigCategory(label=label, value=float(index))
                for index, label in enumerate(definition.categories)
            ]
        }
    return {}


def _score_body(score: Score) -> dict[str, Any]:
    """The JSON of one score, as `POST /api/public/scores` takes it (openapi.yml: CreateScoreRequest): on
    its trace, or a session score on its session (`sessionId`, no trace), or an observation-level score
    on its observation (`observationId` with its `traceId`)."""
    subject: dict[str, str] = (
        {"sessionId": score.session_id} if score.session_id else {"traceId": score.trace_id}
    )
    if score.observation_id is not None and not score.session_id:
        subject["observationId"] = score.observation_id
    body: dict[str, Any] = {
        "id": score.id,
        **subject,
        "name": score.name,
        "value": score.value,
        "dataType": score.data_type,
        "metadata": dict(score.metadata),
        "timestamp": score.timestamp,
    }
    if score.comment is not None:
        body["comment"] = score.comment
    return body


@dataclass(frozen=True, kw_only=True)
class _ItemError:
    """One item a 207 refused: the score, the item's own status (None when the answer gives none) and
    Langfuse's message."""

    score: Score
    status: int | None
    message: str

    @property
    def transient(self) -> bool:
        """Refused for a passing reason (429, 5xx): the item may go next time; anything else (a 4xx,
        or no status) is about the score itself, and would be refused again."""
        return self.status is not None and (self.status == 429 or self.status >= 500)

    @property
    def reason(self) -> str:
        return f"HTTP {self.status}: {self.message}" if self.status is not None else self.message


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        answer = response.json()
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _messages(response: httpx.Response) -> list[str]:
    """The per-item error messages of an answer (`{"errors": [{"message"}]}`), if any."""
    errors = _json(response).get("errors")
    items = errors if isinstance(errors, list) else []
    return [str(e.get("message", "")) for e in items if isinstance(e, dict)]


def _named_errors(response: httpx.Response, scores: Sequence[Score]) -> list[_ItemError] | None:
    """The items a 207 refused, each found by its error's `id`, its `index` in the batch, or the one
    batch id its message holds; [] when it lists no errors and counts no rejection (the ingestion
    API answers 207 to every batch); None when some error names no score of the batch, or the
    answer counts more rejections than it lists (then the batch is bisected)."""
    answer = _json(response)
    errors, rejected = answer.get("errors", []), answer.get("rejected")
    if not isinstance(errors, list) or (isinstance(rejected, int) and rejected != len(errors)):
        return None
    named = [_item_error(error, scores) for error in errors]
    if any(item is None for item in named):
        return None
    return list({item.score.id: item for item in named if item is not None}.values())


def _item_error(error: Any, scores: Sequence[Score]) -> _ItemError | None:
    if not isinstance(error, dict):
        return None
    message, status = str(error.get("message") or ""), error.get("status")
    by_id = {s.id: s for s in scores}
    index = error.get("index")
    if error.get("id") in by_id:
        score: Score | None = by_id[error["id"]]
    elif type(index) is int and 0 <= index < len(scores):
        score = scores[index]
    else:
        mentioned = [s for s in scores if s.id in message]
        score = mentioned[0] if len(mentioned) == 1 else None
    if score is None:
        return None
    return _ItemError(score=score, status=status if type(status) is int else None, message=message)
