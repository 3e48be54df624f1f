"""Span export on httpx, in batches: what reaches the Langfuse stand-in, and what is never loaded."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from evaluator.langfuse import Tracing
from evaluator.langfuse.otlp_transport import HttpxTransport
from evaluator.langfuse.settings import LangfuseSettings
from tests.standin.langfuse_server import LangfuseStandIn

ROOT = Path(__file__).resolve().parents[2]
OTEL_PATH = "/api/public/otel/v1/traces"


def _settings(standin: LangfuseStandIn) -> LangfuseSettings:
    public_key, secret_key = standin.new_keys()
    return LangfuseSettings(
        public_key=public_key, secret_key=SecretStr(secret_key), base_url=standin.base_url
    )


def _send_spans(tracing: Tracing, count: int) -> None:
    for i in range(count):
        tracing.client.start_observation(name=f"step {i}", as_type="span").end()
    assert tracing.flush(10)


def test_connected_spans_go_in_batches_of_128(langfuse_standin: LangfuseStandIn) -> None:
    tracing = Tracing.connected(_settings(langfuse_standin))
    try:
        _send_spans(tracing, 200)
    finally:
        tracing.shutdown(5)
    posts = langfuse_standin.requests_to(OTEL_PATH, "POST")
    assert len(langfuse_standin.spans) == 200
    assert len(posts) >= 2 and all(p.status == 200 for p in posts)  # the SDK's 512 would make one


def test_connected_spans_go_in_batches_of_64(langfuse_standin: LangfuseStandIn) -> None:
    tracing = Tracing.connected(_settings(langfuse_standin))
    try:
        _send_spans(tracing, 200)
    finally:
        tracing.shutdown(5)
    posts = langfuse_standin.requests_to(OTEL_PATH, "POST")
    assert len(langfuse_standin.spans) == 200
    assert len(posts) >= 4 and all(p.status == 200 for p in posts)  # 128-span batches would make two


def test_langfuse_flush_at_still_sets_the_batch(
    langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGFUSE_FLUSH_AT", "1000")
    tracing = Tracing.connected(_settings(langfuse_standin))
    try:
        _send_spans(tracing, 200)
    finally:
        tracing.shutdown(5)
    assert len(langfuse_standin.spans) == 200
    assert len(langfuse_standin.requests_to(OTEL_PATH, "POST")) == 1


def test_a_refused_connection_is_a_connection_error(langfuse_standin: LangfuseStandIn) -> None:
    base_url = langfuse_standin.base_url
    langfuse_standin.stop()
    transport = HttpxTransport()
    try:
        result = transport.request("POST", base_url + OTEL_PATH, data=b"", timeout=2)
    finally:
        transport.close()
    assert result.status_code is None and result.error is not None
    assert transport.is_connection_error(result.error)
    assert not transport.is_connection_error(ValueError("not the network"))


def test_an_answer_keeps_its_status_and_headers(langfuse_standin: LangfuseStandIn) -> None:
    langfuse_standin.rate_limit_next(1, retry_after=7, path=OTEL_PATH)
    transport = HttpxTransport()
    try:
        result = transport.request("POST", langfuse_standin.base_url + OTEL_PATH, data=b"", timeout=5)
    finally:
        transport.close()
    assert result.status_code == 429 and result.error is None
    assert result.headers()["retry-after"] == "7"


def test_exporting_spans_loads_no_second_http_stack(langfuse_standin: LangfuseStandIn) -> None:
    settings = _settings(langfuse_standin)
    code = (
        "import sys\n"
        "from pydantic import SecretStr\n"
        "from evaluator.langfuse import Tracing\n"
        "from evaluator.langfuse.settings import LangfuseSettings\n"
        f"settings = LangfuseSettings(public_key={settings.public_key!r}, "
        f"secret_key=SecretStr({settings.secret_key.get_secret_value()!r}), base_url={settings.base_url!r})\n"
        "tracing = Tracing.connected(settings)\n"
        "tracing.client.start_observation(name='one', as_type='span').end()\n"
        "assert tracing.shutdown(10)\n"
        "print(sorted(m for m in ('requests', 'urllib3') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert len(langfuse_standin.spans) == 1
