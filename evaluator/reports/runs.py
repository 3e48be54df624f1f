"""Runs as reports read them: a run's header and its result objects, from the local store or rebuilt from
Langfuse scores (reports/remote.py), and the names a user may give a run (`latest`, `previous`, an id, a
name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluator.errors import ConfigError, did_you_mean
from evaluator.results import LATEST, PREVIOUS
from evaluator.storage import Store

__all__ = ["RunRecord", "local_runs", "resolve_run", "stored_headers"]


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    id: str
    name: str
    started_at: str
    finished_at: str | None = None
    info: Mapping[str, Any] = field(default_factory=dict)  # the stored run info (run header)
    results: tuple[Mapping[str, Any], ...] = ()  # result objects, by scenario id

    @property
    def label(self) -> str:
        """The name, and the id when the name is not the id."""
        return self.id if self.name in ("", self.id) else f"{self.name} ({self.id})"

    @property
    def stopped(self) -> str | None:
        """Why the run has fewer results than it set out to (a signal, or every target slot held by a
        hung target); None when it ran to its end."""
        if self.info.get("interrupted"):
            return f"stopped by {self.info.get('signal') or 'an interrupt'}"
        if self.info.get("cut_off"):
            return "cut off: every target slot was held by a hung target"
        if self.finished_at is None:
            return "not finished: killed, or still running"
        return None

    def ref(self) -> dict[str, Any]:
        """The run's id, name and start (and, when it did not run to its end, why: `stopped`)."""
        stopped = {"stopped": self.stopped} if self.stopped else {}
        return {"id": self.id, "name": self.name, "started_at": self.started_at, **stopped}


def local_runs(
    store: Store,
    *,
    last_runs: int | None = None,
    ids: Sequence[str] | None = None,
    on_damaged: Callable[[str], None] = lambda _: None,
) -> list[RunRecord]:
    """Stored runs, oldest first (the last `last_runs` of them; those of `ids`, when given), with at
    least one result each.

    A stored row that is not valid JSON (a write cut short) is left out, and `on_damaged` is told which
    run and which scenario's result (or the run's info) it was, once per run."""
    runs = []
    for row in store.runs(last_runs=last_runs, ids=ids):
        record = RunRecord(
            id=row["id"],
            name=row["name"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            info=row["info"],
            results=tuple(row["results"]),
        )
        if row["damaged"]:
            on_damaged(_damaged(store, record, row["damaged"]))
        if record.results:
            runs.append(record)
    return runs


def stored_headers(store: Store) -> list[RunRecord]:
    """Every stored run that has results, oldest first, without them (`results` empty): enough for
    `resolve_run` to find the runs a command names before their results are read."""
    return [
        RunRecord(
            id=row["id"],
            name=row["name"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            info=row["info"],
        )
        for row in store.runs(results=False)
    ]


def _damaged(store: Store, run: RunRecord, rows: Sequence[str]) -> str:
    what = ", ".join(f"the result of {row}" if row != "run info" else "its info" for row in rows)
    return (
        f"{store.path}: run {run.label}: {what} {'is' if len(rows) == 1 else 'are'} not valid JSON (a "
        "write cut short?), left out of what follows. Fix: to have that run whole, run the suite again."
    )


def resolve_run(runs: Sequence[RunRecord], ref: str, *, where: str) -> RunRecord:
    """The run `ref` names: `latest`, `previous` (the one before the latest), a run id, or a run name (the
    latest run of that name; an id wins over a later run named like it). ConfigError naming the runs
    that exist otherwise."""
    if not runs:
        raise ConfigError(f"no runs with results in {where}. Fix: run `evaluator run` first.")
    if ref == LATEST:
        return runs[-1]
    if ref == PREVIOUS:
        if len(runs) < 2:
            raise ConfigError(
                f'"previous" needs two runs, but {where} has one ({runs[0].label}). Fix: run the suite again.'
            )
        return runs[-2]
    by_id = next((run for run in runs if run.id == ref), None)
    if by_id is not None:
        return by_id
    for run in reversed(runs):
        if run.name == ref:
            return run
    shown = ", ".join(run.label for run in runs[-8:])
    more = f" (and {len(runs) - 8} older)" if len(runs) > 8 else ""
    hint = did_you_mean(ref, [r.name for r in runs] + [r.id for r in runs])
    hint = hint if hint.startswith(" (did you mean") else ""
    raise ConfigError(
        f'no run "{ref}" in {where}{hint}. Runs there: {shown}{more}. '
        "Fix: give a run id or name, or latest / previous."
    )
