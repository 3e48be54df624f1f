"""The one retry policy of every judge call (tenacity), and the one limiter they all share.

Retried: no answer (connection refused, timeout), 408, 409, 429 and 5xx; never other 4xx (a wrong key
or model name will not get better). At most `max_attempts` tries per request. The wait before the
next try is the server's Retry-After when it gave one (capped at `max_delay`), else exponential
backoff with jitter. A 429 slows *every* judge call, not only the one that got it: its wait is put on
the shared `RateGate`, which every call passes before it is sent.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from evaluator.errors import JudgeUnavailableError, ResponseFormatRejectedError

__all__ = ["RateGate", "RetryPolicy"]

T = TypeVar("T")


class RateGate:
    """A shared "not before" time: after a 429, no judge call is sent before it."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._not_before = 0.0

    def hold(self, seconds: float) -> None:
        """No call before `seconds` from now (a later hold already in place stays)."""
        with self._lock:
            self._not_before = max(self._not_before, self._clock() + seconds)

    def wait(self) -> float:
        """Wait until calls may go out; the seconds waited."""
        waited = 0.0
        while (delay := self._delay()) > 0:
            self._sleep(delay)
            waited += delay
        return waited

    async def await_open(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        """`wait`, on the running event loop."""
        while (delay := self._delay()) > 0:
            await sleep(delay)

    def _delay(self) -> float:
        with self._lock:
            return self._not_before - self._clock()


def _retryable(exc: BaseException) -> bool:
    return (
        isinstance(exc, JudgeUnavailableError)
        and not isinstance(exc, ResponseFormatRejectedError)
        and exc.retryable
    )


OnRetry = Callable[[BaseException], None]


def _no_hook(exc: BaseException) -> None:
    return None


@dataclass(kw_only=True)
class RetryPolicy:
    max_attempts: int = 4
    gate: RateGate = field(default_factory=RateGate)
    base_delay: float = 0.5  # the first backoff, doubled per try
    max_delay: float = 60.0  # no wait is longer, whatever Retry-After says
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # `acall`'s

    def call(self, request: Callable[[], T], on_retry: OnRetry = _no_hook) -> T:
        """`request()` through the gate, retried per the policy; the last error when every try failed.
        `on_retry(error)` is called each time a failed try is to be tried again.

        The first try is made directly and only a retryable failure goes on to tenacity, for the
        tries left: almost every call needs no other, and tenacity's machinery cost more CPU per call
        than the rest of a judgement's own work (benchmarks/bench_judges.py)."""

        def attempt() -> T:
            self.gate.wait()
            return request()

        try:
            return attempt()
        except Exception as exc:
            if not _retryable(exc):
                raise
            delay = self._delay(exc, 1)  # a 429 closes the gate for every call, even with no try left
            if self.max_attempts < 2:
                raise
            on_retry(exc)
            self.sleep(delay)
        result: T = Retrying(sleep=self.sleep, **self._after_first(on_retry))(attempt)
        return result

    async def acall(self, request: Callable[[], Awaitable[T]], on_retry: OnRetry = _no_hook) -> T:
        """`call`, on the running event loop: the same gate, bound and waits."""

        async def attempt() -> T:
            await self.gate.await_open(self.asleep)
            return await request()

        try:
            return await attempt()
        except Exception as exc:
            if not _retryable(exc):
                raise
            delay = self._delay(exc, 1)
            if self.max_attempts < 2:
                raise
            on_retry(exc)
            await self.asleep(delay)
        result: T = await AsyncRetrying(sleep=self.asleep, **self._after_first(on_retry))(attempt)
        return result

    def _after_first(self, on_retry: OnRetry) -> dict[str, Any]:
        """tenacity's settings for the tries after the first (`call` and `acall` make that one)."""

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            if exc is not None:
                on_retry(exc)

        return {
            "stop": stop_after_attempt(self.max_attempts - 1),
            "wait": self._wait_after_first,
            "retry": retry_if_exception(_retryable),
            "before_sleep": before_sleep,
            "reraise": True,
        }

    def _wait_after_first(self, state: RetryCallState) -> float:
        """The wait after a failed try of tenacity's, which counts from the second try on."""
        exc = state.outcome.exception() if state.outcome is not None else None
        return self._delay(exc, state.attempt_number + 1)

    def _delay(self, exc: BaseException | None, attempt_number: int) -> float:
        """The wait after try `attempt_number` failed with `exc`: its Retry-After (capped), else the
        exponential backoff with jitter; after a 429, the wait is put on the gate (every call waits
        there, this one included) and this call waits no more than that."""
        backoff: float = self.base_delay * 2.0 ** (attempt_number - 1)
        delay: float = min(self.max_delay, backoff * (0.5 + random.random() / 2))  # noqa: S311 - jitter only
        if isinstance(exc, JudgeUnavailableError) and exc.retry_after is not None:
            delay = min(self.max_delay, exc.retry_after)
        if isinstance(exc, JudgeUnavailableError) and exc.status == 429:
            self.gate.hold(delay)
            return 0.0
        return delay
