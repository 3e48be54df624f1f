"""The local SQLite store: every run, result and score, written as each scenario finishes.

It is also the score outbox: a score row stays unsent (`sent_at IS NULL`) until Langfuse has acknowledged
it, so an interrupted run or an unreachable Langfuse loses nothing. A score Langfuse refused keeps the
reason in `rejected` and is not posted again. Scores of embedded runs (no Langfuse configured) are stored
with `outbox = 0`: their traces exist only locally, so they are never posted.
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

from evaluator.results import RunInfo, ScenarioResult, totals
from evaluator.scores import Score

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
    outbox INTEGER NOT NULL,  -- 1: bound for Langfuse; 0: an embedded run's score, kept locally only
    sent_at TEXT, rejected TEXT
);
CREATE INDEX IF NOT EXISTS scores_unsent ON scores(run_id)
    WHERE outbox = 1 AND sent_at IS NULL AND rejected IS NULL;
"""


class Store:
    """A thread-safe handle on the evaluator database (one connection, one lock)."""

    def __init__(self, path: Path | None) -> None:
        """`path=None`: an in-memory database (tests, `validate`)."""
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path or ":memory:", check_same_thread=False, isolation_level=None)
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def start_run(self, run: RunInfo) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs (id, name, started_at, info) VALUES (?,?,?,?)",
                (run.id, run.name, run.started_at, json.dumps(asdict(run))),
            )

    def finish_run(self, run: RunInfo, results: Sequence[ScenarioResult]) -> None:
        info = {**asdict(run), "totals": totals(results)}
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET finished_at=?, interrupted=?, info=? WHERE id=?",
                (run.finished_at, int(run.interrupted), json.dumps(info), run.id),
            )

    def record(self, run_id: str, result: ScenarioResult, scores: Sequence[Score], *, outbox: bool) -> None:
        """A finished scenario and its scores, in one transaction. Re-recording replaces the result
        and updates the scores, keeping whether a score was already sent."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?)",
                (
                    run_id,
                    result.scenario_id,
                    result.trace_id,
                    result.status,
                    json.dumps(result.to_json(), default=str),
                    result.finished_at,
                ),
            )
            db.executemany(
                """INSERT INTO scores (id, run_id, scenario_id, trace_id, name, value, data_type,
                       comment, metadata, timestamp, outbox) VALUES (?,?,?,?,?,?,?,?,?,?,?)
                   ON CONFLICT(id) DO UPDATE SET value=excluded.value, comment=excluded.comment,
                       metadata=excluded.metadata""",
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
                        int(outbox),
                    )
                    for s in scores
                ],
            )

    def results(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT result FROM results WHERE run_id=? ORDER BY scenario_id", (run_id,)
            )
            return [json.loads(row[0]) for row in rows]

    def unsent_scores(self, *, run_id: str | None = None) -> list[Score]:
        """Scores not yet acknowledged nor rejected, oldest first (of one run, or all)."""
        query = (
            "SELECT id, trace_id, name, value, data_type, comment, timestamp, metadata FROM scores "
            "WHERE outbox = 1 AND sent_at IS NULL AND rejected IS NULL AND (? IS NULL OR run_id = ?) "
            "ORDER BY timestamp, id"
        )
        with self._lock:
            rows = self._db.execute(query, (run_id, run_id)).fetchall()
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

    def mark_sent(self, score_ids: Sequence[str], sent_at: str) -> None:
        with self._transaction() as db:
            db.executemany("UPDATE scores SET sent_at=? WHERE id=?", [(sent_at, sid) for sid in score_ids])

    def mark_rejected(self, reasons: Mapping[str, str]) -> None:
        with self._transaction() as db:
            db.executemany(
                "UPDATE scores SET rejected=? WHERE id=?", [(r, sid) for sid, r in reasons.items()]
            )

    def count_scores(self, *, unsent_only: bool = False) -> int:
        """All scores, or those still waiting to be sent (not sent, not rejected)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*), SUM(outbox = 1 AND sent_at IS NULL AND rejected IS NULL) FROM scores"
            ).fetchone()
        return int((row[1] or 0) if unsent_only else row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
