"""Before a connected run starts, the experiment lookup (the dataset, its items and the prompt versions
the experiment's metadata names) ends within `read_deadline_seconds`, and a project without the dataset
asks Langfuse for no prompt at all then."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evaluator.run import TargetRequest, run_suite
from tests.builders import scenario
from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")
PROMPTS = "/api/public/v2/prompts"


def _prompt_fetches(standin: LangfuseStandIn) -> int:
    return sum(r.method == "GET" and r.path.startswith(f"{PROMPTS}/") for r in standin.requests)


def _quick(request: TargetRequest) -> str:  # asks for no prompt: every prompt request is the run's own
    return "ok"


def _run(started: list[float]) -> None:
    run_suite(
        scenarios=[scenario(id="quick", target="quick")],
        targets={"quick": _quick},
        on_start=lambda _: started.append(time.monotonic()),
    )


def test_a_run_on_a_project_without_the_dataset_fetches_no_prompt_before_it_starts(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """Before, every agent prompt of the project was fetched for the metadata of an experiment that
    would not exist: a request each, LANGFUSE_TIMEOUT each when Langfuse did not answer."""
    _run([])
    assert _prompt_fetches(langfuse_standin) == 0


def test_the_experiment_lookup_before_the_run_ends_within_the_read_deadline(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prompts that Langfuse serves after 10 s, a request waiting 4 s (LANGFUSE_TIMEOUT): before, the
    seven agent prompts were asked one after the other before the run, 28 s, past a 1 s deadline; now
    the one asked when the deadline came is the last, the others get their local file's version."""
    code, out = cli("datasets", "push", SUITE, "--tag", "smoke")
    assert code == 0, out
    langfuse_deadlines(with_langfuse, read_deadline_seconds=1)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "4")
    langfuse_standin.slow = 10.0
    langfuse_standin.slow_paths = (PROMPTS,)
    began = time.monotonic()
    started: list[float] = []
    _run(started)
    before_the_run = started[0] - began
    assert before_the_run < 16, f"the run started {before_the_run:.0f} s after it was asked for"
    assert _prompt_fetches(langfuse_standin) <= 2


def test_the_score_configs_are_checked_beside_the_run_however_long_the_experiment_lookup_took(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check has the delivery deadline from the run's start: before, that deadline began before the
    experiment lookup, which used it up (4 s here, against 2), and the run warned "score configs were
    not checked (not listing score configs: the 2 s deadline passed)" of a Langfuse that answers them."""
    code, out = cli("datasets", "push", SUITE, "--tag", "smoke")
    assert code == 0, out
    langfuse_deadlines(with_langfuse, delivery=2, read_deadline_seconds=1)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "4")
    langfuse_standin.slow = 10.0
    langfuse_standin.slow_paths = (PROMPTS,)
    notices: list[str] = []
    run_suite(
        scenarios=[scenario(id="quick", target="quick")],
        targets={"quick": _quick},
        on_notice=lambda kind, text: notices.append(text),
    )
    assert not [n for n in notices if "score configs were not checked" in n], notices
    assert langfuse_standin.score_configs
