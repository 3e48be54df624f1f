"""A request's timeout as a bound on its whole reply (evaluator/_reply_bound.py), for either HTTP library."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from evaluator._reply_bound import achunks_within, chunks_within


class LateError(Exception):
    pass


def _chunks(log: list[str]) -> Iterator[bytes]:
    log.append("first")
    yield b"a"
    log.append("second")
    yield b"b"


def test_a_reply_within_its_time_is_read_whole() -> None:
    assert b"".join(chunks_within(_chunks([]), time.monotonic() + 60, 60, LateError)) == b"ab"


def test_a_reply_past_its_time_ends_in_the_library_s_timeout_before_any_chunk() -> None:
    log: list[str] = []
    with pytest.raises(LateError, match="the reply took longer than 2 s in all"):
        list(chunks_within(_chunks(log), time.monotonic() - 1, 2, LateError))
    assert log == []  # the headers alone took the time: not a byte read


def test_an_async_reply_is_bounded_alike() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"a"

    async def read(ends: float) -> bytes:
        return b"".join([chunk async for chunk in achunks_within(chunks(), ends, 2, LateError)])

    assert asyncio.run(read(time.monotonic() + 60)) == b"a"
    with pytest.raises(LateError):
        asyncio.run(read(time.monotonic() - 1))
