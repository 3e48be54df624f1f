"""Where `report` and `compare` read runs from: the local store, or the scores in Langfuse."""

from __future__ import annotations

from typing import Literal

from evaluator._time import Deadline
from evaluator.cli._common import err, langfuse
from evaluator.config import Config
from evaluator.metrics import MetricSet
from evaluator.reports import RunRecord, local_runs, notice, runs_from_scores
from evaluator.storage import Store

Source = Literal["local", "langfuse"]


def load_runs(
    config: Config, source: Source, metrics: MetricSet, *, last: int | None = None
) -> tuple[list[RunRecord], str]:
    """(runs oldest first, where they came from, for messages); runs from Langfuse are rebuilt by
    `metrics`."""
    if source == "local":
        return stored_runs(config, last=last), str(config.store_path)
    with langfuse(
        "--source langfuse", config, alternative=", or read the local store with --source local"
    ) as connection:
        connection.project_id()
        deadline = Deadline(config.settings.langfuse.read_deadline_seconds)
        runs = runs_from_scores(connection.score_history.all_scores(deadline), metrics)
    return (runs[-last:] if last else runs), f"Langfuse at {connection.settings.base_url}"


def stored_runs(config: Config, *, last: int | None = None) -> list[RunRecord]:
    """The local store's runs, oldest first; none, and no store made, where nothing has run yet. A
    damaged row is left out with a warning (stderr) naming its run and scenario."""
    if not config.store_path.exists():
        return []
    store = Store(config.store_path)
    try:
        return local_runs(store, last_runs=last, on_damaged=lambda text: notice(err, "warning", text))
    finally:
        store.close()
