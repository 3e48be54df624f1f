"""`validate --session-id` reads within `read_deadline_seconds`: the session's listing within it, and
each of its traces within it of its own, when Langfuse takes the keys but its read API is slow."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evaluator.langfuse import LangfuseConnection
from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.langfuse_server import LangfuseStandIn

DIALOGUE = str(ROOT / "scenarios/concierge/concierge-hotel-book-complete.yaml")
OBSERVATIONS = "/api/public/v2/observations"


def test_validate_session_id_lists_the_session_within_the_read_deadline(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the listing's request ran on for LANGFUSE_TIMEOUT (30 s) past a 1 s read deadline."""
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "30")
    langfuse_standin.slow = 40.0
    langfuse_standin.slow_paths = (OBSERVATIONS,)
    langfuse_deadlines(with_langfuse, read_deadline_seconds=1)
    started = time.monotonic()
    code, text = cli("validate", "--scenario", DIALOGUE, "--session-id", "some-session")
    took = time.monotonic() - started
    assert code == 2, text
    assert "could not be listed in Langfuse within 1 s" in text and "did not answer in time" in text
    assert took < 10, f"validate --session-id took {took:.0f} s with a 1 s read deadline"


def test_each_trace_of_a_session_is_read_within_a_deadline_of_its_own(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read answered after 2 s, a 3 s read deadline: the second trace has its own 3 s, not the
    second left of the first's."""
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "30")
    langfuse_standin.slow = 2.0
    langfuse_standin.slow_paths = (OBSERVATIONS,)
    connection = LangfuseConnection.from_env()
    assert connection is not None
    try:
        reader = connection.traces.each_within(3)
        started = time.monotonic()
        assert reader.observation_pages("a" * 32) and reader.observation_pages("b" * 32)
        assert time.monotonic() - started < 20
    finally:
        connection.shutdown(1)
