"""The SQLite store: results and scores survive, re-recording never duplicates, the outbox works."""

import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from evaluator.errors import ConfigError, StoreError
from evaluator.judge import CacheKey
from evaluator.results import JudgeStatus, RunInfo, ScenarioResult, evaluate, scores_for
from evaluator.storage import Finished, Store
from evaluator.storage import store as store_module
from tests.builders import scenario, trace_of

DEST = "https://cloud.langfuse.com pk-lf-project-a"


def _result(tools: list[str]) -> ScenarioResult:
    return evaluate(
        scenario(expected={"tools": {"include": ["a"]}}),
        trace_of(["o"], tools),
        judge_status=JudgeStatus(status="skipped", reason="t"),
        finished_at="2026-11-22T10:00:01Z",
    )


def test_record_is_durable_idempotent_and_tracks_unsent(tmp_path: Path) -> None:
    path = tmp_path / "db" / "evaluator.db"
    store = Store(path)
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00Z")
    store.start_run(run)
    result = _result(["a"])
    scores = scores_for(result, run_id=run.id)
    store.record(run.id, result, scores, destination=DEST)
    store.record(run.id, result, scores, destination=DEST)  # a retry replaces, never duplicates
    store.mark_sent([scores[0].id], "2026-11-22T10:00:02Z")
    store.record(run.id, result, scores, destination=DEST)  # the same values: what was sent stays sent
    store.close()

    reopened = Store(path)
    assert [r["scenario_id"] for r in reopened.results("run-1")] == ["s1"]
    assert reopened.count_scores() == len(scores) == 3
    assert reopened.count_scores(waiting_only=True) == 2
    assert {s.id for s in reopened.unsent_scores(DEST)} == {s.id for s in scores[1:]}
    assert reopened.unsent_scores(DEST)[0].metadata["run_id"] == "run-1"


def test_a_changed_value_is_sent_again() -> None:
    store = Store(None)
    before = scores_for(_result(["a"]), run_id="r")
    store.record("r", _result(["a"]), before, destination=DEST)
    store.mark_sent([s.id for s in before], "2026-11-22T10:00:02Z")
    after = scores_for(_result([]), run_id="r")  # the tool was not called after all: pass -> fail
    store.record("r", _result([]), after, destination=DEST)
    assert {s.name for s in store.unsent_scores(DEST)} == {"workflow_pass", "workflow_tools_pass"}


def test_embedded_scores_are_never_in_the_outbox() -> None:
    store = Store(None)
    result = _result(["a"])
    store.record("embedded-run", result, scores_for(result, run_id="embedded-run"), destination=None)
    assert store.count_scores() == 3
    assert store.count_scores(waiting_only=True) == 0
    assert store.waiting_by_destination() == {}


def test_scores_wait_for_their_own_destination_only() -> None:
    store = Store(None)
    for run_id, destination in (("r1", DEST), ("r2", "https://eu.example pk-lf-project-b")):
        result = _result(["a"])
        store.record(run_id, result, scores_for(result, run_id=run_id), destination=destination)
    assert [s.metadata["run_id"] for s in store.unsent_scores(DEST)] == ["r1"] * 3
    assert store.waiting_by_destination() == {DEST: 3, "https://eu.example pk-lf-project-b": 3}


def test_rejected_scores_wait_only_when_asked() -> None:
    store = Store(None)
    result = _result(["a"])
    scores = scores_for(result, run_id="r")
    store.record("r", result, scores, destination=DEST)
    store.mark_rejected({scores[0].id: "bad value"})
    assert store.count_scores(rejected_only=True) == 1
    assert len(store.unsent_scores(DEST)) == 2
    assert store.retry_rejected(DEST) == 1
    assert len(store.unsent_scores(DEST)) == 3


def test_an_unusable_path_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="cannot use the store"):
        Store(blocker / "evaluator.db")


def test_a_damaged_store_says_so_and_how_to_start_afresh(tmp_path: Path) -> None:
    damaged = tmp_path / "evaluator.db"
    damaged.write_bytes(b"not a database, nor its start" * 200)
    with pytest.raises(ConfigError, match="the file is damaged: move it aside"):
        Store(damaged)


class _CommitFails:
    """A connection whose COMMIT fails as it does on a full disk (the transaction stays open)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.db, name)


def test_a_write_that_fails_loses_only_itself_and_the_store_takes_the_next(tmp_path: Path) -> None:
    path = tmp_path / "evaluator.db"
    store = Store(path)
    store.start_run(RunInfo(id="run-1", name="n", started_at="2026-11-22T10:00:00Z"))
    store.record("run-1", _result(["a"]), [], destination=None)
    real = store._db
    store._db = _CommitFails(real)  # type: ignore[assignment]
    with pytest.raises(
        StoreError, match=r"cannot write to the store .* \(the disk is full: .*Fix: free space"
    ):
        store.record("run-1", _result(["b"]), [], destination=None)
    store._db = real  # space again: the failed transaction was rolled back, the next one goes through
    store.start_run(RunInfo(id="run-2", name="m", started_at="2026-11-22T10:01:00Z"))
    assert [r["workflow"]["tools"]["included"] for r in Store(path).results("run-1")] == [["a"]]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT id FROM runs ORDER BY id").fetchall() == [("run-1",), ("run-2",)]


def test_a_categorical_score_keeps_its_category_and_a_numeric_one_its_number(tmp_path: Path) -> None:
    store = Store(tmp_path / "evaluator.db")
    numeric = scores_for(_result(["a"]), run_id="run-1")[0]
    categorical = replace(
        numeric, id="c1", name="correctness", value="hallucination", data_type="CATEGORICAL"
    )
    one = replace(numeric, id="n1", value=1)
    store.start_run(RunInfo(id="run-1", name="n", started_at="2026-11-22T10:00:00Z"))
    store.record("run-1", _result(["a"]), [categorical, one], destination=DEST)
    unsent = {s.id: s for s in Store(tmp_path / "evaluator.db").unsent_scores(DEST)}
    assert unsent["c1"].value == "hallucination" and unsent["c1"].data_type == "CATEGORICAL"
    assert unsent["n1"].value == 1.0 and isinstance(unsent["n1"].value, float)


def test_verdicts_are_kept_across_store_handles(tmp_path: Path) -> None:
    key = CacheKey(prompt_name="evaluation/quality", prompt_version=1, model="m", inputs_sha256="ab" * 32)
    store = Store(tmp_path / "evaluator.db")
    assert store.cached_verdict(key) is None
    store.keep_verdict(key, {"reply": {"verdict": "CORRECT", "reason": "r"}, "trace_id": "t"})
    store.close()
    reopened = Store(tmp_path / "evaluator.db")
    assert reopened.cached_verdict(key) == {"reply": {"verdict": "CORRECT", "reason": "r"}, "trace_id": "t"}
    other_version = CacheKey(
        prompt_name="evaluation/quality", prompt_version=2, model="m", inputs_sha256="ab" * 32
    )
    assert reopened.cached_verdict(other_version) is None


@pytest.mark.parametrize("parameters", [None, 999])  # SQLite before 3.32 allowed 999 parameters
def test_a_large_batch_is_recorded_whole_and_in_order(parameters: int | None) -> None:
    """300 results (statements of 256, 32, 8 and 4 rows, or smaller ones within SQLite's limit on
    parameters), one of them twice: the later one wins."""
    store = Store(None)
    if parameters is not None:
        store._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, parameters)
    results = [replace(_result(["a"]), scenario_id=f"s{i:03d}", trace_id=f"{i:032x}") for i in range(300)]
    again = replace(results[7], status="failed")
    finished = [Finished(r, scores_for(r, run_id="r")) for r in [*results, again]]
    store.record_many("r", finished, destination=DEST)
    stored = store.results("r")
    assert [r["scenario_id"] for r in stored] == [f"s{i:03d}" for i in range(300)]
    assert stored[7]["status"] == "failed"
    assert store.count_scores() == 300 * 3


@pytest.mark.parametrize("parameters", [None, 999])
def test_many_scores_are_marked_sent_and_many_traces_acknowledged_at_once(parameters: int | None) -> None:
    """300 results of 3 scores: 900 ids marked sent in statements of up to 256 ids (fewer within
    SQLite's limit on parameters), all of them and nothing else; acknowledgements add up per trace."""
    store = Store(None)
    if parameters is not None:
        store._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, parameters)
    results = [replace(_result(["a"]), scenario_id=f"s{i:03d}", trace_id=f"{i:032x}") for i in range(301)]
    finished = [Finished(r, scores_for(r, run_id="r"), b"spans", 2) for r in results]
    store.record_many("r", finished, destination=DEST)
    store.ack_spans(DEST, {r.trace_id: 1 for r in results[:300]})
    assert len(store.unsent_traces(DEST)) == 301  # one span of two each
    store.ack_spans(DEST, {r.trace_id: 1 for r in results[:300]})
    assert [t for t, _, _ in store.unsent_traces(DEST)] == [results[300].trace_id]
    store.mark_sent([s.id for f in finished[:300] for s in f.scores], "2026-11-22T10:00:02Z")
    status = store.delivery_status(DEST)
    assert (status.scores_confirmed, status.scores_waiting) == (900, 3)
    store.mark_sent([], "2026-11-22T10:00:03Z")
    store.mark_rejected({})
    assert store.delivery_status(DEST).scores_confirmed == 900


@pytest.mark.parametrize("late", [False, True])
def test_a_trace_with_late_spans_is_whole_only_once_sent_again(late: bool) -> None:
    # The exporter counts spans per trace: a timed-out target's late spans could make up the count of
    # kept spans it dropped, so for such a trace only the re-send from the store proves it whole.
    store, result = Store(None), _result(["a"])
    scores = scores_for(result, run_id="r")
    store.record_many("r", [Finished(result, scores, b"spans", 2, late_spans=late)], destination=DEST)
    store.ack_spans(DEST, {result.trace_id: 2})  # two spans delivered: two late ones, say
    status = store.delivery_status(DEST)
    if late:
        assert [t for t, _, _ in store.unsent_traces(DEST)] == [result.trace_id]
        assert store.unsent_scores(DEST) == [] and status.scores_held == len(scores)
        assert status.traces_waiting == 1 and status.spans_confirmed == 0
        store.mark_trace_sent(DEST, result.trace_id, "2026-11-22T10:00:02Z")
    assert store.unsent_traces(DEST) == []
    assert len(store.unsent_scores(DEST)) == len(scores)
    assert store.delivery_status(DEST).spans_confirmed == 2


def test_a_store_from_before_late_spans_gets_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the traces table as earlier versions made it
        db.execute(
            "CREATE TABLE traces (destination TEXT NOT NULL, trace_id TEXT NOT NULL, run_id TEXT NOT NULL, "
            "scenario_id TEXT NOT NULL, payload BLOB NOT NULL, spans INTEGER NOT NULL, sent_at TEXT, "
            "PRIMARY KEY (destination, trace_id))"
        )
        db.execute("INSERT INTO traces VALUES (?, 't1', 'r', 's1', x'00', 1, NULL)", (DEST,))
    db.close()
    store = Store(path)
    store.ack_spans(DEST, {"t1": 1})
    assert store.unsent_traces(DEST) == []  # counted by the exporter, as before
    result = _result(["a"])
    store.record_many("r", [Finished(result, [], b"spans", 1, late_spans=True)], destination=DEST)
    assert [t for t, _, _ in store.unsent_traces(DEST)] == [result.trace_id]


# The scores table as versions before session scores made it (keyed on the score id alone).
_SCORES_BEFORE_SESSIONS = (
    "CREATE TABLE scores (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, scenario_id TEXT NOT NULL, "
    "trace_id TEXT NOT NULL, name TEXT NOT NULL, value REAL NOT NULL, data_type TEXT NOT NULL, "
    "comment TEXT, metadata TEXT NOT NULL, timestamp TEXT NOT NULL, destination TEXT, sent_at TEXT, "
    "rejected TEXT)"
)


def _made_before(folder: Path, table: str) -> Path:
    """A store file holding `table` as an earlier version made it."""
    path = folder / "old.db"
    with sqlite3.connect(path) as db:
        db.execute(table)
    db.close()
    return path


def test_a_store_from_before_session_scores_gets_the_column(tmp_path: Path) -> None:
    path = _made_before(tmp_path, _SCORES_BEFORE_SESSIONS)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO scores VALUES ('old', 'r0', 's1', 't0', 'workflow_pass', 1, 'BOOLEAN', NULL, '{}', "
            "'2026-11-22T10:00:00Z', ?, NULL, NULL)",
            (DEST,),
        )
    db.close()
    store = Store(path)
    session = replace(scores_for(_result(["a"]), run_id="r")[0], id="new", session_id="r:s1")
    store.record_many("r", [Finished(_result(["a"]), [session])], destination=DEST)
    unsent = {s.id: s.session_id for s in store.unsent_scores(DEST)}
    assert unsent == {"old": None, "new": "r:s1"}


def _keyed_on(db: sqlite3.Connection) -> list[str]:
    return [row[1] for row in sorted(db.execute("PRAGMA table_info(scores)"), key=lambda r: r[5]) if row[5]]


def test_a_store_keyed_on_the_score_id_alone_records_replaces_and_marks_as_before(tmp_path: Path) -> None:
    """A store made before scores were keyed by (run, scenario, id) keeps its key, and works the same:
    a score recorded again is replaced (sent again only when changed), marks find it by id."""
    store = Store(
        _made_before(
            tmp_path, _SCORES_BEFORE_SESSIONS.replace("rejected TEXT", "rejected TEXT, session_id TEXT")
        )
    )
    assert _keyed_on(store._db) == ["id"]
    indexes = {row[1] for row in store._db.execute("PRAGMA index_list(scores)")}
    assert "scores_waiting_id" not in indexes  # its key on the id finds scores by id already
    before, after = scores_for(_result(["a"]), run_id="r"), scores_for(_result([]), run_id="r")
    store.record("r", _result(["a"]), before, destination=DEST)
    store.record("r", _result(["a"]), before, destination=DEST)
    store.mark_sent([s.id for s in before], "2026-11-22T10:00:02Z")
    store.record("r", _result([]), after, destination=DEST)  # pass -> fail: those two go again
    assert {s.name for s in store.unsent_scores(DEST)} == {"workflow_pass", "workflow_tools_pass"}
    store.mark_rejected({after[0].id: "bad value"})
    assert store.count_scores() == 3 and store.count_scores(rejected_only=True) == 1


def test_a_new_store_keys_scores_by_run_scenario_and_id() -> None:
    """Each scenario's scores sit together in the key; the id stays unique across scenarios and runs
    (it is made of the run and the scenario's trace or session), and recording again replaces."""
    store = Store(None)
    assert _keyed_on(store._db) == ["run_id", "scenario_id", "id"]
    first = _result(["a"])
    second = replace(first, scenario_id="s2", trace_id="f" * 32)
    for run_id in ("r1", "r2"):
        for result in (first, second, first):
            store.record(run_id, result, scores_for(result, run_id=run_id), destination=DEST)
    ids = [s.id for s in store.unsent_scores(DEST)]
    assert len(ids) == len(set(ids)) == store.count_scores() == 2 * 2 * 3


def test_stores_opened_at_once_on_a_new_file_all_open(tmp_path: Path) -> None:
    # Two runs started together set up the same new store; SQLite does not wait out every lock of
    # that (switching to WAL), so the later ones try again.
    failures: list[str] = []
    for trial in range(60):  # the race is not certain each time: enough trials to see it
        path = tmp_path / f"{trial}.db"
        barrier = threading.Barrier(6)

        def open_it(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                Store(path).close()
            except ConfigError as exc:
                failures.append(str(exc))

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def test_a_kept_verdict_is_written_with_the_next_write_not_in_a_commit_of_its_own(tmp_path: Path) -> None:
    """One commit per judgement cost more than the rest of it: a verdict rides along with the next
    write, in a run the record stage's, which stores the result judged with it."""
    key = CacheKey(prompt_name="evaluation/quality", prompt_version=1, model="m", inputs_sha256="cd" * 32)
    entry = {"reply": {"verdict": "CORRECT", "reason": "r"}, "trace_id": "t"}
    store, other = Store(tmp_path / "evaluator.db"), Store(tmp_path / "evaluator.db")
    store.keep_verdict(key, entry)
    assert store.cached_verdict(key) == entry  # its own handle finds it at once
    assert other.cached_verdict(key) is None  # not committed on its own
    store.start_run(RunInfo(id="run-1", name="n", started_at="2026-11-22T10:00:00Z"))
    store.record("run-1", _result(["a"]), [], destination=None)
    assert other.cached_verdict(key) == entry  # committed with the result
    store.close()
    other.close()


def test_closing_closes_even_when_the_kept_verdicts_cannot_be_written(tmp_path: Path) -> None:
    """`close()` writes the verdicts kept since the last write; when that write fails (another
    program holds the database locked), the connection is closed all the same and the StoreError
    comes after (it had left the connection open, so the caller's own cleanup never ran)."""
    key = CacheKey(prompt_name="evaluation/quality", prompt_version=1, model="m", inputs_sha256="ef" * 32)
    store = Store(tmp_path / "evaluator.db")
    store.keep_verdict(key, {"reply": {"verdict": "CORRECT", "reason": "r"}})
    holder = sqlite3.connect(tmp_path / "evaluator.db", timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        store._db.execute("PRAGMA busy_timeout = 1")  # fail at once rather than after 5 s
        with pytest.raises(StoreError):
            store.close()
    finally:
        holder.rollback()
        holder.close()
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        store._db.execute("SELECT 1")


def test_scores_sharing_one_metadata_object_each_store_its_json() -> None:
    # The store encodes a metadata object once per record (a dialogue turn's scores share one); each
    # score still stores that object's JSON, and a score with its own metadata stores its own.
    store = Store(None)
    result = _result(["a"])
    shared = {"scenario_id": "s1", "run_id": "r", "turn": 3}
    base = scores_for(result, run_id="r")[0]
    scores = [
        replace(base, id="1", metadata=shared),
        replace(base, id="2", metadata=shared),
        replace(base, id="3", metadata={"scenario_id": "s1", "run_id": "r", "turn": 4}),
    ]
    store.record("r", result, scores, destination=DEST)
    stored = {s.id: s.metadata for s in store.unsent_scores(DEST)}
    assert stored == {"1": shared, "2": shared, "3": {"scenario_id": "s1", "run_id": "r", "turn": 4}}


def test_scores_are_marked_through_the_index_of_waiting_ones_not_a_scan_of_all() -> None:
    store = Store(None)
    result = _result(["a"])
    scores = scores_for(result, run_id="r")
    store.record("r", result, scores, destination=DEST)
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    store.mark_sent([s.id for s in scores[:2]], "2026-11-22T10:00:02Z")
    store.mark_rejected({scores[2].id: "bad value"})
    store._db.set_trace_callback(None)
    updates = [s for s in statements if s.startswith("UPDATE scores")]
    assert len(updates) == 2
    for update in updates:  # the values are bound in the traced text
        plan = store._db.execute(f"EXPLAIN QUERY PLAN {update}").fetchall()
        assert [row[3] for row in plan] == ["SEARCH scores USING INDEX scores_waiting_id (id=?)"]
    assert store.delivery_status(DEST).scores_waiting == 0


def _read_only_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's folder as a read-only mount makes it: SQLite cannot open a WAL store there for
    writing (nor read-only, as it cannot make the shared-memory file), and the folder is not writable."""
    from evaluator.storage import store as module

    def refused(path: Path | None) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(module, "_open", refused)
    monkeypatch.setattr(module.os, "access", lambda path, mode: False)


def test_a_store_in_a_read_only_place_is_read_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evaluator.db"
    store = Store(path)
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00Z")
    store.start_run(run)
    result = _result(["a"])
    store.record(run.id, result, scores_for(result, run_id=run.id), destination=DEST)
    store.close()
    _read_only_place(monkeypatch)

    with pytest.raises(StoreError):
        Store(path)  # to write: refused, as before
    reading = Store.reading(path)
    assert [run["id"] for run in reading.runs()] == ["run-1"]
    reading.close()


def test_a_read_only_store_whose_log_holds_changes_not_merged_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evaluator.db"
    Store(path).close()
    (tmp_path / "evaluator.db-wal").write_bytes(b"changes")  # a copy taken while a run wrote to it
    _read_only_place(monkeypatch)

    with pytest.raises(StoreError, match=r"write-ahead log evaluator\.db-wal holds changes not merged"):
        Store.reading(path)


def test_the_last_runs_decode_their_own_results_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`report --last 5` on a store of 200 runs: the 5 runs' result objects are read, not every run's
    (each a JSON document of a few kB: on 200 runs of 50 scenarios, seconds)."""
    store = Store(tmp_path / "evaluator.db")
    for index in range(4):
        run = RunInfo(id=f"run-{index}", name=f"run-{index}", started_at=f"2026-11-22T10:0{index}:00Z")
        store.start_run(run)
        for tools in (["a"], []):
            result = replace(_result(tools), scenario_id=f"s-{len(tools)}")
            store.record(run.id, result, scores_for(result, run_id=run.id), destination=None)
    decoded: list[object] = []
    decode = store_module._json_object

    def counted(text: str | bytes | None) -> dict[str, object] | None:
        decoded.append(text)
        return decode(text)

    monkeypatch.setattr(store_module, "_json_object", counted)
    runs = store.runs(last_runs=1)
    store.close()

    assert [run["id"] for run in runs] == ["run-3"]
    assert sorted(r["scenario_id"] for r in runs[0]["results"]) == ["s-0", "s-1"]
    assert len(decoded) == 3  # the run's info and its two results


def test_runs_chosen_by_id_and_whether_any_is_a_dialogue_need_no_json_functions_of_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite builds before 3.38 may lack the JSON1 functions: the runs of some ids are chosen by plain
    SQL, and `has_dialogues` decodes the results where the functions are missing."""
    store = Store(tmp_path / "evaluator.db")
    for index in range(3):
        run = RunInfo(id=f"run-{index}", name=f"run-{index}", started_at=f"2026-11-22T10:0{index}:00Z")
        store.start_run(run)
        result = _result(["a"])
        store.record(run.id, result, scores_for(result, run_id=run.id), destination=None)
    assert [r["id"] for r in store.runs(ids=["run-2", "run-0"])] == ["run-0", "run-2"]
    assert [r["id"] for r in store.runs(ids=["run-1"], last_runs=1)] == ["run-1"]
    assert store.runs(ids=[]) == []
    # a query calling a function this SQLite does not have, as json_valid on a build without JSON1
    monkeypatch.setattr(store_module, "_DIALOGUES_QUERY", "SELECT no_json_here(1)")
    assert store.has_dialogues() is False
    store.close()
    with sqlite3.connect(tmp_path / "evaluator.db") as db:  # a dialogue's result, as its document has it
        db.execute(
            "INSERT INTO results (run_id, scenario_id, trace_id, status, result, finished_at) VALUES "
            "('run-2', 'd', 't', 'passed', '{\"scenario_id\": \"d\", \"kind\": \"dialogue\"}', 'x')"
        )
    db.close()
    store = Store(tmp_path / "evaluator.db")
    assert store.has_dialogues() is True
    store.close()


def test_a_store_dropped_without_close_closes_its_connection(tmp_path: Path) -> None:
    """As a script or a notebook drops a handle: its connection is closed when the handle is collected
    (Python 3.13 warns of a connection collected open), and what it wrote is there for the next one."""
    store = Store(tmp_path / "evaluator.db")
    store.start_run(RunInfo(id="run-1", name="n", started_at="2026-11-22T10:00:00Z"))
    store.record("run-1", _result(["a"]), [], destination=DEST)
    connection = store._db
    # its last reference: collected at once (no gc.collect(), which would find other tests' garbage)
    del store
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        connection.execute("SELECT 1")
    reopened = Store(tmp_path / "evaluator.db")
    try:
        assert [run["id"] for run in reopened.runs()] == ["run-1"]
    finally:
        reopened.close()


@pytest.mark.parametrize("how", ["deleted", "folder removed", "replaced", "moved"])
def test_a_store_whose_file_is_gone_from_its_path_takes_no_write_and_says_so(
    tmp_path: Path, how: str
) -> None:
    """SQLite goes on writing to the file it opened, deleted or not, without a word: the store refuses
    to, so a run is not told its results are stored in a file no longer there."""
    import shutil

    from evaluator.errors import StoreMovedError

    path = tmp_path / "db" / "evaluator.db"
    store = Store(path)
    run = RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00Z")
    store.start_run(run)
    if how == "deleted":
        for name in ("evaluator.db", "evaluator.db-wal", "evaluator.db-shm"):
            (path.parent / name).unlink(missing_ok=True)
    elif how == "folder removed":
        shutil.rmtree(path.parent)
    elif how == "replaced":
        other = tmp_path / "other.db"
        sqlite3.connect(other).close()
        other.replace(path)
    else:
        path.replace(tmp_path / "elsewhere.db")
    try:
        with pytest.raises(StoreMovedError) as raised:
            store.record(run.id, _result(["a"]), [], destination=None)
    finally:
        store.close()
    there = "another file is there now" if how == "replaced" else "no file is there now"
    assert str(raised.value).startswith(
        f"cannot write to the store {path} (it was deleted, moved or replaced while in use: {there})."
    )
    assert isinstance(raised.value, StoreError)  # exit 4, as any store that cannot be used


def test_a_store_in_place_is_written_after_the_process_changes_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative store path is the file it named when opened: a target's chdir does not make it moved."""
    monkeypatch.chdir(tmp_path)
    store = Store(Path("evaluator.db"))
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    store.start_run(RunInfo(id="run-1", name="nightly", started_at="2026-11-22T10:00:00Z"))
    store.close()
