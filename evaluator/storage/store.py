"""The local SQLite store: every run, result and score, written as each scenario finishes.

It is also the score outbox. A score bound for Langfuse records its *destination* (the Langfuse base URL
and public key of the run) and stays unsent (`sent_at IS NULL`) until that Langfuse acknowledged it, so
an interrupted run or an unreachable Langfuse loses nothing, and `sync` never posts a score into another
project than its trace's. A score Langfuse refused keeps the reason in `rejected` and is not posted again
unless asked (`sync --retry-rejected`). Scores of embedded runs have no destination: their traces exist
only on this machine, so they are never posted.

A score's `value` column holds a number, or for a CATEGORICAL score its category's name (SQLite keeps
a text that is not a number as text in a REAL column); it is read back by the score's data type.

It is also the judges' verdict cache (`judge.VerdictCache`): a scored judgement by (judge prompt name and
version, model, sha256 of the exact messages), so re-running an unchanged scenario does not pay again.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from evaluator._time import utc_now
from evaluator.errors import StoreError, StoreMovedError
from evaluator.metrics import MetricSet
from evaluator.results import RunInfo, ScenarioResult, Score, run_provenance, totals

__all__ = ["DeliveryStatus", "Finished", "Store", "VerdictKey"]


@dataclass(frozen=True, kw_only=True)
class DeliveryStatus:
    """What Langfuse has of one run (or of everything) bound for one destination, as far as it
    answered: spans it took, scores it acknowledged, and what still waits in the outbox."""

    spans: int  # captured
    spans_confirmed: int
    traces: int
    traces_waiting: int  # not whole in Langfuse yet: `sync` sends them again
    scores: int
    scores_confirmed: int
    scores_waiting: int  # of which `scores_held` wait for their trace to be in Langfuse
    scores_held: int
    scores_rejected: int
    experiments_waiting: int = 0  # runs whose run-level scores their experiment has not acknowledged

    @property
    def complete(self) -> bool:
        return (
            not self.traces_waiting
            and not self.scores_waiting
            and not self.scores_rejected
            and not self.experiments_waiting
        )


class VerdictKey(Protocol):
    """What a cached verdict is kept under (judge.CacheKey is one): the judge prompt's name and
    version, the model, and the sha256 of the exact messages."""

    @property
    def prompt_name(self) -> str: ...
    @property
    def prompt_version(self) -> int: ...
    @property
    def model(self) -> str: ...
    @property
    def inputs_sha256(self) -> str: ...


class KeptTrace(NamedTuple):
    """The captured spans of one more trace of a scenario (a dialogue's turns, one each, in its
    session; a judgement's, in none), kept as `Finished.spans` keeps a single trace's."""

    trace_id: str
    spans: bytes
    span_count: int
    late_spans: bool
    session_id: str | None  # None: the trace gates no session score (a judge's)


class Finished(NamedTuple):
    """A finished scenario as it is recorded: the result, its scores and (connected runs) the OTLP
    request body of the spans captured for it. `late_spans`: its capture closed while the target still
    ran (a timeout), so spans of its trace may end, and be exported, after the ones kept. A dialogue
    keeps its turns' traces apart in `traces` (each is in Langfuse on its own: the exporter counts
    spans per trace), `spans` None. The judges' traces of a connected run are in `traces` too."""

    result: ScenarioResult
    scores: Sequence[Score]
    spans: bytes | None = None
    span_count: int = 0
    late_spans: bool = False
    traces: Sequence[KeptTrace] = ()


T = TypeVar("T")
# A score waits when it is bound for a Langfuse, not yet acknowledged and not rejected (more below).
_WAITING = "destination IS NOT NULL AND sent_at IS NULL AND rejected IS NULL"
_SCHEMA = f"""
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
    id TEXT NOT NULL, run_id TEXT NOT NULL, scenario_id TEXT NOT NULL, trace_id TEXT NOT NULL,
    name TEXT NOT NULL, value REAL NOT NULL, data_type TEXT NOT NULL, comment TEXT,
    metadata TEXT NOT NULL, timestamp TEXT NOT NULL,
    destination TEXT,  -- the Langfuse it is bound for; NULL: an embedded run's score, kept locally only
    sent_at TEXT, rejected TEXT,
    session_id TEXT,  -- a session score's session (its subject); NULL: a score of its trace
    PRIMARY KEY (run_id, scenario_id, id)  -- see below
);
CREATE TABLE IF NOT EXISTS traces (  -- every span a connected run captured, durable with its result
    destination TEXT NOT NULL, trace_id TEXT NOT NULL, run_id TEXT NOT NULL, scenario_id TEXT NOT NULL,
    payload BLOB NOT NULL,  -- the OTLP request body of the captured spans, for `sync` to send again
    spans INTEGER NOT NULL, sent_at TEXT,  -- sent_at: `sync` sent the payload and Langfuse took it
    late_spans INTEGER NOT NULL DEFAULT 0,  -- 1: spans may have ended after the capture (a timeout)
    session_id TEXT,  -- a dialogue turn's trace: the dialogue's session; NULL: a scenario's own or a judge's
    PRIMARY KEY (destination, trace_id)
);
CREATE TABLE IF NOT EXISTS span_acks (  -- spans of a trace the SDK's exporter delivered
    destination TEXT NOT NULL, trace_id TEXT NOT NULL, spans INTEGER NOT NULL,
    PRIMARY KEY (destination, trace_id)
);
CREATE TABLE IF NOT EXISTS verdicts (
    prompt_name TEXT NOT NULL, prompt_version INTEGER NOT NULL, model TEXT NOT NULL,
    inputs_sha256 TEXT NOT NULL, entry TEXT NOT NULL, kept_at TEXT NOT NULL,
    PRIMARY KEY (prompt_name, prompt_version, model, inputs_sha256)
);
CREATE INDEX IF NOT EXISTS scores_unsent ON scores(destination, run_id) WHERE {_WAITING};
CREATE TABLE IF NOT EXISTS experiment_scores (  -- a run's run-level scores, for its Langfuse experiment
    run_id TEXT NOT NULL, destination TEXT NOT NULL, body TEXT NOT NULL, sent_at TEXT,
    PRIMARY KEY (run_id, destination)
);
"""
# A score's id (results/scores.py) is a UUID5 of its run, a subject of one scenario (a trace of it, its
# session, an observation or agent of those) and its name, so an id names one (run, scenario) and the
# key (run_id, scenario_id, id) is as unique as the id. Keyed so, a scenario's scores sit together in
# the key's index: recording them touches a page or two of it, where keyed by the id alone (random)
# each score touched a page of its own, written again at every commit (a dialogue turn records some
# 14 scores). Scores are looked up by id only while they wait to be sent: `scores_waiting_id` holds
# those alone, so it stays small. Stores made before keep their key on the id (`_score_key`).
_WAITING_ID_INDEX = f"CREATE INDEX IF NOT EXISTS scores_waiting_id ON scores(id) WHERE {_WAITING}"
# A score waits when it is bound for a Langfuse, not yet acknowledged and not rejected. It may go once
# its trace is in Langfuse (or when forced), so no score lands on a trace Langfuse does not have: a
# trace is in Langfuse when it was re-sent from the store, or the exporter delivered as many of its
# spans as were captured. The exporter counts spans per trace, so that count proves nothing for a
# trace with late spans (a timed-out target's, ending after its capture closed: they would count in
# place of kept ones the exporter dropped); such a trace is in Langfuse only once re-sent. A score
# with no trace row (from before spans were kept) counts as on a trace Langfuse has. A session score
# (a dialogue's) waits, besides, until every trace of its session (its turns') is in Langfuse.
_IN_LANGFUSE = """(traces.sent_at IS NOT NULL
    OR (NOT traces.late_spans AND COALESCE(span_acks.spans, 0) >= traces.spans))"""
_UNSENT_QUERY = f"""SELECT scores.id, scores.trace_id, name, value, data_type, comment, timestamp, metadata,
    scores.session_id
    FROM scores
    LEFT JOIN traces ON traces.destination = scores.destination AND traces.trace_id = scores.trace_id
    LEFT JOIN span_acks
        ON span_acks.destination = scores.destination AND span_acks.trace_id = scores.trace_id
    WHERE scores.destination = ? AND scores.sent_at IS NULL AND rejected IS NULL
    AND (? IS NULL OR scores.run_id = ?)
    AND (? OR ((traces.trace_id IS NULL OR {_IN_LANGFUSE})
        AND (scores.session_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM traces LEFT JOIN span_acks
                ON span_acks.destination = traces.destination AND span_acks.trace_id = traces.trace_id
            WHERE traces.destination = scores.destination AND traces.session_id = scores.session_id
            AND NOT {_IN_LANGFUSE}))))
    ORDER BY timestamp, scores.id"""  # noqa: S608 - constants only
_SPAN_STATUS_QUERY = """SELECT COUNT(*), COALESCE(SUM(traces.spans), 0),
    COALESCE(SUM(CASE WHEN sent_at IS NOT NULL THEN traces.spans WHEN late_spans THEN 0
                      ELSE MIN(COALESCE(span_acks.spans, 0), traces.spans) END), 0),
    COALESCE(SUM(sent_at IS NULL AND (late_spans OR COALESCE(span_acks.spans, 0) < traces.spans)), 0)
    FROM traces LEFT JOIN span_acks
        ON span_acks.destination = traces.destination AND span_acks.trace_id = traces.trace_id
    WHERE traces.destination = ? AND (? IS NULL OR run_id = ?)"""
_SCORE_STATUS_QUERY = """SELECT COUNT(*), COALESCE(SUM(sent_at IS NOT NULL), 0),
    COALESCE(SUM(sent_at IS NULL AND rejected IS NULL), 0), COALESCE(SUM(rejected IS NOT NULL), 0)
    FROM scores WHERE destination = ? AND (? IS NULL OR run_id = ?)"""
_UNSENT_TRACES_QUERY = """SELECT traces.trace_id, payload, traces.spans FROM traces
    LEFT JOIN span_acks
        ON span_acks.destination = traces.destination AND span_acks.trace_id = traces.trace_id
    WHERE traces.destination = ? AND (? IS NULL OR run_id = ?) AND sent_at IS NULL
    AND (late_spans OR COALESCE(span_acks.spans, 0) < traces.spans) ORDER BY traces.rowid"""
_WAITING_QUERY = f"SELECT destination, COUNT(*) FROM scores WHERE {_WAITING} GROUP BY destination"  # noqa: S608
_HISTORY_QUERY = """SELECT results.run_id, runs.name, results.finished_at, results.result FROM results
    JOIN runs ON runs.id = results.run_id
    WHERE results.run_id IN (SELECT id FROM runs ORDER BY started_at DESC LIMIT ?)
    ORDER BY runs.started_at, results.finished_at, results.scenario_id"""
_VERDICT_QUERY = """SELECT entry FROM verdicts
    WHERE prompt_name = ? AND prompt_version = ? AND model = ? AND inputs_sha256 = ?"""
# The last N runs with results (N = -1: all of them), of those the ids given (`_ids_clause`), and the
# results of those runs only: a report of the last 5 runs of a store of 200, or a comparison of two,
# decodes those runs' result objects, not 200 runs'. Plain SQL: no JSON1 functions, which SQLite
# builds before 3.38 may lack.
_LAST_RUNS = """SELECT * FROM runs WHERE id IN (SELECT run_id FROM results){ids}
    ORDER BY started_at DESC, rowid DESC LIMIT ?"""
_RUNS_QUERY = """SELECT id, name, started_at, finished_at, info FROM ({last})
    ORDER BY started_at, rowid"""
_RUNS_RESULTS_QUERY = """SELECT run_id, scenario_id, result FROM results
    WHERE run_id IN (SELECT id FROM ({last})) ORDER BY scenario_id"""
# Whether a stored result is a dialogue's, found by SQLite's JSON1 where it has it; else (an older
# SQLite built without it) by decoding the results.
_DIALOGUES_QUERY = """SELECT EXISTS(SELECT 1 FROM results
    WHERE CASE WHEN json_valid(result) THEN json_extract(result, '$.kind') END = 'dialogue')"""
_COUNT_QUERIES = {
    "all": "SELECT COUNT(*) FROM scores",
    "waiting": f"SELECT COUNT(*) FROM scores WHERE {_WAITING}",  # noqa: S608 - constants only
    "rejected": "SELECT COUNT(*) FROM scores WHERE rejected IS NOT NULL",
}


class Store:
    """A thread-safe handle on the evaluator database (one connection, one lock)."""

    def __init__(self, path: Path | None, *, read_only: bool = False) -> None:
        """`path=None`: an in-memory database (tests). StoreError when the file cannot be used.
        `read_only`: a store in a place that cannot be written (an archived store, a CI artifact),
        to read from only (`reading`)."""
        self.path = path
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, int, str, str], tuple[str, str]] = {}  # verdicts not written yet
        db = None
        try:
            if read_only and path is not None:
                db = _open_read_only(path)
            else:
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                db = _open(path)
            self._score_key = _score_key(db)
            # the file opened, written to only while still at its path (absolute: a target may chdir)
            self._at = Path(os.path.abspath(path)) if path is not None else None
            self._file = _file_identity(self._at)
        except (OSError, sqlite3.Error) as exc:
            if db is not None:  # a damaged store: opened, but not a store
                db.close()
            raise _store_error(path, exc, writing=False) from None
        self._db = db
        # A handle dropped without `close()` (a script's, a notebook's, a test's `Store(None)`) closes
        # its connection when collected, as it did before Python 3.13, where an unclosed connection
        # warns (ResourceWarning). Not at exit: a daemon thread may still be writing then.
        weakref.finalize(self, db.close).atexit = False

    @classmethod
    def reading(cls, path: Path) -> Store:
        """The store at `path`, to read from: as any store where it can be written, else read as it
        is (report and compare on a store in a read-only place)."""
        try:
            return cls(path)
        except StoreError:
            if os.access(path.parent, os.W_OK):
                raise
            return cls(path, read_only=True)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. A failure (disk full, locked past the busy timeout, read-only, a
        damaged page) rolls back this transaction only and raises a StoreError: what earlier ones
        committed stays. A file no longer at its path (deleted, moved or replaced) is not written to:
        StoreMovedError."""
        with self._lock:
            self._check_in_place()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    _insert(
                        self._db,
                        "INSERT OR REPLACE INTO verdicts",
                        [(*key, *row) for key, row in self._kept.items()],
                    )
                    yield self._db
                except BaseException:
                    _rollback(self._db)
                    raise
                self._db.execute("COMMIT")
                self._kept.clear()
            except sqlite3.Error as exc:
                _rollback(self._db)  # a COMMIT that failed leaves its transaction open
                raise _store_error(self.path, exc, writing=True) from None

    def _check_in_place(self) -> None:
        """StoreMovedError when `path` no longer names the file this store opened: SQLite would go on
        writing to that file, deleted or not, and the writes would be lost with it."""
        if self._file is None:
            return
        try:
            now = _file_identity(self._at)
        except OSError:
            now = None
        if now == self._file:
            return
        there = (
            "no file is there now). What was written to it since it was opened went with the file it had open"
            if now is None
            else "another file is there now). What was written to it since it was opened went to the file "
            "it had open, not to that one (though the -wal file beside it may still hold some of it, and "
            "make it no intact database: check it with `sqlite3 FILE 'PRAGMA integrity_check'`)"
        )
        raise StoreMovedError(
            f"cannot write to the store {self.path} (it was deleted, moved or replaced while in use: {there}"
            ", and nothing more is written to it. Fix: leave the store (and its folder) in place while a "
            f"command uses it, then run the command again, {_ANOTHER_PATH}."
        )

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, to read from; a StoreError when the file cannot be read (a damaged page)."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc, writing=False) from None

    def start_run(self, run: RunInfo) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs (id, name, started_at, info) VALUES (?,?,?,?)",
                (run.id, run.name, run.started_at, json.dumps(asdict(run))),
            )

    def finish_run(
        self,
        run: RunInfo,
        results: Sequence[ScenarioResult],
        documents: Sequence[Mapping[str, Any]] | None = None,
        metrics: MetricSet | None = None,
    ) -> None:
        """The run's end, totals and provenance (the figures of `metrics`: the results' own by default);
        `documents` are the results' JSON objects when the caller has them already (`run_to_json` needs
        them too)."""
        documents = [r.to_json() for r in results] if documents is None else documents
        metrics = metrics or (results[0].metrics if results else None)
        info = {**asdict(run), "totals": totals(results), **run_provenance(run, documents, metrics)}
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET finished_at=?, interrupted=?, info=? WHERE id=?",
                (run.finished_at, int(run.interrupted), json.dumps(info), run.id),
            )

    def record(
        self, run_id: str, result: ScenarioResult, scores: Sequence[Score], *, destination: str | None
    ) -> None:
        """A finished scenario and its scores, in one transaction (see `record_many`)."""
        self.record_many(run_id, [Finished(result, scores)], destination=destination)

    def record_many(
        self,
        run_id: str,
        finished: Sequence[Finished],
        *,
        destination: str | None,
    ) -> None:
        """Finished scenarios with their scores and captured spans, in one transaction. Recording again
        replaces a result; a score whose value or comment changed is marked unsent again, so Langfuse
        gets the new one. Spans are kept only for a destination (embedded traces never leave)."""
        encoded = _Encoded()  # scores that share a metadata object (a turn's, say) share its JSON
        with self._transaction() as db:
            if destination is not None:
                _insert(
                    db,
                    "INSERT OR REPLACE INTO traces "
                    "(destination, trace_id, run_id, scenario_id, payload, spans, late_spans, session_id)",
                    [
                        (
                            destination,
                            f.result.trace_id,
                            run_id,
                            f.result.scenario_id,
                            f.spans,
                            f.span_count,
                            int(f.late_spans),
                            None,
                        )
                        for f in finished
                        if f.spans is not None
                    ]
                    + [
                        (
                            destination,
                            kept.trace_id,
                            run_id,
                            f.result.scenario_id,
                            kept.spans,
                            kept.span_count,
                            int(kept.late_spans),
                            kept.session_id,
                        )
                        for f in finished
                        for kept in f.traces
                    ],
                )
            _insert(
                db,
                "INSERT OR REPLACE INTO results",
                [
                    (
                        run_id,
                        result.scenario_id,
                        result.trace_id,
                        result.status,
                        json.dumps(result.to_json(), default=str),
                        result.finished_at,
                    )
                    for result in (f.result for f in finished)
                ],
            )
            _insert(
                db,
                """INSERT INTO scores (id, run_id, scenario_id, trace_id, name, value, data_type, comment,
                       metadata, timestamp, destination, session_id)""",
                [
                    (
                        s.id,
                        run_id,
                        f.result.scenario_id,
                        s.trace_id,
                        s.name,
                        s.value,
                        s.data_type,
                        s.comment,
                        encoded(s.metadata),
                        s.timestamp,
                        destination,
                        s.session_id,
                    )
                    for f in finished
                    for s in f.scores
                ],
                f"""ON CONFLICT({self._score_key}) DO UPDATE SET
                       sent_at = CASE WHEN value = excluded.value AND comment IS excluded.comment
                                      THEN sent_at END,
                       value = excluded.value, comment = excluded.comment, metadata = excluded.metadata""",
            )

    def results(self, run_id: str) -> list[dict[str, Any]]:
        with self._reading() as db:
            rows = db.execute("SELECT result FROM results WHERE run_id=? ORDER BY scenario_id", (run_id,))
            return [json.loads(row[0]) for row in rows]

    def history(self, *, last_runs: int | None = None) -> list[tuple[str, str, str, dict[str, Any]]]:
        """(run id, run name, finished_at, result object) of the last runs, oldest first."""
        with self._reading() as db:
            rows = db.execute(_HISTORY_QUERY, (last_runs or -1,)).fetchall()
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def runs(
        self, *, last_runs: int | None = None, ids: Sequence[str] | None = None, results: bool = True
    ) -> list[dict[str, Any]]:
        """The last runs with results (all by default; of those, the ones of `ids` when given), oldest
        first: their row and stored info, and their results (none read without `results`: the runs'
        headers, to find one by name). (A run stopped before its first result, or starting just now, has
        nothing to show.)

        A row that is not a JSON object (a write cut short, a file edited by hand) is left out and
        named in the run's `damaged`: the scenario id of a result, or "run info" (the info is then {})."""
        last = _LAST_RUNS.format(ids=_ids_clause(ids))
        chosen = (*(ids or ()), last_runs or -1)
        with self._reading() as db:
            rows = db.execute(_RUNS_QUERY.format(last=last), chosen).fetchall()
            stored = db.execute(_RUNS_RESULTS_QUERY.format(last=last), chosen).fetchall() if results else []
        by_run, damaged = _results_by_run(stored)
        runs = []
        for r in rows:
            info = _json_object(r[4])
            runs.append(
                {
                    "id": r[0],
                    "name": r[1],
                    "started_at": r[2],
                    "finished_at": r[3],
                    "info": info or {},
                    "results": by_run.get(r[0], []),
                    "damaged": (["run info"] if info is None else []) + damaged.get(r[0], []),
                }
            )
        return runs

    def has_dialogues(self) -> bool:
        """Whether any stored result is a dialogue's (`report` and `compare` then show the dialogue
        figures): found without decoding the results in Python where SQLite has its JSON functions."""
        with self._reading() as db:
            try:
                return bool(db.execute(_DIALOGUES_QUERY).fetchone()[0])
            except sqlite3.OperationalError as exc:
                if "no such function" not in str(exc):
                    raise
                rows = db.execute("SELECT result FROM results")
                return any((_json_object(row[0]) or {}).get("kind") == "dialogue" for row in rows)

    def unsent_scores(
        self, destination: str, *, run_id: str | None = None, force: bool = False
    ) -> list[Score]:
        """Scores for `destination` not yet acknowledged nor rejected, whose trace is in Langfuse (all of
        them with `force`), oldest first (one run, or all)."""
        with self._reading() as db:
            rows = db.execute(_UNSENT_QUERY, (destination, run_id, run_id, force)).fetchall()
        decoded: dict[str, Any] = {}  # a scenario's scores mostly share one metadata text: decoded once
        return [
            Score.built(
                id=r[0],
                trace_id=r[1],
                name=r[2],
                value=str(r[3]) if r[4] == "CATEGORICAL" else float(r[3]),
                data_type=r[4],
                comment=r[5],
                timestamp=r[6],
                metadata=decoded[r[7]] if r[7] in decoded else decoded.setdefault(r[7], json.loads(r[7])),
                session_id=r[8],
            )
            for r in rows
        ]

    def waiting_by_destination(self) -> dict[str, int]:
        """How many scores wait, per destination."""
        with self._reading() as db:
            rows = db.execute(_WAITING_QUERY).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def mark_sent(self, score_ids: Sequence[str], sent_at: str) -> None:
        if not score_ids:
            return
        with self._transaction() as db:
            head = f"UPDATE scores SET sent_at=? WHERE {_WAITING} AND id IN"  # noqa: S608 - constants only
            _in_chunks(db, head, score_ids, (sent_at,))

    def mark_rejected(self, reasons: Mapping[str, str]) -> None:
        if not reasons:
            return
        with self._transaction() as db:
            db.executemany(
                f"UPDATE scores SET rejected=? WHERE {_WAITING} AND id=?",  # noqa: S608 - constants only
                [(r, sid) for sid, r in reasons.items()],
            )

    def retry_rejected(self, destination: str) -> int:
        """Put rejected scores of `destination` back in the outbox; how many."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE scores SET rejected=NULL WHERE rejected IS NOT NULL AND destination=?", (destination,)
            )
            return cursor.rowcount

    def runs_named(self, name: str) -> list[str]:
        """The ids of the stored runs of that name, oldest first."""
        with self._reading() as db:
            rows = db.execute("SELECT id FROM runs WHERE name = ? ORDER BY started_at, id", (name,))
            return [row[0] for row in rows]

    def count_scores(self, *, waiting_only: bool = False, rejected_only: bool = False) -> int:
        """All scores, or those waiting to be sent (any destination), or those Langfuse rejected."""
        query = _COUNT_QUERIES["waiting" if waiting_only else "rejected" if rejected_only else "all"]
        with self._reading() as db:
            return int(db.execute(query).fetchone()[0])

    def ack_spans(self, destination: str, delivered: Mapping[str, int]) -> None:
        """The exporter delivered these many more spans of these traces."""
        with self._transaction() as db:
            _insert(
                db,
                "INSERT INTO span_acks",
                [(destination, trace_id, count) for trace_id, count in delivered.items()],
                "ON CONFLICT(destination, trace_id) DO UPDATE SET spans = spans + excluded.spans",
            )

    def unsent_traces(self, destination: str, *, run_id: str | None = None) -> list[tuple[str, bytes, int]]:
        """(trace id, OTLP request body, spans) of the traces Langfuse has not got whole, oldest first."""
        with self._reading() as db:
            rows = db.execute(_UNSENT_TRACES_QUERY, (destination, run_id, run_id)).fetchall()
        return [(str(r[0]), bytes(r[1]), int(r[2])) for r in rows]

    def count_unsent_scores(self, destination: str, *, run_id: str | None = None, force: bool = False) -> int:
        """How many scores `unsent_scores` would give, without loading them."""
        with self._reading() as db:
            row = db.execute(
                f"SELECT COUNT(*) FROM ({_UNSENT_QUERY})",  # noqa: S608 - a constant query
                (destination, run_id, run_id, force),
            ).fetchone()
        return int(row[0])

    def delivery_status(self, destination: str, *, run_id: str | None = None) -> DeliveryStatus:
        """What Langfuse has acknowledged of one run (or all), and what waits."""
        held = self.count_unsent_scores(destination, run_id=run_id, force=True) - self.count_unsent_scores(
            destination, run_id=run_id
        )
        with self._reading() as db:
            traces, spans, confirmed, waiting = db.execute(
                _SPAN_STATUS_QUERY, (destination, run_id, run_id)
            ).fetchone()
            scores, sent, unsent, rejected = db.execute(
                _SCORE_STATUS_QUERY, (destination, run_id, run_id)
            ).fetchone()
            (experiments,) = db.execute(
                "SELECT COUNT(*) FROM experiment_scores WHERE destination=? AND sent_at IS NULL "
                "AND (? IS NULL OR run_id=?)",
                (destination, run_id, run_id),
            ).fetchone()
        return DeliveryStatus(
            spans=int(spans),
            spans_confirmed=int(confirmed),
            traces=int(traces),
            traces_waiting=int(waiting),
            scores=int(scores),
            scores_confirmed=int(sent),
            scores_waiting=int(unsent),
            scores_held=held,
            scores_rejected=int(rejected),
            experiments_waiting=int(experiments),
        )

    def keep_experiment_scores(
        self, run_id: str, destination: str, body: Sequence[Mapping[str, Any]]
    ) -> None:
        """A run's run-level scores (the request body for its experiment), waiting until Langfuse takes
        them (`mark_experiment_scores_sent`): `sync` posts them again until it does."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO experiment_scores (run_id, destination, body, sent_at) "
                "VALUES (?, ?, ?, NULL)",
                (run_id, destination, json.dumps(list(body))),
            )

    def unsent_experiment_scores(self, destination: str) -> list[tuple[str, list[dict[str, Any]]]]:
        """(run id, request body) of each run whose run-level scores Langfuse has not taken, oldest first."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT run_id, body FROM experiment_scores WHERE destination=? AND sent_at IS NULL "
                "ORDER BY rowid",
                (destination,),
            ).fetchall()
        return [(run_id, json.loads(body)) for run_id, body in rows]

    def mark_experiment_scores_sent(self, run_id: str, destination: str, sent_at: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE experiment_scores SET sent_at=? WHERE run_id=? AND destination=?",
                (sent_at, run_id, destination),
            )

    def mark_trace_sent(self, destination: str, trace_id: str, sent_at: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE traces SET sent_at=? WHERE destination=? AND trace_id=?",
                (sent_at, destination, trace_id),
            )

    def cached_verdict(self, key: VerdictKey) -> dict[str, Any] | None:
        with self._reading() as db:
            kept = self._kept.get(_key_values(key))
            row = (kept[0],) if kept else db.execute(_VERDICT_QUERY, _key_values(key)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def keep_verdict(self, key: VerdictKey, entry: Mapping[str, Any]) -> None:
        """Written with the next write transaction, not in one of its own (a commit per judgement cost
        more than the rest of it): in a run, the record stage's, which stores the result judged with
        it, so a stored result's verdicts are stored too; else at `close()`. Until then
        `cached_verdict` finds it here."""
        row = (json.dumps(entry, default=str), utc_now())
        with self._lock:
            self._kept[_key_values(key)] = row

    def close(self) -> None:
        """Writes the verdicts kept since the last write, then closes, whether that write went through
        or not: a StoreError from it comes after the connection is closed (only cached verdicts were
        lost: every result was stored with its own transaction)."""
        try:
            with self._lock:
                pending = bool(self._kept)
            if pending:
                with self._transaction():
                    pass
        finally:
            with self._lock:
                self._db.close()


def _ids_clause(ids: Sequence[str] | None) -> str:
    """The condition choosing the runs of `ids` (one placeholder each; none: any run)."""
    if ids is None:
        return ""
    return f" AND id IN ({', '.join('?' * len(ids))})"


def _results_by_run(
    rows: Iterable[tuple[str, str, str | bytes | None]],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]]]:
    """Stored (run id, scenario id, result) rows: the result objects by run, and by run the scenario ids
    of the rows that are not JSON objects (damaged)."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    damaged: dict[str, list[str]] = {}
    for run_id, scenario_id, document in rows:
        parsed = _json_object(document)
        if parsed is None:
            damaged.setdefault(run_id, []).append(scenario_id)
        else:
            by_run.setdefault(run_id, []).append(parsed)
    return by_run, damaged


def _json_object(text: str | bytes | None) -> dict[str, Any] | None:
    """A stored JSON object; None when the text is not one (damaged)."""
    try:
        value = json.loads(text) if text is not None else None
    except (ValueError, TypeError):  # JSONDecodeError and bad UTF-8 are ValueErrors
        return None
    return value if isinstance(value, dict) else None


def _key_values(key: VerdictKey) -> tuple[str, int, str, str]:
    return (key.prompt_name, key.prompt_version, key.model, key.inputs_sha256)


_ROWS_PER_INSERT = 256  # at most; a power of two (see _insert)
_OPEN_SECONDS = 10.0  # how long opening a store another process is setting up may take
_PAGE_CACHE_KIB = 512  # SQLite's page cache per connection (its default: 2,000 KiB); see `_open`
_BUSY_TIMEOUT_MS = 5000  # how long a statement waits for another program's lock before it fails


def _open(path: Path | None) -> sqlite3.Connection:
    """A connection to the store, its schema in place. Two processes setting up the same new store
    at once (two runs started together) can find it locked in a way SQLite does not wait out (the
    switch to WAL): the later one tries again for a while."""
    ends = time.monotonic() + _OPEN_SECONDS
    while True:
        db = sqlite3.connect(path or ":memory:", check_same_thread=False, isolation_level=None)
        try:
            if path is not None:
                db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode=WAL")
                # Under WAL, NORMAL keeps every commit through a crash of the process (Ctrl-C, kill);
                # only an OS crash or power loss can take the last commits back.
                db.execute("PRAGMA synchronous=NORMAL")
            # SQLite's own page cache, 2 MB by default, filled by every run (results, scores, spans):
            # memory the run holds to its end, for pages the OS caches anyway. A run's writes touch a
            # few pages per index; a report reads each page once (benchmarks/bench_judges.py: peak RSS).
            db.execute(f"PRAGMA cache_size=-{_PAGE_CACHE_KIB}")
            db.executescript(_SCHEMA)
            if _score_key(db) != "id":  # a store keyed on the id alone finds scores by it already
                db.execute(_WAITING_ID_INDEX)
            _add_late_spans(db)
            _add_column(db, "scores", "session_id TEXT")  # stores made before session scores
            _add_column(db, "traces", "session_id TEXT")  # before dialogues kept their turns apart
            # a session score's gate looks its session's traces up (_UNSENT_QUERY)
            db.execute(
                "CREATE INDEX IF NOT EXISTS traces_session ON traces(destination, session_id)"
                " WHERE session_id IS NOT NULL"
            )
        except sqlite3.OperationalError as exc:
            db.close()
            if "locked" not in str(exc) or time.monotonic() > ends:
                raise
            time.sleep(0.05)
            continue
        except BaseException:
            db.close()
            raise
        return db


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads the file as it is. SQLite cannot open a WAL store read-only where it
    cannot make the store's shared-memory file, unless told the file does not change (`immutable`):
    so that is refused when a write-ahead log holds changes not yet merged into the file."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise sqlite3.OperationalError(
            f"unable to open database file read-only: its write-ahead log {wal.name} holds changes not "
            "merged into it (copy the store with its -wal file to a writable place)"
        )
    return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False)


def _file_identity(path: Path | None) -> tuple[int, int] | None:
    """The device and inode of the file at `path` (None: in memory), which a file put in its place
    does not share."""
    if path is None:
        return None
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _score_key(db: sqlite3.Connection) -> str:
    """The columns of the scores table's key: (run_id, scenario_id, id), or the id alone in a store
    made before."""
    key = sorted((row[5], row[1]) for row in db.execute("PRAGMA table_info(scores)") if row[5])
    return ", ".join(name for _, name in key)


def _add_late_spans(db: sqlite3.Connection) -> None:
    """A store made before traces had `late_spans` gets the column (0: as those traces were counted)."""
    if "late_spans" not in {row[1] for row in db.execute("PRAGMA table_info(traces)")}:
        try:
            db.execute("ALTER TABLE traces ADD COLUMN late_spans INTEGER NOT NULL DEFAULT 0")
        except sqlite3.OperationalError as exc:  # another process added it meanwhile
            if "duplicate column" not in str(exc):
                raise


def _add_column(db: sqlite3.Connection, table: str, column: str) -> None:
    """A store made before `column` gets it (NULL in the rows it has)."""
    if column.split(maxsplit=1)[0] not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
        try:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        except sqlite3.OperationalError as exc:  # another process added it meanwhile
            if "duplicate column" not in str(exc):
                raise


class _Encoded:
    """`json.dumps(metadata, default=str)`, once per metadata object: the objects are alive (the
    scores being recorded hold them) and not changed while recorded, so an object's id names it."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def __call__(self, metadata: Mapping[str, Any]) -> str:
        text = self._texts.get(id(metadata))
        if text is None:
            text = self._texts[id(metadata)] = json.dumps(metadata, default=str)
        return text


def _insert(db: sqlite3.Connection, head: str, rows: Sequence[tuple[Any, ...]], tail: str = "") -> None:
    """`head VALUES (row), (row), ... tail` for all rows, many per statement. `executemany` would run
    one SQLite step per row, and each step lets go of the interpreter lock: under a run's load,
    getting it back costs far more than the insert. Statements hold a power of two of rows (within
    SQLite's limit on parameters), so a few statement texts serve every batch size from the
    connection's statement cache. Rows are inserted in order, so a later row replaces or updates an
    earlier one exactly as one by one."""
    if not rows:
        return
    width = len(rows[0])
    most = min(_ROWS_PER_INSERT, max(1, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    for chunk in _power_of_two_chunks(rows, most):
        values = ",".join(["(" + ",".join("?" * width) + ")"] * len(chunk))
        db.execute(f"{head} VALUES {values} {tail}", [value for row in chunk for value in row])


def _in_chunks(db: sqlite3.Connection, head: str, keys: Sequence[str], first: tuple[Any, ...]) -> None:
    """`head (key, key, ...)` with the parameters `first` before the keys, for all keys, many per
    statement (one SQLite step each, as `_insert`, in statements of a power of two of keys)."""
    most = min(_ROWS_PER_INSERT, max(1, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - len(first)))
    for chunk in _power_of_two_chunks(keys, most):
        db.execute(f"{head} ({','.join('?' * len(chunk))})", [*first, *chunk])


def _power_of_two_chunks(items: Sequence[T], most: int) -> Iterator[Sequence[T]]:
    """`items` in order, in slices of the largest power of two up to `most` that the rest holds."""
    start = 0
    while start < len(items):
        count = 1 << (min(len(items) - start, most).bit_length() - 1)
        yield items[start : start + count]
        start += count


def _rollback(db: sqlite3.Connection) -> None:
    """Undo the open transaction, unless SQLite already has (it does after some errors, a full disk
    among them: a ROLLBACK then would fail and hide the cause). A connection already closed (the run
    over: a batch of scores Langfuse took after `run_suite` closed its store) has nothing to undo: its
    error, not this one, is the one to raise as a StoreError."""
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.ProgrammingError:  # closed: "Cannot operate on a closed database."
        pass


_ANOTHER_PATH = "or set another [store] path in evaluator.toml"
# (SQLite error names, words of the message, errnos) -> (what happened, what to do); the first that
# matches says it. A message is matched too: an error raised by hand (tests) has no error name.
_DIAGNOSES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], str, str], ...] = (
    (
        ("SQLITE_FULL",),
        ("disk is full", "database or disk is full"),
        (errno.ENOSPC, errno.EDQUOT),
        "the disk is full",
        f"free space on the disk that holds it, then run the command again, {_ANOTHER_PATH}",
    ),
    (
        ("SQLITE_BUSY", "SQLITE_LOCKED"),
        ("locked",),
        (),
        "another program (another run, say) held the database locked for more than {seconds:g} s",
        f"wait for the other program using it to finish, then run the command again, {_ANOTHER_PATH}",
    ),
    (
        ("SQLITE_NOTADB", "SQLITE_CORRUPT"),
        ("not a database", "malformed"),
        (),
        "the file is not an intact SQLite database",
        "the file is damaged: move it aside (a new store is made; `sqlite3 FILE .recover` may save "
        f"what it holds), {_ANOTHER_PATH}",
    ),
    (
        ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"),
        ("readonly", "read-only", "unable to open"),
        (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST),
        "it cannot be written there (a read-only place, no permission, or a file where a folder should be)",
        "set [store] path in evaluator.toml to a writable file",
    ),
)


def _store_error(path: Path | None, exc: BaseException, *, writing: bool) -> StoreError:
    """The StoreError for `exc`, raised using the store at `path`: what happened, the file, that
    what was committed before stays (`writing`: a write failed), and what to do. An error none of
    the known ones (disk full, locked, damaged, read-only) is said as SQLite or the OS gave it."""
    what, fix = _diagnosis(exc)
    doing = "write to" if writing else "use"
    kept = " Nothing committed to it before is lost." if writing else ""
    return StoreError(f"cannot {doing} the store {path or ':memory:'} ({what}: {exc}).{kept} Fix: {fix}.")


def _diagnosis(exc: BaseException) -> tuple[str, str]:
    name = getattr(exc, "sqlite_errorname", None) or ""
    message = str(exc).lower()
    code = exc.errno if isinstance(exc, OSError) else None
    for names, words, codes, what, fix in _DIAGNOSES:
        if name.startswith(names) or any(w in message for w in words) or code in codes:
            return what.format(seconds=_BUSY_TIMEOUT_MS / 1000), fix
    return "an error of the database or the disk", (
        f"check the disk, and that no other program holds the database locked, {_ANOTHER_PATH}"
    )
