"""Where `report` and `compare` read runs from: the local store, or the scores in Langfuse."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from evaluator._time import Deadline
from evaluator.cli._common import err, langfuse
from evaluator.config import Config
from evaluator.errors import LangfuseUnavailableError
from evaluator.metrics import MetricSet
from evaluator.reports import RunRecord, local_runs, notice, resolve_run, runs_from_scores, stored_headers
from evaluator.results import with_dialogues, with_dialogues_for
from evaluator.storage import Store

if TYPE_CHECKING:
    from evaluator.langfuse import LangfuseConnection

Source = Literal["local", "langfuse"]
DIALOGUE_SCORE_PREFIX = "dialogue_"  # a run with these session scores had dialogues


def load_runs(
    config: Config, source: Source, metrics: MetricSet, *, last: int | None = None
) -> tuple[list[RunRecord], str, MetricSet]:
    """(runs oldest first, where they came from, for messages, the metrics to read them by: `metrics`,
    with the dialogue metric when they hold dialogues); runs from Langfuse are rebuilt by those."""
    if source == "local":
        runs = stored_runs(config, last=last)
        return runs, str(config.store_path), with_dialogues_for(metrics, _documents(runs))
    with langfuse(
        "--source langfuse", config, alternative=", or read the local store with --source local"
    ) as connection:
        scores = _all_scores(connection, config)
        if any(str(score.get("name", "")).startswith(DIALOGUE_SCORE_PREFIX) for score in scores):
            metrics = with_dialogues(metrics)
        runs = runs_from_scores(scores, metrics)
    return (runs[-last:] if last else runs), f"Langfuse at {connection.settings.base_url}", metrics


def _all_scores(connection: LangfuseConnection, config: Config) -> list[dict[str, Any]]:
    """Every score of the project; Langfuse unreachable, or failing past the retries, is said with the fix."""
    try:
        connection.project_id()
        return connection.score_history.all_scores(Deadline(config.settings.langfuse.read_deadline_seconds))
    except LangfuseUnavailableError as exc:
        fix = (
            "try again later, or raise [langfuse] read_deadline_seconds"
            if exc.status == 429
            else "check that Langfuse is up at LANGFUSE_BASE_URL and reachable from here, then try again"
        )
        raise LangfuseUnavailableError(
            f"{exc}. Fix: {fix}; or read the local store with --source local.", status=exc.status
        ) from None


def _documents(runs: list[RunRecord]) -> Iterator[Mapping[str, Any]]:
    return (document for run in runs for document in run.results)


def compared_runs(
    config: Config, source: Source, metrics: MetricSet, refs: Sequence[str]
) -> tuple[list[RunRecord], str, MetricSet]:
    """The runs `refs` name (`latest`, `previous`, an id, a name: `resolve_run`), each with its results,
    where they came from, and the metrics to read them by, as `load_runs` gives them. From the local
    store only those runs' results are read: comparing two runs of a store of hundreds reads two."""
    if source == "langfuse":
        runs, where, metrics = load_runs(config, source, metrics)
        return [resolve_run(runs, ref, where=where) for ref in refs], where, metrics
    where = str(config.store_path)
    if not config.store_path.exists():
        return [resolve_run([], ref, where=where) for ref in refs], where, metrics
    store = Store.reading(config.store_path)
    try:
        chosen = _named_runs(store, refs, where)
        return chosen, where, with_dialogues(metrics) if store.has_dialogues() else metrics
    finally:
        store.close()


def _named_runs(store: Store, refs: Sequence[str], where: str) -> list[RunRecord]:
    """The runs `refs` name, found among the stored runs' headers, then read whole. A run whose every
    result row is damaged has none to show, so it is no run to name: then the store is read whole, as
    `stored_runs` reads it, and the names resolved again."""
    warnings: list[str] = []
    headers = stored_headers(store)
    wanted = [resolve_run(headers, ref, where=where) for ref in refs]
    found = {
        run.id: run for run in local_runs(store, ids=[run.id for run in wanted], on_damaged=warnings.append)
    }
    if all(run.id in found for run in wanted):
        for text in warnings:
            notice(err, "warning", text)
        return [found[run.id] for run in wanted]
    runs = local_runs(store, on_damaged=lambda text: notice(err, "warning", text))
    return [resolve_run(runs, ref, where=where) for ref in refs]


def stored_runs(config: Config, *, last: int | None = None) -> list[RunRecord]:
    """The local store's runs, oldest first; none, and no store made, where nothing has run yet. A
    damaged row is left out with a warning (stderr) naming its run and scenario."""
    if not config.store_path.exists():
        return []
    store = Store.reading(config.store_path)
    try:
        return local_runs(store, last_runs=last, on_damaged=lambda text: notice(err, "warning", text))
    finally:
        store.close()
