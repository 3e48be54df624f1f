"""Test-wide guard: a test may reach loopback only. Any other connection attempt fails the test,
even when the library that tried swallows the error (the Langfuse SDK logs and drops failures)."""

from __future__ import annotations

import ipaddress
import os
import socket
import sqlite3
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langfuse import Langfuse
from opentelemetry.sdk.trace import TracerProvider

from tests.standin.langfuse_server import LangfuseStandIn

_attempts: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class OutsideNetworkError(ConnectionRefusedError):
    """Raised instead of opening a connection beyond loopback."""


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(what: str) -> OutsideNetworkError:
    _attempts.append(what)
    return OutsideNetworkError(f"network guard: tests may reach only 127.0.0.1, not {what}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        raise _refuse(str(address))
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        raise _refuse(str(address))
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not _is_loopback(host.decode() if isinstance(host, bytes) else host):
        raise _refuse(f"name lookup of {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo


@pytest.fixture(autouse=True)
def _no_outside_network() -> Iterator[None]:
    before = len(_attempts)
    yield
    tried = _attempts[before:]
    if tried:
        pytest.fail(f"test tried to reach beyond loopback: {tried}")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide for themselves whether Langfuse or an LLM endpoint is configured."""
    for name in (
        "LANGFUSE_PUBLIC_KEY",
        "LANGFUSE_SECRET_KEY",
        "LANGFUSE_BASE_URL",
        "LANGFUSE_HOST",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "EVALUATOR_JUDGE_BASE_URL",
        "EVALUATOR_JUDGE_API_KEY",
        "EVALUATOR_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)


# --- the tests' own SQLite connections ---------------------------------------------------------------
# From Python 3.13 a connection collected unclosed warns (ResourceWarning: an error under `-W error`,
# raised in whichever test runs then). Tests read the store with `with sqlite3.connect(path) as db:`,
# which commits but does not close: the connections the tests' own code opens are closed after each
# test, so only the product's own (which it must close) can warn.
_real_sqlite_connect = sqlite3.connect
_tests_connections: list[sqlite3.Connection] = []


def _tracked_sqlite_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    db = _real_sqlite_connect(*args, **kwargs)
    if str(sys._getframe(1).f_globals.get("__name__", "")).startswith("tests."):
        _tests_connections.append(db)
    return db


sqlite3.connect = _tracked_sqlite_connect


@pytest.fixture(autouse=True)
def _tests_own_connections_closed() -> Iterator[None]:
    yield
    while _tests_connections:
        _tests_connections.pop().close()


@pytest.fixture
def network_attempts() -> list[str]:
    """The guard's record, for the test that checks the guard itself."""
    return _attempts


# --- the Langfuse stand-in (tests/standin) ---------------------------------------------------------

LangfuseFactory = Callable[..., Langfuse]


@pytest.fixture
def langfuse_standin() -> Iterator[LangfuseStandIn]:
    """A started stand-in; the test fails if the stand-in broke its contract along the way."""
    with LangfuseStandIn() as standin:
        yield standin
        problems = standin.problems()
    if problems:
        pytest.fail("Langfuse stand-in problems:\n" + "\n".join(problems))


@pytest.fixture
def make_langfuse(
    langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LangfuseFactory]:
    """Build real `Langfuse` clients against the stand-in, each with a fresh key pair.

    The SDK keeps one resource manager per public key for the whole process (a reused key silently
    reuses an earlier client's base URL), and LANGFUSE_BASE_URL beats `base_url=`, so every client
    gets its own key and the LANGFUSE_* / OTEL_* environment is cleared. Clients are shut down (after
    the stand-in's faults are cleared, so the final flush is quick) before the stand-in stops.
    """
    for name in list(os.environ):
        if name.startswith(("LANGFUSE_", "OTEL_")) and name != "LANGFUSE_OPENAPI_PATH":
            monkeypatch.delenv(name)
    clients: list[Langfuse] = []

    def make(**options: Any) -> Langfuse:
        public_key, secret_key = langfuse_standin.new_keys()
        client = Langfuse(
            public_key=public_key,
            secret_key=secret_key,
            base_url=langfuse_standin.base_url,
            tracer_provider=options.pop("tracer_provider", None) or TracerProvider(),
            **options,
        )
        clients.append(client)
        return client

    yield make
    langfuse_standin.clear_faults()
    langfuse_standin.come_back()
    for client in clients:
        client.shutdown()
