"""The local SQLite store: every run, result and score, written as each scenario finishes.

It is also the score outbox. A score bound for Langfuse records its *destination* (the Langfuse base URL
and public key of the run) and stays unsent (`sent_at IS NULL`) until that Langfuse acknowledged it, so
an interrupted run or an unreachable Langfuse loses nothing, and `sync` never posts a score into another
project than its trace's. A score Langfuse refused keeps the reason in `rejected` and is not posted again
unless asked (`sync --retry-rejected`). Scores of embedded runs have no destination: their traces exist
only on this machine, so they are never posted.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError
from evaluator.results import RunInfo, ScenarioResult, run_provenance, totals
from evaluator.results.scores import Score

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,
    interrupted INTEGER NOT NULL DEFAULT 0, info TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(id), scenario_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    status TEXT NOT NULL, result TEXT NOT NULL, finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, scenario_id)
);
CREATE TABLE IF NOT EXISTS scores (
    id TEXT PRIMARY KEY, run_id TEXT NOT NULL, scenario_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    name TEXT NOT NULL, value REAL NOT NULL, data_type TEXT NOT NULL, comment TEXT,
    metadata TEXT NOT NULL, timestamp TEXT NOT NULL,
    destination TEXT,  -- the Langfuse it is bound for; NULL: an embedded run's score, kept locally only
    sent_at TEXT, rejected TEXT
);
CREATE TABLE IF NOT EXISTS span_batches (
    id INTEGER PRIMARY KEY AUTOINCREMENT, destination TEXT NOT NULL, payload BLOB NOT NULL,
    spans INTEGER NOT NULL, kept_at TEXT NOT NULL, sent_at TEXT
);
CREATE INDEX IF NOT EXISTS scores_unsent ON scores(destination, run_id)
    WHERE destination IS NOT NULL AND sent_at IS NULL AND rejected IS NULL;
"""
# A score waits when it is bound for a Langfuse, not yet acknowledged and not rejected.
_UNSENT_QUERY = """SELECT id, trace_id, name, value, data_type, comment, timestamp, metadata FROM scores
    WHERE destination = ? AND sent_at IS NULL AND rejected IS NULL AND (? IS NULL OR run_id = ?)
    ORDER BY timestamp, id"""
_WAITING_QUERY = """SELECT destination, COUNT(*) FROM scores
    WHERE destination IS NOT NULL AND sent_at IS NULL AND rejected IS NULL GROUP BY destination"""
_HISTORY_QUERY = """SELECT results.run_id, runs.name, results.finished_at, results.result FROM results
    JOIN runs ON runs.id = results.run_id
    WHERE results.run_id IN (SELECT id FROM runs ORDER BY started_at DESC LIMIT ?)
    ORDER BY runs.started_at, results.finished_at, results.scenario_id"""
_RUNS_QUERY = """SELECT id, name, started_at, finished_at, info FROM
    (SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?) ORDER BY started_at, rowid"""
_UNSENT_SPANS_QUERY = """SELECT id, payload, spans FROM span_batches
    WHERE destination = ? AND sent_at IS NULL ORDER BY id"""
_COUNT_QUERIES = {
    "all": "SELECT COUNT(*) FROM scores",
    "waiting": """SELECT COUNT(*) FROM scores
        WHERE destination IS NOT NULL AND sent_at IS NULL AND rejected IS NULL""",
    "rejected": "SELECT COUNT(*) FROM scores WHERE rejected IS NOT NULL",
}


class Store:
    """A thread-safe handle on the evaluator database (one connection, one lock)."""

    def __init__(self, path: Path | None) -> None:
        """`path=None`: an in-memory database (tests). ConfigError when the file cannot be used."""
        self.path = path
        self._lock = threading.Lock()
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path or ":memory:", check_same_thread=False, isolation_level=None)
            if path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                # Under WAL, NORMAL keeps every commit through a crash of the process (Ctrl-C, kill);
                # only an OS crash or power loss can take the last commits back.
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot use the store {path} ({exc}). Fix: set [store] path in evaluator.toml "
                "to a writable file."
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise ConfigError(
                    f"cannot write to the store {self.path} ({exc}). Fix: check the disk, and "
                    "that no other program holds the database locked."
                ) from None

    def start_run(self, run: RunInfo) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs (id, name, started_at, info) VALUES (?,?,?,?)",
                (run.id, run.name, run.started_at, json.dumps(asdict(run))),
            )

    def finish_run(self, run: RunInfo, results: Sequence[ScenarioResult]) -> None:
        documents = [r.to_json() for r in results]
        info = {**asdict(run), "totals": totals(results), **run_provenance(run, documents)}
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET finished_at=?, interrupted=?, info=? WHERE id=?",
                (run.finished_at, int(run.interrupted), json.dumps(info), run.id),
            )

    def record(
        self, run_id: str, result: ScenarioResult, scores: Sequence[Score], *, destination: str | None
    ) -> None:
        """A finished scenario and its scores, in one transaction (see `record_many`)."""
        self.record_many(run_id, [(result, scores)], destination=destination)

    def record_many(
        self,
        run_id: str,
        finished: Sequence[tuple[ScenarioResult, Sequence[Score]]],
        *,
        destination: str | None,
    ) -> None:
        """Finished scenarios and their scores, in one transaction. Recording again replaces a result;
        a score whose value or comment changed is marked unsent again, so Langfuse gets the new one."""
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?)",
                [
                    (
                        run_id,
                        result.scenario_id,
                        result.trace_id,
                        result.status,
                        json.dumps(result.to_json(), default=str),
                        result.finished_at,
                    )
                    for result, _ in finished
                ],
            )
            db.executemany(
                """INSERT INTO scores (id, run_id, scenario_id, trace_id, name, value, data_type, comment,
                       metadata, timestamp, destination) VALUES (?,?,?,?,?,?,?,?,?,?,?)
                   ON CONFLICT(id) DO UPDATE SET
                       sent_at = CASE WHEN value = excluded.value AND comment IS excluded.comment
                                      THEN sent_at END,
                       value = excluded.value, comment = excluded.comment, metadata = excluded.metadata""",
                [
                    (
                        s.id,
                        run_id,
                        result.scenario_id,
                        s.trace_id,
                        s.name,
                        s.value,
                        s.data_type,
                        s.comment,
                        json.dumps(s.metadata, default=str),
                        s.timestamp,
                        destination,
                    )
                    for result, scores in finished
                    for s in scores
                ],
            )

    def results(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT result FROM results WHERE run_id=? ORDER BY scenario_id", (run_id,)
            )
            return [json.loads(row[0]) for row in rows]

    def history(self, *, last_runs: int | None = None) -> list[tuple[str, str, str, dict[str, Any]]]:
        """(run id, run name, finished_at, result object) of the last runs, oldest first."""
        with self._lock:
            rows = self._db.execute(_HISTORY_QUERY, (last_runs or -1,)).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def runs(self, *, last_runs: int | None = None) -> list[dict[str, Any]]:
        """The last runs (all by default), oldest first: their row and stored info, and their results."""
        with self._lock:
            rows = self._db.execute(_RUNS_QUERY, (last_runs or -1,)).fetchall()
            results = self._db.execute("SELECT run_id, result FROM results ORDER BY scenario_id").fetchall()
        by_run: dict[str, list[dict[str, Any]]] = {}
        for run_id, document in results:
            by_run.setdefault(run_id, []).append(json.loads(document))
        return [
            {
                "id": r[0],
                "name": r[1],
                "started_at": r[2],
                "finished_at": r[3],
                "info": json.loads(r[4]),
                "results": by_run.get(r[0], []),
            }
            for r in rows
        ]

    def unsent_scores(self, destination: str, *, run_id: str | None = None) -> list[Score]:
        """Scores for `destination` not yet acknowledged nor rejected, oldest first (one run, or all)."""
        with self._lock:
            rows = self._db.execute(_UNSENT_QUERY, (destination, run_id, run_id)).fetchall()
        return [
            Score(
                id=r[0],
                trace_id=r[1],
                name=r[2],
                value=r[3],
                data_type=r[4],
                comment=r[5],
                timestamp=r[6],
                metadata=json.loads(r[7]),
            )
            for r in rows
        ]

    def waiting_by_destination(self) -> dict[str, int]:
        """How many scores wait, per destination."""
        with self._lock:
            rows = self._db.execute(_WAITING_QUERY).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def mark_sent(self, score_ids: Sequence[str], sent_at: str) -> None:
        with self._transaction() as db:
            db.executemany("UPDATE scores SET sent_at=? WHERE id=?", [(sent_at, sid) for sid in score_ids])

    def mark_rejected(self, reasons: Mapping[str, str]) -> None:
        with self._transaction() as db:
            db.executemany(
                "UPDATE scores SET rejected=? WHERE id=?", [(r, sid) for sid, r in reasons.items()]
            )

    def retry_rejected(self, destination: str) -> int:
        """Put rejected scores of `destination` back in the outbox; how many."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE scores SET rejected=NULL WHERE rejected IS NOT NULL AND destination=?", (destination,)
            )
            return cursor.rowcount

    def count_scores(self, *, waiting_only: bool = False, rejected_only: bool = False) -> int:
        """All scores, or those waiting to be sent (any destination), or those Langfuse rejected."""
        query = _COUNT_QUERIES["waiting" if waiting_only else "rejected" if rejected_only else "all"]
        with self._lock:
            return int(self._db.execute(query).fetchone()[0])

    def keep_span_batch(self, destination: str, payload: bytes, spans: int, kept_at: str) -> None:
        """A span batch Langfuse did not take (the OTLP request body), kept for `sync`."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO span_batches (destination, payload, spans, kept_at) VALUES (?,?,?,?)",
                (destination, payload, spans, kept_at),
            )

    def unsent_span_batches(self, destination: str) -> list[tuple[int, bytes, int]]:
        """(id, OTLP request body, number of spans) of the batches still to send, oldest first."""
        with self._lock:
            rows = self._db.execute(_UNSENT_SPANS_QUERY, (destination,)).fetchall()
        return [(int(r[0]), bytes(r[1]), int(r[2])) for r in rows]

    def mark_span_batch_sent(self, batch_id: int, sent_at: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE span_batches SET sent_at=? WHERE id=?", (sent_at, batch_id))

    def close(self) -> None:
        with self._lock:
            self._db.close()
