"""A read-back ends at its deadline, not LANGFUSE_TIMEOUT later: `validate --trace-id` within
`read_deadline_seconds` and `run --verify-langfuse` within `verify_deadline_seconds`, when Langfuse
takes the keys but its read APIs do not answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evaluator.run import SuiteOptions, run_suite
from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")
READS = ("/api/public/v2/observations", "/api/public/traces/")  # the observations API and its fallback


@pytest.fixture
def reads_hang(langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read of a trace answers after 40 s; a request may wait 30 s (LANGFUSE_TIMEOUT)."""
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "30")
    langfuse_standin.slow = 40.0
    langfuse_standin.slow_paths = READS


@pytest.mark.usefixtures("reads_hang")
def test_validate_trace_id_ends_at_the_read_deadline(with_langfuse: Path, cli: Cli) -> None:
    """Before, the last poll's two requests ran on for LANGFUSE_TIMEOUT each: 60 s past a 1 s deadline."""
    langfuse_deadlines(with_langfuse, read_deadline_seconds=1)
    started = time.monotonic()
    code, text = cli("validate", "--scenario", f"{SUITE}/research-pdf-only.yaml", "--trace-id", "0" * 32)
    took = time.monotonic() - started
    assert code == 2, text
    assert "was not readable in Langfuse within 1 s" in text
    assert "did not answer in time" in text  # the reason named: Langfuse did not answer
    assert took < 10, f"validate --trace-id took {took:.0f} s with a 1 s read deadline"


@pytest.mark.usefixtures("reads_hang")
def test_verify_langfuse_ends_at_the_verify_deadline(with_langfuse: Path) -> None:
    """Before, one trace's read ran on for LANGFUSE_TIMEOUT twice past the 1 s verify deadline."""
    langfuse_deadlines(with_langfuse, verify_deadline_seconds=1)
    stored: list[float] = []
    suite = run_suite(
        [SUITE],
        SuiteOptions(tags=["smoke"], verify_langfuse=True),
        on_result=lambda _: stored.append(time.monotonic()),
    )
    after_run = time.monotonic() - stored[-1]
    assert suite.verify is not None and len(suite.verify.missing) == len(suite.results) == 3
    # the 15 s delivery deadline of the demo project, then the 1 s verification, with a wide margin
    assert after_run < 15 + 10, f"the steps after the run took {after_run:.0f} s"


@pytest.mark.usefixtures("reads_hang")
def test_verify_langfuse_says_traces_it_could_not_read_are_not_verified_not_missing(
    with_langfuse: Path, cli: Cli
) -> None:
    """Langfuse took every span, then did not answer the reads: each trace was reported "missing", as
    a trace Langfuse lost is, though nothing said it was not there (the exit stays 1: not verified)."""
    langfuse_deadlines(with_langfuse, verify_deadline_seconds=1)
    code, text = cli("run", SUITE, "--tag", "smoke", "--verify-langfuse")
    assert code == 1, text
    assert "missing:" not in text and text.count("not verified:") == 3, text
    assert "did not answer in time" in text or "deadline passed" in text
