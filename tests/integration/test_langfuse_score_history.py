"""`report --source langfuse` and `compare --source langfuse` reading the project's scores
(langfuse/score_history.py) as Langfuse serves them: every page, a passing 5xx ridden out, one that keeps
failing or a Langfuse that cannot be reached said with the fix (exit 2)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Cli
from tests.standin.langfuse_server import LangfuseStandIn

SCORES = "/api/public/v3/scores"


def _post_runs(standin: LangfuseStandIn, scenarios: int) -> None:
    """Two runs of `scenarios` scenarios, as the evaluator scores them: a `workflow_pass` per scenario
    (the candidate fails every third), each on its own trace; more than one page of the scores API."""
    body: list[dict[str, Any]] = []
    for run, minute in (("run-base", 0), ("run-cand", 1)):
        for index in range(scenarios):
            body.append(
                {
                    "id": f"{run}-{index}",
                    "name": "workflow_pass",
                    "value": 0 if run == "run-cand" and index % 3 == 0 else 1,
                    "dataType": "BOOLEAN",
                    "traceId": f"{run}-trace-{index}",
                    "timestamp": f"2026-11-22T10:0{minute}:00.000Z",
                    "metadata": {"run_id": run, "scenario_id": f"s{index:03d}"},
                }
            )
    auth = (os.environ["LANGFUSE_PUBLIC_KEY"], os.environ["LANGFUSE_SECRET_KEY"])
    response = httpx.post(f"{standin.base_url}/api/public/scores", json=body, auth=auth)
    assert response.status_code == 202, response.text


def _runs(cli: Cli) -> dict[str, Any]:
    code, text = cli("report", "--by", "run", "--json", "--source", "langfuse")
    assert code == 0, text
    document: dict[str, Any] = json.loads(text)
    return document


def test_every_page_is_read_and_a_passing_5xx_is_ridden_out(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _post_runs(langfuse_standin, scenarios=130)  # 260 scores: three pages of 100
    langfuse_standin.fail_next(1, 502, path=SCORES)  # a gateway's passing error

    rows = _runs(cli)["rows"]

    assert [(r["key"], r["scenarios"], r["pass_rate"]) for r in rows] == [
        ("run-base", 130, 1.0),
        ("run-cand", 130, round(86 / 130, 4)),  # 44 of 130 fail (every third, from the first)
    ]
    assert len(langfuse_standin.requests_to(SCORES)) == 4  # the 502, then three pages


@pytest.mark.parametrize("command", [["report", "--source", "langfuse"], ["compare", "previous", "latest"]])
def test_a_langfuse_that_keeps_failing_is_said_with_the_fix(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, command: list[str]
) -> None:
    _post_runs(langfuse_standin, scenarios=3)
    langfuse_standin.fail_next(3, 500, path=SCORES)
    args = [*command, "--source", "langfuse"] if command[0] == "compare" else command

    code, text = cli(*args)

    assert code == 2
    assert "answered HTTP 500 while reading scores" in text
    assert "Fix: check that Langfuse is up at LANGFUSE_BASE_URL" in " ".join(text.split())
    assert "--source local" in text
    assert "Traceback" not in text


def test_an_unreachable_langfuse_is_said_with_the_fix(
    with_langfuse: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGFUSE_BASE_URL", "http://127.0.0.1:9")  # nothing listens there

    code, text = cli("compare", "previous", "latest", "--source", "langfuse")

    assert code == 2
    said = " ".join(text.split())
    assert "is unreachable" in said
    assert "Fix: check that Langfuse is up at LANGFUSE_BASE_URL and reachable from here" in said
    assert "read the local store with --source local" in said
