"""A Langfuse (or a proxy before it) that sends its headers, then a byte now and then: httpx's read
timeout starts again at every byte, so only a bound on the whole reply ends such a request. Each HTTP
client that talks to Langfuse (the SDK's API client, the evaluator's own, the span exporter's
transport) gives up at its timeout, and `evaluator run` ends within its deadlines, its results kept."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse import LangfuseConnection
from evaluator.langfuse._http import LangfuseApi
from evaluator.langfuse.otlp_transport import HttpxTransport
from evaluator.langfuse.settings import LangfuseSettings
from tests.integration.conftest import ROOT, langfuse_deadlines

DRIP = 0.1  # seconds between the reply's bytes: each read well within any timeout
WAIT = 20.0  # how long a test waits for a request that should give up after 1 s


class _Trickle:
    """A loopback server answering every request with a 200 of 100,000 bytes, sent a byte at a time."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True, name="trickle").start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def close(self) -> None:
        self._stop.set()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            try:
                _read_request(connection)
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                )
                while not self._stop.is_set():
                    connection.sendall(b" ")  # whitespace before JSON: still a valid reply, once whole
                    time.sleep(DRIP)
            except OSError:  # the client gave up
                return


def _read_request(connection: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").lower().split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines if line.startswith("content-length:")), 0)
    while len(body) < length and (chunk := connection.recv(65536)):
        body += chunk


@pytest.fixture
def trickle() -> Iterator[_Trickle]:
    server = _Trickle()
    yield server
    server.close()


def _settings(trickle: _Trickle) -> LangfuseSettings:
    key = uuid.uuid4().hex  # the SDK keeps one client per public key for the process
    return LangfuseSettings(
        public_key=f"pk-lf-{key}",
        secret_key=SecretStr(f"sk-lf-{key}"),
        base_url=trickle.base_url,
        timeout_seconds=1,
    )


def _ended_in_time(call: Callable[[], object]) -> tuple[float, object]:
    """(seconds taken, what `call()` returned or raised), failing when it is still running after WAIT."""
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(call())
        except Exception as exc:  # noqa: BLE001 - the test looks at what it was
            outcome.append(exc)

    started = time.monotonic()
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(WAIT)
    assert not worker.is_alive(), f"a 1 s request to a trickling Langfuse still ran after {WAIT:g} s"
    return time.monotonic() - started, outcome[0]


def test_the_sdk_s_api_client_gives_up_on_a_reply_that_trickles_in(trickle: _Trickle) -> None:
    """The key check (the SDK's client, as prompt fetches): before, it waited for ever."""
    connection = LangfuseConnection(_settings(trickle))
    try:
        took, outcome = _ended_in_time(connection.project_id)
    finally:
        connection.shutdown(1)
    assert isinstance(outcome, LangfuseUnavailableError) and outcome.timed_out, outcome
    assert "did not answer in time (checking the keys)" in str(outcome)
    assert took < 10


def test_the_evaluator_s_own_client_gives_up_on_a_reply_that_trickles_in(trickle: _Trickle) -> None:
    """Scores, re-sent spans, datasets, score history: before, it waited for ever, deadline or not."""
    connection = LangfuseConnection(_settings(trickle))
    api = LangfuseApi(connection.client, connection.settings)
    try:
        took, outcome = _ended_in_time(
            lambda: api.http("POST", "/api/public/scores", "posting scores", json=[])
        )
    finally:
        api.close()
        connection.shutdown(1)
    assert isinstance(outcome, LangfuseUnavailableError) and outcome.timed_out, outcome
    assert took < 10


def test_the_span_exporter_s_transport_gives_up_on_a_reply_that_trickles_in(trickle: _Trickle) -> None:
    """The exporter's timeout is per request: before, a trickling reply held its thread for ever."""
    transport = HttpxTransport()
    url = f"{trickle.base_url}/api/public/otel/v1/traces"
    try:
        took, outcome = _ended_in_time(lambda: transport.request("POST", url, timeout=1, data=b"x"))
    finally:
        transport.close()
    error = getattr(outcome, "error", None)
    assert transport.is_connection_error(error), outcome  # a timeout: the exporter may retry it
    assert took < 10


def test_a_run_against_a_langfuse_that_trickles_ends_within_its_deadlines_and_keeps_its_results(
    demo_project: Path, trickle: _Trickle
) -> None:
    """Every answer trickles: the key check gives up at LANGFUSE_TIMEOUT (the run goes on), the steps
    after the run end within delivery_deadline_seconds, and the results are stored and in --output.
    Before, the run never got past the key check."""
    langfuse_deadlines(demo_project, flush=1, delivery=3)
    key = uuid.uuid4().hex
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LANGFUSE_PUBLIC_KEY": f"pk-lf-{key}",
        "LANGFUSE_SECRET_KEY": f"sk-lf-{key}",
        "LANGFUSE_BASE_URL": trickle.base_url,
        "LANGFUSE_TIMEOUT": "1",
    }
    command = [sys.executable, "-m", "evaluator", "run", str(ROOT / "scenarios/research"), "--tag", "smoke"]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*command, "--output", "out.json"],
            check=False,
            cwd=demo_project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("`evaluator run` against a trickling Langfuse was still running after 120 s")
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr  # the smoke suite has a failing scenario
    assert "did not answer in time (checking the keys)" in done.stderr
    results = json.loads((demo_project / "out.json").read_text())["results"]
    assert len(results) == 3
    assert "Waiting in the local outbox: 3 traces" in done.stdout
    assert took < 60, f"the run took {took:.0f} s"  # 1 s key check, the run, 3 s after it, start-up
