"""Langfuse experiments (v4): a scenario's trace joins an experiment, as the run of one dataset item,
through the span attributes the SDK's own `Langfuse.run_experiment` writes. Langfuse v4 records
experiments from spans only (`POST /api/public/dataset-run-items` was removed from Langfuse Cloud on
2026-11-16).

On the scenario's root span, and propagated to every span started under it: `langfuse.experiment.id`,
`.name` (the run's name), `.metadata`, `.dataset.id`, `.item.id`, `.item.metadata` and
`.item.root_observation_id` (the root span's own id), and the environment `sdk-experiment` (which the
official SDKs force on experiment traces). On the root span only, as the SDK does: the experiment's
`description` and the item's `expected_output`.

The experiment id is derived as the Langfuse server derives it (`experiment_id`): every run with the
same name on the same dataset is the same experiment, and run-level scores attach to it through
`datasetRunId` = the experiment id.

The SDK propagates experiment attributes only through a private function; its import is guarded. A
later SDK without it leaves `available()` False, and the caller links nothing (and says so).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from langfuse import propagate_attributes
from opentelemetry import trace as otel_trace

__all__ = ["Experiment", "ExperimentLink", "available", "experiment_id", "experiment_url", "linked"]

try:  # private in the SDK (what run_experiment uses): guarded
    from langfuse._client.propagation import PropagatedExperimentAttributes, _propagate_attributes
except ImportError:  # pragma: no cover - a later SDK moved it: experiments are then unavailable
    _propagate_attributes = None  # type: ignore[assignment]

EXPERIMENT_ENVIRONMENT = "sdk-experiment"
EXPERIMENT_DESCRIPTION = "langfuse.experiment.description"
EXPERIMENT_ITEM_EXPECTED_OUTPUT = "langfuse.experiment.item.expected_output"
_ID_SCHEME = "langfuse-experiment-v1"


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """One experiment on a dataset: a run, by its name."""

    id: str
    name: str
    dataset_id: str
    description: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class ExperimentLink:
    """What one scenario's trace carries to join an experiment as the run of its dataset item."""

    experiment: Experiment
    item_id: str
    item_metadata: Mapping[str, Any]
    expected_output: Any


def available() -> bool:
    """Whether the installed SDK can propagate experiment attributes."""
    return _propagate_attributes is not None


def experiment_id(project_id: str, dataset_id: str, run_name: str) -> str:
    """The id Langfuse gives the experiment `run_name` of a dataset: the first 16 hex digits of the
    SHA-256 of the compact JSON array (non-ASCII kept as is, as JavaScript's JSON.stringify writes it)
    ["langfuse-experiment-v1", project id, dataset id, run name]. The server derives the same one, so
    it must match byte for byte."""
    payload = json.dumps(
        [_ID_SCHEME, project_id, dataset_id, run_name], separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def experiment_url(base_url: str, project_id: str, experiment_id: str) -> str:
    """The experiment's results page in the Langfuse UI (as the SDK builds it)."""
    return f"{base_url}/project/{project_id}/experiments/results?baseline={quote(experiment_id, safe='')}"


@contextmanager
def linked(link: ExperimentLink, root_observation_id: str) -> Iterator[None]:
    """While open, the current span (the scenario's root, whose id is `root_observation_id`) and every
    span started under it carry the link. Without the SDK's experiment propagation, nothing is set."""
    if _propagate_attributes is None:  # pragma: no cover - the caller checked `available()`
        yield
        return
    experiment = link.experiment
    otel_trace.get_current_span().set_attributes(
        {
            EXPERIMENT_DESCRIPTION: experiment.description,
            EXPERIMENT_ITEM_EXPECTED_OUTPUT: _json(link.expected_output),
        }
    )
    attributes = PropagatedExperimentAttributes(
        experiment_id=experiment.id,
        experiment_name=experiment.name,
        experiment_metadata=_json(experiment.metadata),
        experiment_dataset_id=experiment.dataset_id,
        experiment_item_id=link.item_id,
        experiment_item_metadata=_json(link.item_metadata),
        experiment_item_root_observation_id=root_observation_id,
    )
    with (
        propagate_attributes(environment=EXPERIMENT_ENVIRONMENT),
        _propagate_attributes(experiment=attributes),
    ):
        yield


def _json(value: Any) -> str:
    """A value as the SDK writes experiment attributes: JSON (a string as it is)."""
    if isinstance(value, str):
        return value
    return json.dumps(dict(value) if isinstance(value, Mapping) else value, default=str)
