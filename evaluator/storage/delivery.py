"""Delivery from the local outbox to Langfuse: the spans of each trace (table `traces`) and the scores.

Every span a connected run captured is in the store with its scenario's result, and a trace counts as
in Langfuse once the SDK's exporter delivered as many of its spans (`span_acks`) or `sync` re-sent it.
A score goes only once its trace is in Langfuse (unless forced), so no score lands on a trace Langfuse
does not have. A score is marked sent only once Langfuse acknowledged it; a 207's rejected items and a
400's guilty scores keep their reason in `rejected` and are not posted again unless
`sync --retry-rejected` asks (a 207 item refused for a passing reason, 5xx or 429, is no rejection:
the sink posts it again, and failing so twice it is an outage, retried below).

Transient failures (network, 5xx, 429) are retried with exponential backoff, honouring Retry-After,
each try with a longer timeout than the last, all within one deadline; a request that timed out on its
last try leaves its items *unknown* (Langfuse may have them; the next delivery confirms), not lost.
Wrong keys stop delivery at once (retrying cannot help).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from evaluator._time import Deadline
from evaluator.errors import EvaluatorError, LangfuseUnavailableError, StoreError
from evaluator.results import Score
from evaluator.storage.store import Store

__all__ = [
    "DeliveryReport",
    "ExperimentScoreSender",
    "LiveDelivery",
    "MemorySink",
    "ScoreSink",
    "SpanDeliveryReport",
    "SpanSender",
    "deliver",
    "deliver_experiment_scores",
    "deliver_spans",
]

T = TypeVar("T")
_log = logging.getLogger(__name__)
_DEFAULT_DEADLINE_SECONDS = 30.0


class ScoreSink(Protocol):
    def post_scores(
        self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
    ) -> dict[str, str]:
        """Post a batch, within `deadline` (later attempts may wait longer for an answer); return
        {id: reason} for rejected scores; raise LangfuseUnavailableError for a transient failure and
        LangfuseAuthError for wrong keys."""
        ...


class SpanSender(Protocol):
    def resend_spans(self, payload: bytes, *, deadline: Deadline | None = None, attempt: int = 1) -> None:
        """Post one OTLP request body; raise as `ScoreSink.post_scores` does."""
        ...


@dataclass
class MemorySink:
    """An in-memory sink for tests and dry runs: records every post."""

    posts: list[list[Score]] = field(default_factory=list)
    reject: Callable[[Score], str | None] = lambda _: None

    def post_scores(
        self, scores: Sequence[Score], *, deadline: Deadline | None = None, attempt: int = 1
    ) -> dict[str, str]:
        self.posts.append(list(scores))
        return {s.id: reason for s in scores if (reason := self.reject(s))}


@dataclass(frozen=True, kw_only=True)
class DeliveryReport:
    sent: int
    rejected: dict[str, str]
    unsent: int  # still in the outbox (of which `held` wait for their trace to be in Langfuse)
    held: int = 0
    unknown: int = 0  # their last request timed out: Langfuse may have them
    error: str | None = None  # why delivery stopped early

    @property
    def complete(self) -> bool:
        return self.unsent == 0 and not self.rejected and not self.unknown


@dataclass(frozen=True, kw_only=True)
class SpanDeliveryReport:
    sent_traces: int
    sent_spans: int
    waiting_traces: int  # still not whole in Langfuse
    unknown: int = 0
    error: str | None = None


def _transient(exc: BaseException) -> bool:
    """Worth another try: no answer, a timeout, 429 or a server error (a 4xx answer would be the same
    next time)."""
    if not isinstance(exc, LangfuseUnavailableError):
        return False
    return exc.status is None or exc.timed_out or exc.status == 429 or exc.status >= 500


class _TimedOutError(Exception):
    """The last try of a request timed out: the items are unknown, not refused."""


class _StopDeliveryError(Exception):
    """Delivery stops here; the rest stays in the outbox. The message says why."""


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
        """`post(*args, deadline=..., attempt=n)`, retried on outages. _TimedOutError when the last try
        timed out; _StopDeliveryError once the deadline passed (then nothing is posted) or the tries
        ran out for another reason; a LangfuseUnavailableError that no retry can mend (a 4xx answer)
        as it is."""
        remaining = self.deadline.remaining()
        if remaining <= 0:
            raise _StopDeliveryError(f"the delivery deadline ({self.deadline.seconds:g} s) passed")
        retrying = Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(self._max_attempts) | stop_after_delay(remaining),
            wait=_wait(wait_exponential(multiplier=0.5, max=8), self.deadline),
            reraise=False,
        )
        try:
            for attempt in retrying:
                with attempt:
                    number = attempt.retry_state.attempt_number
                    return post(*args, deadline=self.deadline, attempt=number)
        except RetryError as exc:
            last = exc.last_attempt
            failure = last.exception()
            why = f"{failure} (gave up after {last.attempt_number} attempts)"
            if isinstance(failure, LangfuseUnavailableError) and failure.timed_out:
                raise _TimedOutError(why) from None
            raise _StopDeliveryError(why) from None
        raise _StopDeliveryError("no attempt was made")  # pragma: no cover - tenacity always tries once


def deliver(
    store: Store,
    sink: ScoreSink,
    destination: str,
    *,
    deadline: Deadline | None = None,
    batch_size: int = 50,
    max_attempts: int = 8,
    run_id: str | None = None,
    force: bool = False,
    now: Callable[[], str],
) -> DeliveryReport:
    """Post every score waiting for `destination` (of `run_id`, or all) whose trace is in Langfuse (all
    of them with `force`), in batches, until done or the deadline (default: 30 s from now); no batch
    starts after the deadline. Scores whose batch timed out stay in the outbox, counted as unknown."""
    attempts = _Attempts(deadline or Deadline(_DEFAULT_DEADLINE_SECONDS), max_attempts)
    sent, unknown, rejected = 0, 0, {}
    pending = store.unsent_scores(destination, run_id=run_id, force=force)
    error: str | None = None
    for offset in range(0, len(pending), batch_size):
        batch = pending[offset : offset + batch_size]
        try:
            batch_rejected = attempts.call(sink.post_scores, batch)
        except _TimedOutError as timed_out:
            unknown, error = unknown + len(batch), str(timed_out)
            continue
        except (_StopDeliveryError, LangfuseUnavailableError) as stop:
            error = str(stop)
            break
        store.mark_sent([s.id for s in batch if s.id not in batch_rejected], now())
        store.mark_rejected(batch_rejected)
        sent += len(batch) - len(batch_rejected)
        rejected.update(batch_rejected)
    waiting = store.count_unsent_scores(destination, run_id=run_id, force=True)
    eligible = store.count_unsent_scores(destination, run_id=run_id, force=force)
    return DeliveryReport(
        sent=sent,
        rejected=rejected,
        unsent=waiting,
        held=waiting - eligible,
        unknown=unknown,
        error=error,
    )


def deliver_spans(
    store: Store,
    sender: SpanSender,
    destination: str,
    *,
    deadline: Deadline | None = None,
    run_id: str | None = None,
    max_attempts: int = 8,
    now: Callable[[], str],
) -> SpanDeliveryReport:
    """Send again every trace (of `run_id`, or all) Langfuse has not got whole, oldest first, until
    done or the deadline (default: 30 s from now). Langfuse merges observations by id, so the spans it
    had already are not duplicated."""
    attempts = _Attempts(deadline or Deadline(_DEFAULT_DEADLINE_SECONDS), max_attempts)
    traces = spans = unknown = 0
    error: str | None = None
    for trace_id, payload, count in store.unsent_traces(destination, run_id=run_id):
        try:
            attempts.call(sender.resend_spans, payload)
        except _TimedOutError as timed_out:
            unknown, error = unknown + 1, str(timed_out)
            continue
        except LangfuseUnavailableError as refused:  # this trace's body, not Langfuse: the next may go
            error = f"trace {trace_id}: {refused}"
            continue
        except _StopDeliveryError as stop:
            error = str(stop)
            break
        store.mark_trace_sent(destination, trace_id, now())
        traces, spans = traces + 1, spans + count
    return SpanDeliveryReport(
        sent_traces=traces,
        sent_spans=spans,
        waiting_traces=len(store.unsent_traces(destination, run_id=run_id)),
        unknown=unknown,
        error=error,
    )


class ExperimentScoreSender(Protocol):
    def post_score_bodies(
        self, body: Sequence[Mapping[str, Any]], *, deadline: Deadline | None = None
    ) -> None:
        """Post run-level scores (their kept request body); raise our exceptions on failure."""


def deliver_experiment_scores(
    store: Store,
    sender: ExperimentScoreSender,
    destination: str,
    *,
    deadline: Deadline,
    now: Callable[[], str],
) -> tuple[int, str | None]:
    """Post again each run's run-level scores its experiment has not taken (oldest first, one try each,
    within `deadline`): (runs whose scores Langfuse took, the last failure)."""
    sent, error = 0, None
    for run_id, body in store.unsent_experiment_scores(destination):
        if deadline.passed:
            error = "the deadline passed"
            break
        try:
            sender.post_score_bodies(body, deadline=deadline)
        except LangfuseUnavailableError as exc:
            error = f"run {run_id}: {exc}"
            continue
        store.mark_experiment_scores_sent(run_id, destination, now())
        sent += 1
    return sent, error


class LiveDelivery:
    """Delivers a run's scores while it goes on: every `interval` seconds, the scores whose trace is
    in Langfuse are posted in batches of `batch_size`, up to `concurrency` batches at once, one try
    each. What fails stays in the outbox for the sweep after the run (`deliver`), which `finish` lets
    start only once this loop has ended, so no score is in two requests at once."""

    def __init__(
        self,
        store: Store,
        sink: ScoreSink,
        destination: str,
        run_id: str,
        *,
        batch_size: int,
        interval: float = 0.5,
        concurrency: int = 2,
        now: Callable[[], str],
    ) -> None:
        self._store = store
        self._sink = sink
        self._destination = destination
        self._run_id = run_id
        self._batch_size = batch_size
        self._interval = interval
        self._now = now
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evaluator-delivery")
        self._thread = threading.Thread(target=self._loop, daemon=True, name="evaluator-live-delivery")
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                pending = self._store.unsent_scores(self._destination, run_id=self._run_id)
                batches = [
                    pending[i : i + self._batch_size] for i in range(0, len(pending), self._batch_size)
                ]
                if batches and not all(self._pool.map(self._post, batches)):
                    return  # Langfuse is down or refuses the keys: the sweep after the run takes over
        except StoreError as exc:  # the run meets the store's failure too, and says it
            _log.warning(
                "live score delivery stopped: %s Scores Langfuse took but the store could not mark stay "
                "in its outbox; `evaluator sync` posts them again, and Langfuse keeps one score per id.",
                exc,
            )

    def _post(self, batch: Sequence[Score]) -> bool:
        if self._stop.is_set():
            return False
        try:
            rejected = self._sink.post_scores(batch)
        except EvaluatorError:  # an outage, or keys refused: the sweep after the run retries and reports
            return False
        self._store.mark_sent([s.id for s in batch if s.id not in rejected], self._now())
        self._store.mark_rejected(rejected)
        return True

    def finish(self, deadline: Deadline) -> bool:
        """Post nothing more; wait (within `deadline`) for the batches in flight. False when some are
        still in flight: then the sweep after the run must not post this run's scores (they would be
        in two requests at once); they stay in the outbox for `sync` if those requests fail."""
        self._stop.set()
        self._thread.join(deadline.remaining())
        self._pool.shutdown(wait=False, cancel_futures=True)
        return not self._thread.is_alive()
