"""Runs as Langfuse experiments, against the stand-in (every response checked against openapi.yml):
`datasets push` is idempotent, a connected run becomes a dataset run of it with its prompt versions and
run-level scores, and `report --source langfuse` rebuilds the local report's figures from the scores."""

from __future__ import annotations

import json
import time
from pathlib import Path

from evaluator.results import FIGURES
from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")


def test_pushing_twice_creates_nothing_new(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    code, out = cli("datasets", "push", SUITE, "--name", "research")
    assert code == 0 and 'Dataset "research": 11 created, 0 updated, 0 unchanged' in out
    items = langfuse_standin.dataset_items
    assert len(items) == 11 and "research--research-pdf-only" in items
    item = items["research--research-pdf-only"]
    assert item["input"] == "What is the state of the art in text-to-SQL on the Spider benchmark?"
    assert item["expectedOutput"]["tools"]["exclude"] == ["web_search"]
    assert item["metadata"]["scenario_id"] == "research-pdf-only"
    posts = len(langfuse_standin.requests_to("/api/public/dataset-items", "POST"))
    code, out = cli("datasets", "push", SUITE, "--name", "research")
    assert code == 0 and "0 created, 0 updated, 11 unchanged" in out
    assert len(langfuse_standin.requests_to("/api/public/dataset-items", "POST")) == posts == 11
    assert len(langfuse_standin.datasets) == 1


def test_a_connected_run_is_a_dataset_run(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    (with_langfuse / "evaluator.toml").write_text(
        (with_langfuse / "evaluator.toml").read_text() + '\n[datasets]\nname = "research"\n'
    )
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0  # only part of the suite
    pushed = set(langfuse_standin.dataset_items)
    code, out = cli("run", SUITE, "--run-name", "v2", "--prompt", "agents/research=2")
    assert code == 1
    [run] = langfuse_standin.dataset_runs
    assert run["name"] == "v2" and run["metadata"]["agent_prompts"]["agents/research"] == 2
    links = langfuse_standin.dataset_run_items
    assert {link["datasetItemId"] for link in links} == pushed and len(links) == len(pushed)
    assert f'Dataset run "v2" of dataset "research": {len(pushed)} scenarios linked' in out
    assert "not in the dataset (run `evaluator datasets push`)" in out
    run_scores = {s["name"]: s for s in langfuse_standin.scores.values() if s.get("datasetRunId")}
    assert run_scores["run_pass_rate"]["datasetRunId"] == run["id"]
    assert run_scores["run_pass_rate"]["value"] == 0.9091  # 10 of 11
    assert "run_trajectory_full_workflow" in run_scores and "run_quality_mean" not in run_scores  # no judge
    code, _ = cli("run", SUITE, "--run-name", "v2")  # same name: the same dataset run, items linked again
    assert len(langfuse_standin.dataset_runs) == 1


def test_report_from_langfuse_rebuilds_the_local_figures(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    for version in (1, 2):
        assert cli("run", SUITE, "--prompt", f"agents/research={version}")[0] == 1
    local = json.loads(cli("report", "--json")[1])["rows"]
    langfuse_standin.rate_limit_next(1, retry_after=1, path="/api/public/v3/scores")
    started = time.monotonic()
    code, out = cli("report", "--json", "--source", "langfuse")
    assert code == 0 and time.monotonic() - started >= 1.0  # waited as Retry-After asked
    remote = json.loads(out)["rows"]
    pages = langfuse_standin.requests_to("/api/public/v3/scores", "GET")
    assert [r.status for r in pages[:2]] == [429, 200] and len(pages) >= 3  # > 100 scores: several pages
    same = [f for f in FIGURES if f not in ("latency_ms", "cost")]
    assert [{k: r[k] for k in ("key", "runs", "results", "passed", *same)} for r in remote] == [
        {k: r[k] for k in ("key", "runs", "results", "passed", *same)} for r in local
    ]
    code, out = cli("compare", "previous", "latest", "--source", "langfuse", "--json")
    assert code == 0 and json.loads(out)["paired_scenarios"] == 11
