"""`run --verify-langfuse` on a suite with dialogues: verification does not cover a dialogue's turns yet,
which it says, but that is no failure of the run: a suite whose every scenario passed and whose every
covered trace reads back the same exits 0."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import ROOT, Cli

DIALOGUE = "concierge-hotel-book-complete"  # the demo's concierge completes this booking
SINGLE = "research-pdf-only"  # passes with the research agent's prompt version 2


def test_a_passing_suite_with_a_dialogue_verifies_and_exits_0(with_langfuse: Path, cli: Cli) -> None:
    code, text = cli(
        "run",
        str(ROOT / f"scenarios/concierge/{DIALOGUE}.yaml"),
        str(ROOT / f"scenarios/research/{SINGLE}.yaml"),
        "--prompt",
        "agents/research=2",
        "--no-judge",
        "--verify-langfuse",
    )
    assert "2 scenarios: 2 passed, 0 failed, 0 error" in text, text
    assert "Verified in Langfuse: 1 traces give the same verdict" in text
    assert f"note: {DIALOGUE}: not checked: a dialogue (its turns are not verified yet)" in text
    assert "missing:" not in text
    assert code == 0, text
