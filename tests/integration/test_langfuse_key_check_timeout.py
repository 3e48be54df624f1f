"""A Langfuse that does not answer the key check in time: the run goes on, and what it says of its
traces and scores is what then happens to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.run import SuiteOptions, run_suite
from tests.integration.conftest import ROOT
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")


def test_a_key_check_that_timed_out_does_not_say_the_scores_wait_for_sync_when_the_run_sends_them(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Langfuse slow to answer the key check only: the run goes on unconnected, and sends its traces and
    scores after the run all the same. Before, the warning said the scores wait in the outbox for
    `evaluator sync`, and the summary then counted every one of them in Langfuse."""
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "1")
    langfuse_standin.slow = 3.0
    langfuse_standin.slow_paths = ("/api/public/projects",)
    warnings: list[str] = []
    suite = run_suite(
        [SUITE],
        SuiteOptions(tags=["smoke"]),
        on_notice=lambda kind, text: warnings.append(text) if kind == "warning" else None,
    )
    [check] = [w for w in warnings if "(checking the keys)" in w]
    assert suite.status is not None and suite.status.complete  # every score and trace in Langfuse
    assert "sent after the run if Langfuse answers then" in check, check
