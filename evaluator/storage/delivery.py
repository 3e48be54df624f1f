"""Delivery from the local outbox to Langfuse: scores (the SQLite `scores` table), and span batches the SDK
could not deliver (`span_batches`).

A score is marked sent only once the sink acknowledged it. Transient failures (network, 5xx, 429) are
retried with exponential backoff, honouring Retry-After, within a deadline; what is still unsent then
stays in the outbox for `evaluator sync`. Wrong keys stop delivery at once (retrying cannot help).
Rejected scores (a 207's per-item errors, a 400 for that score) keep their reason in the store's `rejected`
column and are not posted again unless `sync --retry-rejected` asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from evaluator._time import Deadline
from evaluator.errors import EvaluatorError, LangfuseUnavailableError
from evaluator.results.scores import Score
from evaluator.storage.store import Store

T = TypeVar("T")
_DEFAULT_DEADLINE_SECONDS = 30.0


class ScoreSink(Protocol):
    def post_scores(self, scores: Sequence[Score], *, deadline: Deadline | None = None) -> dict[str, str]:
        """Post a batch, within `deadline`; return {id: reason} for rejected scores; raise
        LangfuseUnavailableError for a transient failure and LangfuseAuthError for wrong keys."""
        ...


@dataclass
class MemorySink:
    """An in-memory sink for tests and dry runs: records every post."""

    posts: list[list[Score]] = field(default_factory=list)
    reject: Callable[[Score], str | None] = lambda _: None

    def post_scores(self, scores: Sequence[Score], *, deadline: Deadline | None = None) -> dict[str, str]:
        self.posts.append(list(scores))
        return {s.id: reason for s in scores if (reason := self.reject(s))}


@dataclass(frozen=True, kw_only=True)
class DeliveryReport:
    sent: int
    rejected: dict[str, str]
    unsent: int  # still in the outbox
    error: str | None = None  # why delivery stopped early

    @property
    def complete(self) -> bool:
        return self.unsent == 0 and not self.rejected


def _wait(backoff: wait_exponential, deadline: Deadline) -> Callable[[RetryCallState], float]:
    """Retry-After when Langfuse sent one, else exponential backoff; never past the deadline (capped by
    the time left now, not at the start)."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, LangfuseUnavailableError) and exc.retry_after is not None:
            return deadline.cap(exc.retry_after)
        return deadline.cap(float(backoff(state)))

    return wait


class _Attempts:
    """The retry policy for each request of one delivery, within the deadline that delivery shares."""

    def __init__(self, deadline: Deadline, max_attempts: int) -> None:
        self.deadline = deadline
        self._max_attempts = max_attempts

    def call(self, post: Callable[..., T], *args: object) -> T:
        """`post(*args, deadline=...)`, retried on outages; _StopDeliveryError once the deadline passed
        (then nothing is posted) or the attempts or the time ran out."""
        remaining = self.deadline.remaining()
        if remaining <= 0:
            raise _StopDeliveryError(f"the delivery deadline ({self.deadline.seconds:g} s) passed")
        retrying = Retrying(
            retry=retry_if_exception_type(LangfuseUnavailableError),
            stop=stop_after_attempt(self._max_attempts) | stop_after_delay(remaining),
            wait=_wait(wait_exponential(multiplier=0.5, max=8), self.deadline),
            reraise=False,
        )
        try:
            return retrying(post, *args, deadline=self.deadline)
        except RetryError as exc:
            last = exc.last_attempt
            raise _StopDeliveryError(
                f"{last.exception()} (gave up after {last.attempt_number} attempts)"
            ) from None


class _StopDeliveryError(Exception):
    """Delivery stops here; the rest stays in the outbox. The message says why."""


def deliver(
    store: Store,
    sink: ScoreSink,
    destination: str,
    *,
    deadline: Deadline | None = None,
    batch_size: int = 50,
    max_attempts: int = 8,
    run_id: str | None = None,
    now: Callable[[], str],
) -> DeliveryReport:
    """Post every score waiting for `destination` (of `run_id`, or all), in batches, until done or the
    deadline (default: 30 s from now); no batch starts after the deadline."""
    attempts = _Attempts(deadline or Deadline(_DEFAULT_DEADLINE_SECONDS), max_attempts)
    sent, rejected = 0, {}
    pending = store.unsent_scores(destination, run_id=run_id)
    error: str | None = None
    for offset in range(0, len(pending), batch_size):
        batch = pending[offset : offset + batch_size]
        try:
            batch_rejected = attempts.call(sink.post_scores, batch)
        except _StopDeliveryError as stop:
            error = str(stop)
            break
        store.mark_sent([s.id for s in batch if s.id not in batch_rejected], now())
        store.mark_rejected(batch_rejected)
        sent += len(batch) - len(batch_rejected)
        rejected.update(batch_rejected)
    unsent = len(store.unsent_scores(destination, run_id=run_id))
    return DeliveryReport(sent=sent, rejected=rejected, unsent=unsent, error=error)


class SpanSender(Protocol):
    def resend_spans(self, payload: bytes, *, deadline: Deadline | None = None) -> None: ...


@dataclass(frozen=True, kw_only=True)
class SpanDeliveryReport:
    sent_spans: int
    waiting_batches: int
    error: str | None = None


def deliver_spans(
    store: Store,
    sender: SpanSender,
    destination: str,
    *,
    deadline: Deadline | None = None,
    max_attempts: int = 8,
    now: Callable[[], str],
) -> SpanDeliveryReport:
    """Send again the span batches the SDK could not deliver, oldest first, until done or the deadline
    (default: 30 s from now)."""
    attempts = _Attempts(deadline or Deadline(_DEFAULT_DEADLINE_SECONDS), max_attempts)
    sent, error = 0, None
    for batch_id, payload, spans in store.unsent_span_batches(destination):
        try:
            attempts.call(sender.resend_spans, payload)
        except _StopDeliveryError as stop:
            error = str(stop)
            break
        store.mark_span_batch_sent(batch_id, now())
        sent += spans
    return SpanDeliveryReport(
        sent_spans=sent, waiting_batches=len(store.unsent_span_batches(destination)), error=error
    )


class LiveDelivery:
    """Delivers scores while the run goes on: recorded scores are posted in batches of `batch_size`, at
    most `concurrency` batches at once, one attempt each. What fails stays in the outbox for the sweep
    after the run (`deliver`), which `finish` lets start only once the batches in flight have ended, so
    no score is in two requests at once."""

    def __init__(
        self,
        store: Store,
        sink: ScoreSink,
        *,
        batch_size: int,
        concurrency: int = 2,
        now: Callable[[], str],
    ) -> None:
        self._store = store
        self._sink = sink
        self._batch_size = batch_size
        self._now = now
        self._lock = threading.Lock()
        self._pending: list[Score] = []
        self._in_flight: set[Future[None]] = set()
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evaluator-delivery")
        self._stopped = False  # an outage or wrong keys: the sweep after the run takes over

    def offer(self, scores: Sequence[Score]) -> None:
        """Scores just recorded (already in the outbox); full batches are posted at once."""
        with self._lock:
            if self._stopped:
                return
            self._pending.extend(scores)
            while len(self._pending) >= self._batch_size:
                batch, self._pending = self._pending[: self._batch_size], self._pending[self._batch_size :]
                future = self._pool.submit(self._post, batch)
                self._in_flight.add(future)
                future.add_done_callback(self._in_flight.discard)

    def _post(self, batch: list[Score]) -> None:
        try:
            rejected = self._sink.post_scores(batch)
        except EvaluatorError:  # an outage, or keys refused: the sweep after the run retries and reports
            with self._lock:
                self._stopped = True
            return
        self._store.mark_sent([s.id for s in batch if s.id not in rejected], self._now())
        self._store.mark_rejected(rejected)

    def finish(self, deadline: Deadline) -> None:
        """Post nothing more; wait (within `deadline`) for the batches in flight."""
        with self._lock:
            self._stopped = True
            in_flight = list(self._in_flight)
        wait(in_flight, timeout=deadline.remaining())
        self._pool.shutdown(wait=False, cancel_futures=True)
