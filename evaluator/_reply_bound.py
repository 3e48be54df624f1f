"""A request's timeout as a bound on its whole reply, not on each read: httpx's read timeout starts again
at every byte, so a server (or a proxy before it) that sends its headers and then a byte now and then
would hold the request, and every deadline waiting on it, for ever.

Done with a client's event hooks, so the client keeps its own transports (and the environment's
proxies): `stamp_start` on each request, and on each response the reply's stream wrapped in the client
library's own byte-stream class around `chunks_within` (or `achunks_within`). Both HTTP libraries in
the process use it: the judge's (`openai`'s `httpx2`) and Langfuse's (`httpx`). Headers sent a byte at a
time are not bounded by it: the hooks run once they have come."""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

__all__ = ["achunks_within", "chunks_within", "reply_deadline", "stamp_start"]

_STARTED = "evaluator.started"


def stamp_start(request: Any) -> None:
    """The request hook: when the request began (in its extensions)."""
    request.extensions[_STARTED] = time.monotonic()


def reply_deadline(response: Any) -> tuple[float, float] | None:
    """(when the reply must have ended, the read timeout) of a request `stamp_start` stamped; None when
    it has no read timeout."""
    extensions = response.request.extensions
    seconds = (extensions.get("timeout") or {}).get("read")
    started = extensions.get(_STARTED)
    if isinstance(seconds, int | float) and seconds > 0 and isinstance(started, float):
        return started + seconds, float(seconds)
    return None


def chunks_within(
    chunks: Iterable[bytes], ends: float, seconds: float, timeout: Callable[[str], Exception]
) -> Iterator[bytes]:
    """`chunks` until `ends` (time.monotonic), then `timeout(message)` raised: the library's ReadTimeout.
    Checked first too: the headers alone may have taken the time."""
    _check(ends, seconds, timeout)
    for chunk in chunks:
        _check(ends, seconds, timeout)
        yield chunk


async def achunks_within(
    chunks: AsyncIterable[bytes], ends: float, seconds: float, timeout: Callable[[str], Exception]
) -> AsyncIterator[bytes]:
    """`chunks_within` for an async reply."""
    _check(ends, seconds, timeout)
    async for chunk in chunks:
        _check(ends, seconds, timeout)
        yield chunk


def _check(ends: float, seconds: float, timeout: Callable[[str], Exception]) -> None:
    if time.monotonic() > ends:
        raise timeout(f"the reply took longer than {seconds:g} s in all")
