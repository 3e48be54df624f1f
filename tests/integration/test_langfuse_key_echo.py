"""A Langfuse (or a proxy in front of it) that quotes the key it refuses: the SDK's and the span
exporter's log lines on the refusal, through a connected Tracing, hold no key."""

from __future__ import annotations

import base64
import http.server
import json
import logging
import threading
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from evaluator.langfuse import Tracing
from evaluator.langfuse.settings import LangfuseSettings

PUBLIC, SECRET = "pk-lf-echoed-0123456789", "sk-lf-echoed-9876543210"
BASIC = base64.b64encode(f"{PUBLIC}:{SECRET}".encode()).decode()


class _QuotingRefusals(http.server.BaseHTTPRequestHandler):
    """401 to everything, the request's Authorization header in the reason phrase and the body."""

    def _refuse(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        key = self.headers.get("authorization", "")
        body = json.dumps({"message": f"Invalid key: {key}"}).encode()
        self.send_response(401, f"Invalid key {key}")
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._refuse()

    def do_POST(self) -> None:
        self._refuse()

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def quoting_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuotingRefusals)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_the_refusal_s_log_lines_hold_no_key(quoting_server: str, caplog: pytest.LogCaptureFixture) -> None:
    settings = LangfuseSettings(public_key=PUBLIC, secret_key=SecretStr(SECRET), base_url=quoting_server)
    tracing = Tracing.connected(settings)
    try:
        with pytest.raises(Exception, match="401"):
            tracing.client.get_prompt("p", max_retries=0)  # a target's own fetch: its lines are kept
        tracing.client.start_observation(name="step", as_type="span").end()
        tracing.flush(10)
    finally:
        tracing.shutdown(5)
    lines = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert any(line.startswith("Error while fetching prompt") for line in lines), lines
    assert any(line.startswith("Failed to export spans batch code: 401") for line in lines), lines
    assert all("Basic ***" in line for line in lines if "Invalid key" in line), lines
    assert not any(SECRET in line or BASIC in line for line in lines), lines
