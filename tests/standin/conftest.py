"""Fixtures: a started Langfuse stand-in, and real SDK clients pointed at it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langfuse import Langfuse
from opentelemetry.sdk.trace import TracerProvider

from .langfuse_server import LangfuseStandIn

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
