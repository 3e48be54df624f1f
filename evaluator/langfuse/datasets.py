"""Datasets in Langfuse (the `DatasetRegistry` role): a scenario suite as a dataset, and the run-level
metrics of a run as scores of its experiment.

Endpoints (openapi.yml): `GET/POST /api/public/v2/datasets[/{name}]`, `GET/POST /api/public/dataset-items`,
and `POST /api/public/scores` with `datasetRunId` = the experiment id for run-level scores. Item ids are
chosen by the caller, so pushing the same suite again updates nothing that did not change and creates
nothing new.

A run's traces join their items as an experiment through span attributes (`experiments`), never through
`POST /api/public/dataset-run-items`: Langfuse v4 records experiments from spans only, and Langfuse Cloud
removed that endpoint on 2026-11-16.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi, api_failure

__all__ = ["DatasetItem", "LangfuseDatasets", "item_id"]

_DATASETS = "/api/public/v2/datasets"
_ITEMS = "/api/public/dataset-items"
_SCORES = "/api/public/scores"
_PAGE = 100
_MAX_ITEM_ID = 255  # openapi.yml, CreateDatasetItemRequest.id
_NAMESPACE = uuid.UUID("0b9d8a52-6f0e-5d62-9a57-3c1e2f7a4b21")


@dataclass(frozen=True, kw_only=True)
class DatasetItem:
    id: str
    input: Any
    expected_output: Any
    metadata: Mapping[str, Any]


class LangfuseDatasets:
    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def _request(
        self, method: str, path: str, what: str, deadline: Deadline | None, **kwargs: Any
    ) -> httpx.Response:
        return self._api.http(method, path, what, deadline=deadline, **kwargs)

    def _json(self, response: httpx.Response, what: str) -> Any:
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        return response.json()

    def get_dataset(self, name: str, *, deadline: Deadline | None = None) -> dict[str, Any] | None:
        """The dataset, or None when the project has none of that name."""
        what = f'reading dataset "{name}"'
        response = self._request("GET", f"{_DATASETS}/{quote(name, safe='')}", what, deadline)
        if response.status_code == 404:
            return None
        found: dict[str, Any] = self._json(response, what)
        return found

    def ensure_dataset(
        self, name: str, description: str, metadata: Mapping[str, Any], *, deadline: Deadline | None = None
    ) -> tuple[dict[str, Any], bool]:
        """(the dataset, whether it was created now)."""
        existing = self.get_dataset(name, deadline=deadline)
        if existing is not None:
            return existing, False
        what = f'creating dataset "{name}"'
        body = {"name": name, "description": description, "metadata": dict(metadata)}
        return self._json(self._request("POST", _DATASETS, what, deadline, json=body), what), True

    def items(self, dataset: str, *, deadline: Deadline | None = None) -> dict[str, dict[str, Any]]:
        """Every item of the dataset, by id (all pages)."""
        found: dict[str, dict[str, Any]] = {}
        page = 1
        while True:
            what = f'listing the items of dataset "{dataset}"'
            params = {"datasetName": dataset, "page": page, "limit": _PAGE}
            body = self._json(self._request("GET", _ITEMS, what, deadline, params=params), what)
            found |= {str(item["id"]): item for item in body["data"]}
            if page >= int(body["meta"].get("totalPages") or 1):
                return found
            page += 1

    def push_items(
        self, dataset: str, items: Sequence[DatasetItem], *, deadline: Deadline | None = None
    ) -> Iterator[tuple[str, str]]:
        """Create or update items (upserted on their id), one request each: yields (item id, "created",
        "updated" or "unchanged") as each is done, so what was pushed before a failure is known."""
        existing = self.items(dataset, deadline=deadline)
        for item in items:
            old = existing.get(item.id)
            if old is not None and _same(old, item):
                yield item.id, "unchanged"
                continue
            body = {
                "datasetName": dataset,
                "id": item.id,
                "input": item.input,
                "expectedOutput": item.expected_output,
                "metadata": dict(item.metadata),
                "status": "ACTIVE",
            }
            what = f'pushing item "{item.id}" to dataset "{dataset}"'
            self._json(self._request("POST", _ITEMS, what, deadline, json=body), what)
            yield item.id, "updated" if old is not None else "created"

    def post_run_scores(
        self,
        experiment_id: str,
        scores: Mapping[str, float],
        *,
        run_id: str,
        metadata: Mapping[str, Any],
        deadline: Deadline | None = None,
        timestamp: str | None = None,
    ) -> None:
        """Scores on the experiment itself (`run_score_bodies`), posted (`post_score_bodies`)."""
        body = run_score_bodies(experiment_id, scores, run_id=run_id, metadata=metadata, timestamp=timestamp)
        self.post_score_bodies(body, deadline=deadline)

    def post_score_bodies(
        self, body: Sequence[Mapping[str, Any]], *, deadline: Deadline | None = None
    ) -> None:
        """Post run-level scores (as `run_score_bodies` made them, or as the outbox kept them); raise our
        exceptions when Langfuse did not answer with a success, or answered 207 refusing any of them
        (an experiment it does not know yet, say: its traces' spans are not in): none is then taken
        for posted, and posting them again updates those it took (their ids and timestamps are frozen)."""
        if not body:
            return
        what = "posting the run's scores to its experiment"
        response = self._request("POST", _SCORES, what, deadline, json=list(body))
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
        refused = _refusals(response)
        if refused:
            raise LangfuseUnavailableError(
                f"Langfuse at {self._api.base_url} refused {len(refused)} of the {len(body)} scores while "
                f"{what} (HTTP 207): {refused[0][:300]}"
                + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""),
                status=response.status_code,
            )


def run_score_bodies(
    experiment_id: str,
    scores: Mapping[str, float],
    *,
    run_id: str,
    metadata: Mapping[str, Any],
    timestamp: str | None = None,
) -> list[dict[str, Any]]:
    """The request body of scores on the experiment itself (`datasetRunId` = its id, as the SDK attaches
    run-level scores), with ids derived from (run id, experiment id, name) and a frozen `timestamp`, so
    posting again (`sync`) updates them (Langfuse matches id, name and the timestamp's date)."""
    frozen = {"timestamp": timestamp} if timestamp else {}
    return [
        {
            "id": str(uuid.uuid5(_NAMESPACE, f"{run_id}/{experiment_id}/{name}")),
            "datasetRunId": experiment_id,
            "name": name,
            "value": value,
            "dataType": "NUMERIC",
            "metadata": dict(metadata),
            **frozen,
        }
        for name, value in scores.items()
    ]


def _refusals(response: httpx.Response) -> list[str]:
    """The messages of the items a 207 refused (`{"errors": [{"message"}], "rejected": n}`); none when
    it lists no error and counts no rejection (the ingestion API answers 207 to every batch)."""
    if response.status_code != 207:
        return []
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return []
    errors = answer.get("errors")
    listed = errors if isinstance(errors, list) else []
    messages = [str(e.get("message") or e) if isinstance(e, dict) else str(e) for e in listed]
    rejected = answer.get("rejected")
    if not messages and type(rejected) is int and rejected > 0:
        return [f"{rejected} rejected, no reason given"]
    return messages


def item_id(dataset: str, scenario_id: str) -> str:
    """The item id of a scenario in a dataset: readable, stable, unique in the project (Langfuse item ids
    cannot be reused across datasets), at most 255 characters. An id longer than that keeps its start
    and ends with a digest of the dataset and the whole scenario id, so scenario ids that differ only
    past the cut are not one item."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in dataset)[:120]
    readable = f"{slug}--{scenario_id}"
    if len(readable) <= _MAX_ITEM_ID:
        return readable
    digest = hashlib.sha256(json.dumps([dataset, scenario_id]).encode("utf-8")).hexdigest()[:16]
    return f"{readable[: _MAX_ITEM_ID - len(digest) - 1]}-{digest}"


def _same(stored: Mapping[str, Any], item: DatasetItem) -> bool:
    return (
        stored.get("input") == item.input
        and stored.get("expectedOutput") == item.expected_output
        and (stored.get("metadata") or {}) == dict(item.metadata)
        and stored.get("status", "ACTIVE") == "ACTIVE"
    )
