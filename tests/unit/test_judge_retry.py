"""judge/retry.py: the retry bound, Retry-After, and the one gate a 429 closes for every judge call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from evaluator.errors import JudgeUnavailableError, ResponseFormatRejectedError
from evaluator.judge import RateGate, RetryPolicy


class FakeClock:
    """Time that moves only when someone sleeps (or the test advances it)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _failing(*errors: Exception) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []
    pending = list(errors)

    def request() -> str:
        calls.append(1)
        if pending:
            raise pending.pop(0)
        return "ok"

    return calls, request


def test_retries_stop_at_max_attempts_with_the_last_error() -> None:
    calls, request = _failing(*[JudgeUnavailableError(f"down {i}", status=500) for i in range(9)])
    policy = RetryPolicy(max_attempts=4, sleep=lambda _: None)
    with pytest.raises(JudgeUnavailableError, match="down 3"):
        policy.call(request)
    assert len(calls) == 4


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    calls, request = _failing(JudgeUnavailableError("no", status=status))
    with pytest.raises(JudgeUnavailableError):
        RetryPolicy(sleep=lambda _: None).call(request)
    assert len(calls) == 1


def test_a_refused_response_format_is_not_retried() -> None:
    calls, request = _failing(ResponseFormatRejectedError("response_format", status=400))
    with pytest.raises(ResponseFormatRejectedError):
        RetryPolicy(sleep=lambda _: None).call(request)
    assert len(calls) == 1


def test_timeouts_and_server_errors_back_off_exponentially_then_succeed() -> None:
    clock = FakeClock()
    calls, request = _failing(JudgeUnavailableError("timeout"), JudgeUnavailableError("5xx", status=502))
    policy = RetryPolicy(
        base_delay=1.0, sleep=clock.sleep, gate=RateGate(clock=clock.time, sleep=clock.sleep)
    )
    assert policy.call(request) == "ok"
    assert len(calls) == 3
    first, second = clock.slept
    assert 0.5 <= first <= 1.0 and 1.0 <= second <= 2.0  # jittered: half to all of 1 s, then of 2 s


def test_retry_after_is_honoured_and_capped() -> None:
    clock = FakeClock()
    _, request = _failing(
        JudgeUnavailableError("busy", status=503, retry_after=3),
        JudgeUnavailableError("busy", status=503, retry_after=3600),
    )
    policy = RetryPolicy(max_delay=60, sleep=clock.sleep, gate=RateGate(clock=clock.time, sleep=clock.sleep))
    policy.call(request)
    assert clock.slept == [3, 60]


def test_a_429_closes_the_shared_gate_for_every_call() -> None:
    clock = FakeClock()
    gate = RateGate(clock=clock.time, sleep=clock.sleep)
    own_sleeps: list[float] = []
    policy = RetryPolicy(gate=gate, sleep=own_sleeps.append)
    _, request = _failing(JudgeUnavailableError("slow down", status=429, retry_after=7))
    assert policy.call(request) == "ok"
    assert own_sleeps == [0.0]  # the caller did not wait on its own...
    assert clock.slept == [7]  # ...it waited at the gate, where every other call waits too
    gate.hold(7)
    clock.now += 2
    assert gate.wait() == 5  # any caller arriving 2 s later waits the 5 s left
    assert gate.wait() == 0


def test_a_later_hold_is_never_shortened() -> None:
    clock = FakeClock()
    gate = RateGate(clock=clock.time, sleep=clock.sleep)
    gate.hold(10)
    gate.hold(2)
    assert gate.wait() == 10


@pytest.mark.parametrize("attempts", [1, 2])
def test_a_429_on_the_last_try_still_closes_the_gate_for_the_other_calls(attempts: int) -> None:
    """With no try left (max_attempts 1, or the last of 2), the 429 is raised, and its wait is still
    put on the gate: every other call backs off too."""
    clock = FakeClock()
    gate = RateGate(clock=clock.time, sleep=clock.sleep)
    policy = RetryPolicy(max_attempts=attempts, gate=gate, sleep=lambda _: None)
    errors = [JudgeUnavailableError("slow down", status=429, retry_after=7) for _ in range(attempts)]
    calls, request = _failing(*errors)
    with pytest.raises(JudgeUnavailableError):
        policy.call(request)
    assert len(calls) == attempts
    assert gate.wait() == 7


def test_the_awaited_call_has_the_same_tries_waits_and_gate() -> None:
    clock = FakeClock()
    gate = RateGate(clock=clock.time, sleep=clock.sleep)
    waits: list[float] = []

    async def asleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    policy = RetryPolicy(max_attempts=3, gate=gate, asleep=asleep, base_delay=1.0)
    calls, request = _failing(
        JudgeUnavailableError("down", status=503), JudgeUnavailableError("late", retry_after=4)
    )

    async def arequest() -> str:
        return request()

    assert asyncio.run(policy.acall(arequest)) == "ok"
    assert len(calls) == 3
    first, second = waits
    assert 0.5 <= first <= 1.0 and second == 4  # backoff for try 1, then the Retry-After of try 2
    one = RetryPolicy(max_attempts=1, gate=gate, asleep=asleep)
    _, limited = _failing(JudgeUnavailableError("slow down", status=429, retry_after=9))

    async def alimited() -> str:
        return limited()

    with pytest.raises(JudgeUnavailableError):
        asyncio.run(one.acall(alimited))
    assert gate.wait() == 9
