"""Delivery from the outbox: sent once acknowledged, retried on outages, rejected kept apart."""

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluator._time import Deadline
from evaluator.errors import LangfuseAuthError, LangfuseUnavailableError, StoreError
from evaluator.results import JudgeStatus, Score, evaluate, scores_for
from evaluator.storage import LiveDelivery, MemorySink, Store, deliver
from tests.builders import scenario, trace_of

NOW = "2026-11-22T10:00:00Z"
DEST = "http://127.0.0.1:3000 pk-lf-test"


def _store_with_scores(runs: Sequence[str] = ("run-1",)) -> Store:
    store = Store(None)
    for run_id in runs:
        result = evaluate(
            scenario(expected={"tools": {"include": ["a"]}}),
            trace_of(["o"], ["a"]),
            judge_status=JudgeStatus(status="skipped", reason="t"),
            finished_at=NOW,
        )
        store.record(run_id, result, scores_for(result, run_id=run_id), destination=DEST)
    return store


@dataclass
class FlakySink:
    """Fails `failures` times with an outage, then accepts."""

    failures: int
    retry_after: float | None = None
    calls: int = 0

    def post_scores(
        self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
    ) -> dict[str, str]:
        self.calls += 1
        if self.calls <= self.failures:
            raise LangfuseUnavailableError("down", status=503, retry_after=self.retry_after)
        return {}


def test_everything_sent_once_in_batches() -> None:
    store, sink = _store_with_scores(["r1", "r2"]), MemorySink()
    report = deliver(store, sink, DEST, batch_size=2, now=lambda: NOW)
    assert report.sent == 6 and report.unsent == 0 and report.complete
    assert [len(p) for p in sink.posts] == [2, 2, 2]
    assert len({s.id for p in sink.posts for s in p}) == 6
    assert deliver(store, sink, DEST, now=lambda: NOW).sent == 0  # nothing is sent twice
    assert len(sink.posts) == 3


def test_only_the_given_run() -> None:
    store, sink = _store_with_scores(["r1", "r2"]), MemorySink()
    assert deliver(store, sink, DEST, run_id="r2", now=lambda: NOW).sent == 3
    assert store.count_scores(waiting_only=True) == 3


def test_outage_is_retried_honouring_retry_after() -> None:
    store, sink = _store_with_scores(), FlakySink(failures=2, retry_after=0.01)
    report = deliver(store, sink, DEST, now=lambda: NOW)
    assert sink.calls == 3 and report.sent == 3 and report.complete


def test_long_outage_leaves_scores_in_the_outbox() -> None:
    store, sink = _store_with_scores(), FlakySink(failures=100, retry_after=0.01)
    report = deliver(store, sink, DEST, max_attempts=3, now=lambda: NOW)
    assert report.sent == 0 and report.unsent == 3 and not report.complete
    assert report.error is not None and "gave up after 3 attempts" in report.error
    assert store.count_scores(waiting_only=True) == 3
    assert deliver(store, MemorySink(), DEST, now=lambda: NOW).sent == 3  # sync later delivers them


def test_rejected_scores_are_kept_apart_and_not_resent() -> None:
    store = _store_with_scores()
    sink = MemorySink(reject=lambda s: "bad value" if s.name == "workflow_tools_pass" else None)
    report = deliver(store, sink, DEST, now=lambda: NOW)
    assert report.sent == 2 and list(report.rejected.values()) == ["bad value"]
    assert report.unsent == 0 and not report.complete
    assert deliver(store, sink, DEST, now=lambda: NOW).sent == 0


def test_wrong_keys_stop_at_once() -> None:
    class Refusing:
        calls = 0

        def post_scores(
            self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
        ) -> dict[str, str]:
            Refusing.calls += 1
            raise LangfuseAuthError("keys rejected")

    with pytest.raises(LangfuseAuthError):
        deliver(_store_with_scores(), Refusing(), DEST, now=lambda: NOW)
    assert Refusing.calls == 1


class _FullStore(Store):
    """A store whose disk filled up once it had the run's scores: nothing more can be marked."""

    def mark_sent(self, score_ids: Sequence[str], sent_at: str) -> None:
        raise StoreError("cannot write to the store s.db (the disk is full). Fix: free space.")


def test_live_delivery_meeting_a_failing_store_stops_with_a_warning_never_a_dead_thread(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    crashed: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    store, sink = _FullStore(None), MemorySink()
    result = evaluate(
        scenario(expected={"tools": {"include": ["a"]}}),
        trace_of(["o"], ["a"]),
        judge_status=JudgeStatus(status="skipped", reason="t"),
        finished_at=NOW,
    )
    store.record("r1", result, scores_for(result, run_id="r1"), destination=DEST)
    store.ack_spans(DEST, {result.trace_id: 99})
    live = LiveDelivery(store, sink, DEST, "r1", batch_size=10, interval=0.01, now=lambda: NOW)
    for _ in range(500):
        if sink.posts and not live._thread.is_alive():
            break
        time.sleep(0.01)
    assert live.finish(Deadline(5)) and crashed == []
    assert len(sink.posts) == 1  # posted once, then stopped: the store could not mark it
    assert "live score delivery stopped: cannot write to the store s.db" in caplog.text
    assert "`evaluator sync` posts them again" in caplog.text


@dataclass
class _HeldSink:
    """Accepts each batch once `release` is set: a batch still in flight when the run's deadline ends."""

    release: threading.Event
    posting: threading.Event

    def post_scores(
        self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
    ) -> dict[str, str]:
        self.posting.set()
        self.release.wait(10)
        return {}


def test_a_batch_in_flight_when_run_suite_closes_the_store_ends_with_a_warning_never_a_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    # run_suite: Session.finish gives the live delivery the delivery deadline, then the store is closed
    # (_close) while a batch may still be in flight; Langfuse taking it then marks it in a closed store.
    crashed: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    store = Store(tmp_path / "s.db")
    result = evaluate(
        scenario(expected={"tools": {"include": ["a"]}}),
        trace_of(["o"], ["a"]),
        judge_status=JudgeStatus(status="skipped", reason="t"),
        finished_at=NOW,
    )
    store.record("r1", result, scores_for(result, run_id="r1"), destination=DEST)
    store.ack_spans(DEST, {result.trace_id: 99})
    sink = _HeldSink(release=threading.Event(), posting=threading.Event())
    live = LiveDelivery(store, sink, DEST, "r1", batch_size=10, interval=0.01, now=lambda: NOW)
    assert sink.posting.wait(10)
    assert not live.finish(Deadline(0.05))  # the batch is still in flight
    store.close()
    sink.release.set()
    live._thread.join(10)
    assert not live._thread.is_alive()
    assert crashed == []  # was: sqlite3.ProgrammingError "Cannot operate on a closed database" in a thread
    assert "live score delivery stopped" in caplog.text and "`evaluator sync` posts them again" in caplog.text


def test_a_write_to_a_closed_store_is_a_store_error() -> None:
    store = Store(None)
    store.close()
    with pytest.raises(StoreError, match="closed database"):
        store.mark_sent(["s1"], NOW)
