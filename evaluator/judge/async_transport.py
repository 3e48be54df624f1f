"""The async judge client's HTTP transport: httpx's own, with a cheaper check of its idle connections.

Before each request is placed, and after each one ends, httpx's connection pool checks every idle
connection for a server that has closed it (is the socket readable?). Its default network backend
answers that question by building anyio's whole table of socket attributes, the peer's address
(a system call) included, before it polls the socket: with a judge stage of 64, some 60 such checks
per judgement cost more CPU than the rest of the judgement (benchmarks/bench_judges.py). Here each
connection keeps its socket from the start and the check is the poll alone: the same answer, for a
fraction of the CPU. Everything else is httpx's and httpcore's own (the pool, its limits, TLS,
keep-alive); the client keeps the environment's proxies (those requests go through httpx's proxy
transports, unchanged).
"""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
from openai import DefaultAsyncHttpxClient

__all__ = ["JudgeHttpClient"]

_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)  # openai's
_SocketOption = Any  # httpcore's SOCKET_OPTION (a tuple of ints and bytes), passed through


def readable(sock: socket.socket | None) -> bool:
    """Whether reading the socket would not block: for an idle HTTP/1.1 connection, that the server
    closed it (or sent what it should not have). A socket that is gone counts as readable (closed)."""
    fileno = -1 if sock is None else sock.fileno()
    if fileno < 0:
        return True
    if not hasattr(select, "poll"):  # pragma: no cover - Windows
        return bool(select.select([fileno], [], [], 0)[0])
    poll = select.poll()
    poll.register(fileno, select.POLLIN)
    return bool(poll.poll(0))


class _Stream(httpcore2.AsyncNetworkStream):
    """A connection's stream that knows its socket (read once, when it connected)."""

    def __init__(self, stream: httpcore2.AsyncNetworkStream, sock: socket.socket | None = None) -> None:
        self._stream = stream
        self._socket: socket.socket | None = sock if sock is not None else stream.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return _Stream(await self._stream.start_tls(ssl_context, server_hostname, timeout), self._socket)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return readable(self._socket)
        return self._stream.get_extra_info(info)


class _Backend(httpcore2.AsyncNetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        return _Stream(
            await self._backend.connect_tcp(
                host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
            )
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[_SocketOption] | None = None
    ) -> httpcore2.AsyncNetworkStream:  # pragma: no cover - the judge connects over TCP
        stream = await self._backend.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return _Stream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _Transport(httpx2.AsyncHTTPTransport):
    """httpx's transport over a pool whose connections check themselves cheaply (see the module)."""

    def __init__(self, *, verify: ssl.SSLContext | bool, trust_env: bool, limits: httpx2.Limits) -> None:
        context = httpx2.create_ssl_context(verify=verify, trust_env=trust_env)  # loaded once
        super().__init__(verify=context, trust_env=trust_env, limits=limits)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend(),
        )


class JudgeHttpClient(DefaultAsyncHttpxClient):
    """openai's async httpx client (its timeout, connection limits and redirects), its direct
    connections through `_Transport`. httpx calls `_init_transport` for the client's own transport
    only: a proxy from the environment keeps httpx's proxy transport."""

    def _init_transport(  # noqa: PLR0917 - httpx's signature
        self,
        verify: ssl.SSLContext | str | bool = True,
        cert: httpx2._types.CertTypes | None = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = _LIMITS,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> httpx2.AsyncBaseTransport:
        if transport is None and cert is None and not isinstance(verify, str) and http1 and not http2:
            return _Transport(verify=verify, trust_env=trust_env, limits=limits)
        return super()._init_transport(verify, cert, trust_env, http1, http2, limits, transport)
