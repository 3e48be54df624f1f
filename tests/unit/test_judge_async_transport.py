"""The async judge client's transport (evaluator/judge/async_transport.py): httpx's own pool, whose idle
connections answer "did the server close you?" with one poll of a socket kept from the start."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from evaluator.judge import async_transport
from evaluator.judge.async_transport import JudgeHttpClient, readable

REPLY = json.dumps({"ok": True}).encode()


def test_an_idle_socket_is_not_readable_until_its_peer_closes_it() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert readable(ours) is False
        theirs.close()
        assert readable(ours) is True  # the next read returns b"": the connection is over
    assert readable(None) is True  # no socket: as closed


@asynccontextmanager
async def _server(*, close_after_reply: bool) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback HTTP/1.1 server answering every request with keep-alive headers; with
    `close_after_reply` it then closes the connection anyway (as a server whose keep-alive ran out
    does). Yields its URL and the number of connections it accepted (a one-item list)."""
    accepted = [0]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        try:
            while (head := await reader.readuntil(b"\r\n\r\n")) is not None:
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                await reader.readexactly(length)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
                    + f"Content-Length: {len(REPLY)}\r\n\r\n".encode()
                    + REPLY
                )
                await writer.drain()
                if close_after_reply:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", accepted
    finally:
        server.close()
        await server.wait_closed()


def test_a_connection_the_server_closed_while_idle_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second request finds the first one's connection closed by the server (the probe, on the
    connection's own socket, says so) and opens a new one instead of failing on the dead one."""
    probes: list[bool] = []

    def counted(sock: socket.socket | None) -> bool:
        probes.append(answer := readable(sock))
        return answer

    monkeypatch.setattr(async_transport, "readable", counted)

    async def two_requests() -> list[int]:
        async with _server(close_after_reply=True) as (url, accepted), JudgeHttpClient() as client:
            first = await client.post(f"{url}/v1/chat/completions", json={})
            await asyncio.sleep(0.05)  # the server's close arrives
            second = await client.post(f"{url}/v1/chat/completions", json={})
            return [first.status_code, second.status_code, accepted[0]]

    assert asyncio.run(two_requests()) == [200, 200, 2]
    assert True in probes  # the pool asked our probe, and it saw the close


def test_a_connection_kept_alive_is_reused() -> None:
    async def three_requests() -> int:
        async with _server(close_after_reply=False) as (url, accepted), JudgeHttpClient() as client:
            for _ in range(3):
                assert (await client.post(f"{url}/v1/chat/completions", json={})).status_code == 200
            return accepted[0]

    assert asyncio.run(three_requests()) == 1
