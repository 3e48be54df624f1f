"""Delivery from the local outbox to Langfuse: scores (the SQLite `scores` table), and span batches the SDK
could not deliver (`span_batches`).

A score is marked sent only once the sink acknowledged it. Transient failures (network, 5xx, 429) are
retried with exponential backoff, honouring Retry-After, within a deadline; what is still unsent then
stays in the outbox for `evaluator sync`. Wrong keys stop delivery at once (retrying cannot help).
Rejected scores (a 207's per-item errors, a 400 for that score) keep their reason in the store's `rejected`
column and are not posted again unless `sync --retry-rejected` asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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

from evaluator.errors import LangfuseUnavailableError
from evaluator.scores import Score
from evaluator.store import Store

T = TypeVar("T")


class ScoreSink(Protocol):
    def post_scores(self, scores: Sequence[Score]) -> dict[str, str]:
        """Post a batch; return {id: reason} for rejected scores; raise LangfuseUnavailableError for a
        transient failure and LangfuseAuthError for wrong keys."""
        ...


@dataclass
class MemorySink:
    """An in-memory sink for tests and dry runs: records every post."""

    posts: list[list[Score]] = field(default_factory=list)
    reject: Callable[[Score], str | None] = lambda _: None

    def post_scores(self, scores: Sequence[Score]) -> dict[str, str]:
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


def _wait(backoff: wait_exponential, cap: float) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, LangfuseUnavailableError) and exc.retry_after is not None:
            return min(exc.retry_after, cap)
        return float(backoff(state))

    return wait


class _Deadline:
    """One deadline for a whole delivery, and the retry policy for each request within it."""

    def __init__(self, seconds: float, max_attempts: int) -> None:
        self.seconds = seconds
        self._max_attempts = max_attempts
        self._started = time.monotonic()

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self._started)

    def call(self, post: Callable[..., T], *args: object) -> T:
        """`post(*args)`, retried on outages; _StopDeliveryError once the deadline passed (then nothing is
        posted) or the attempts or the time ran out."""
        remaining = self.remaining()
        if remaining <= 0:
            raise _StopDeliveryError(f"the delivery deadline ({self.seconds:g} s) passed")
        retrying = Retrying(
            retry=retry_if_exception_type(LangfuseUnavailableError),
            stop=stop_after_attempt(self._max_attempts) | stop_after_delay(remaining),
            wait=_wait(wait_exponential(multiplier=0.5, max=8), cap=remaining),
            reraise=False,
        )
        try:
            return retrying(post, *args)
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
    batch_size: int = 50,
    deadline_seconds: float = 30.0,
    max_attempts: int = 8,
    run_id: str | None = None,
    now: Callable[[], str],
) -> DeliveryReport:
    """Post every score waiting for `destination` (of `run_id`, or all), in batches, until done or the
    deadline; no batch starts after the deadline."""
    deadline = _Deadline(deadline_seconds, max_attempts)
    sent, rejected = 0, {}
    pending = store.unsent_scores(destination, run_id=run_id)
    error: str | None = None
    for offset in range(0, len(pending), batch_size):
        batch = pending[offset : offset + batch_size]
        try:
            batch_rejected = deadline.call(sink.post_scores, batch)
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
    def resend_spans(self, payload: bytes) -> None: ...


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
    deadline_seconds: float = 30.0,
    max_attempts: int = 8,
    now: Callable[[], str],
) -> SpanDeliveryReport:
    """Send again the span batches the SDK could not deliver, oldest first, until done or the deadline."""
    deadline = _Deadline(deadline_seconds, max_attempts)
    sent, error = 0, None
    for batch_id, payload, spans in store.unsent_span_batches(destination):
        try:
            deadline.call(sender.resend_spans, payload)
        except _StopDeliveryError as stop:
            error = str(stop)
            break
        store.mark_span_batch_sent(batch_id, now())
        sent += spans
    return SpanDeliveryReport(
        sent_spans=sent, waiting_batches=len(store.unsent_span_batches(destination)), error=error
    )
