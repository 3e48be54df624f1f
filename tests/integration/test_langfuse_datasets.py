"""Runs as Langfuse experiments, against the stand-in (every response checked against openapi.yml):
`datasets push` is idempotent; a connected run becomes an experiment on the dataset (Langfuse v4: from
the span attributes of its traces) with its prompt versions and run-level scores, and a failed lookup
only warns; `report --source langfuse` rebuilds the local report's figures from the scores."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from langfuse import Langfuse

from evaluator.langfuse import experiments
from evaluator.results import default_metrics
from evaluator.storage import Store
from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn
from tests.standin.otlp import ReceivedSpan
from tests.standin.views import PROJECT_ID, is_root

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


def _use_dataset(project: Path, name: str = "research") -> None:
    config = project / "evaluator.toml"
    config.write_text(config.read_text() + f'\n[datasets]\nname = "{name}"\n')


def _read(standin: LangfuseStandIn, path: str, **params: str) -> list[dict[str, Any]]:
    """Every page of a v4 experiments listing, through the stand-in's HTTP API (contract-checked)."""
    rows: list[dict[str, Any]] = []
    query = {"fromStartTime": "2020-01-01T00:00:00Z", "limit": "5", **params}
    with httpx.Client(base_url=standin.base_url, auth=standin.new_keys(), timeout=5) as api:
        while True:
            response = api.get(path, params=query)
            assert response.status_code == 200, response.text
            rows += response.json()["data"]
            cursor = response.json()["meta"].get("cursor")
            if not cursor:
                return rows
            query["cursor"] = cursor


def _roots(standin: LangfuseStandIn) -> dict[str, ReceivedSpan]:
    """The root span of every trace received, by trace id."""
    return {span.trace_id: span for span in standin.spans if is_root(span)}


def test_a_connected_run_is_an_experiment_on_the_dataset(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0  # only part of the suite
    pushed = set(langfuse_standin.dataset_items)
    dataset_id = langfuse_standin.datasets["research"]["id"]
    code, out = cli("run", SUITE, "--run-name", "v2", "--prompt", "agents/research=2")
    assert code == 1

    [experiment] = _read(langfuse_standin, "/api/public/experiments", fields="core,metadata,scores")
    sdk_id = Langfuse._create_experiment_id(None, project_id=PROJECT_ID, dataset_id=dataset_id, run_name="v2")  # type: ignore[arg-type]
    assert experiment["id"] == sdk_id and experiment["name"] == "v2" and experiment["datasetId"] == dataset_id
    assert experiment["metadata"]["agent_prompts"]["agents/research"] == 2
    assert experiment["metadata"]["targets"] == ["research"] and experiment["itemCount"] == len(pushed)
    items = _read(
        langfuse_standin,
        "/api/public/experiment-items",
        experimentId=sdk_id,
        fields="core,dataset,io,itemMetadata",
    )
    assert sorted(i["experimentItemId"] for i in items) == sorted(pushed)
    roots = _roots(langfuse_standin)
    for item in items:
        root = roots[item["traceId"]]
        assert item["id"] == root.span_id and root.name == item["experimentItemMetadata"]["scenario_id"]
        assert item["environment"] == "sdk-experiment" and item["experimentDatasetId"] == dataset_id
        assert (
            item["expectedOutput"]
            == langfuse_standin.dataset_items[item["experimentItemId"]]["expectedOutput"]
        )
    linked = {item["traceId"] for item in items}
    assert len(roots) == 11 and len(linked) == len(pushed) < 11
    for span in langfuse_standin.spans:  # every span of a linked trace carries the link; the others none
        carried = {k: v for k, v in span.attributes.items() if k.startswith("langfuse.experiment.")}
        if span.trace_id in linked:
            assert carried["langfuse.experiment.id"] == sdk_id
            assert carried["langfuse.experiment.item.root_observation_id"] == roots[span.trace_id].span_id
            assert span.attributes["langfuse.environment"] == "sdk-experiment"
        else:
            assert carried == {} and span.attributes.get("langfuse.environment") != "sdk-experiment"

    scores = {s["name"]: s for s in experiment["scores"]}
    assert scores["run_pass_rate"]["value"] == 0.9091  # 10 of 11
    assert "run_trajectory_full_workflow" in scores and "run_quality_mean" not in scores  # no judge
    posted = [s for s in langfuse_standin.scores.values() if s.get("datasetRunId")]
    assert {s["datasetRunId"] for s in posted} == {sdk_id} and len(posted) == len(scores)
    assert posted[0]["metadata"]["agent_prompts"]["agents/research"] == 2
    assert not langfuse_standin.requests_to("/api/public/dataset-run-items")
    url = f"{langfuse_standin.base_url}/project/{PROJECT_ID}/experiments/results?baseline={sdk_id}"
    assert f'Experiment "v2" on dataset "research": {len(pushed)} scenario traces linked' in out
    assert f"{11 - len(pushed)} not in the dataset (run `evaluator datasets push`)" in out and url in out

    assert cli("run", SUITE, "--run-name", "v2")[0] == 1  # the same name: the same experiment
    [again] = _read(langfuse_standin, "/api/public/experiments")
    assert again["id"] == sdk_id and again["itemCount"] == 2 * len(pushed)


def test_run_level_scores_langfuse_did_not_take_wait_in_the_outbox_and_sync_posts_them(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    langfuse_standin.fail_next(10_000, 503, path="/api/public/scores")  # an outage of score posting
    code, out = cli("run", SUITE, "--tag", "smoke", "--run-name", "outage", "--require-delivery")
    assert code == 3, out  # Langfuse does not have everything
    said = " ".join(out.split())
    assert "the run-level scores of experiment 'outage' were not posted" in said
    assert "they wait in the local outbox for `evaluator sync`" in said
    assert "the run-level scores of 1 run. Send them with: evaluator sync" in said
    assert not [s for s in langfuse_standin.scores.values() if s.get("datasetRunId")]

    langfuse_standin.clear_faults()
    code, out = cli("sync")
    assert code == 0, out
    assert "Run-level scores posted to the experiments of 1 run" in out
    posted = [s for s in langfuse_standin.scores.values() if s.get("datasetRunId")]
    assert posted and {s["name"] for s in posted} >= {"run_pass_rate", "run_workflow_pass_rate"}
    assert all(s.get("timestamp") for s in posted)  # frozen, so posting again updates them
    code, out = cli("sync")
    assert code == 0 and "Nothing waits for this Langfuse project." in out, out


def test_an_unpinned_run_records_the_versions_served_and_items_keep_the_files_expected_block(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("prompts", "push")[0] == 0
    with httpx.Client(base_url=langfuse_standin.base_url, auth=langfuse_standin.new_keys(), timeout=5) as api:
        moved = api.patch(  # Langfuse now serves v2 as production; the local file still says v1
            "/api/public/v2/prompts/agents%2Fresearch/versions/2", json={"newLabels": ["production"]}
        )
        assert moved.status_code == 200, moved.text
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    written = yaml.safe_load((ROOT / "scenarios/research/research-pdf-only.yaml").read_text())["expected"]
    item = langfuse_standin.dataset_items["research--research-pdf-only"]
    assert item["expectedOutput"] == written  # no `allow: []` or `strict: true` the file never wrote
    assert cli("run", SUITE, "--run-name", "served")[0] in (0, 1)
    [experiment] = _read(langfuse_standin, "/api/public/experiments", fields="core,metadata")
    assert experiment["metadata"]["agent_prompts"] == {
        "agents/clarification": 1,
        "agents/concierge-action": 1,  # every agent prompt in the library, not only the target's
        "agents/concierge-memory": 1,
        "agents/concierge-policy": 1,
        "agents/concierge-triage": 1,
        "agents/orchestrator": 1,
        "agents/research": 2,
    }
    assert experiment["metadata"]["judge_prompts"] == {}


def test_a_failed_dataset_lookup_warns_and_the_run_goes_on_unlinked(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    langfuse_standin.fail_next(1, 503, path="/api/public/v2/datasets/research")
    code, out = cli("run", SUITE, "--run-name", "v3", "--output", "results.json")
    assert code == 1
    assert "the run is not linked to dataset 'research' as an experiment" in out
    assert 'HTTP 503 while reading dataset "research"' in out and "The run goes on unlinked." in out
    assert len(json.loads((with_langfuse / "results.json").read_text())["results"]) == 11
    [stored] = Store(with_langfuse / "evaluator.db").runs()
    assert stored["name"] == "v3" and len(stored["results"]) == 11
    assert not any(k.startswith("langfuse.experiment.") for s in langfuse_standin.spans for k in s.attributes)
    assert not _read(langfuse_standin, "/api/public/experiments")
    assert "Experiment " not in out


def test_without_the_dataset_a_run_is_quietly_no_experiment(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _use_dataset(with_langfuse, "never-pushed")
    code, out = cli("run", SUITE, "--tag", "smoke")
    assert code == 1 and "xperiment" not in out  # one smoke scenario fails, as the demo intends
    assert langfuse_standin.requests_to("/api/public/v2/datasets/never-pushed", "GET")  # looked up
    assert not any(k.startswith("langfuse.experiment.") for s in langfuse_standin.spans for k in s.attributes)


def test_an_sdk_without_experiment_attributes_warns_and_the_run_goes_on(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_dataset(with_langfuse)
    assert cli("datasets", "push", SUITE, "--tag", "smoke")[0] == 0
    monkeypatch.setattr(experiments, "_propagate_attributes", None)  # as if a later SDK moved it
    code, out = cli("run", SUITE, "--tag", "smoke")
    assert code == 1 and "the installed Langfuse SDK no longer offers the experiment span attributes" in out
    assert not any(k.startswith("langfuse.experiment.") for s in langfuse_standin.spans for k in s.attributes)
    assert not _read(langfuse_standin, "/api/public/experiments")


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
    same = [f for f in default_metrics().figure_names if f not in ("latency_ms", "cost")]
    assert [{k: r[k] for k in ("key", "runs", "results", "passed", *same)} for r in remote] == [
        {k: r[k] for k in ("key", "runs", "results", "passed", *same)} for r in local
    ]
    code, out = cli("compare", "previous", "latest", "--source", "langfuse", "--json")
    assert code == 0 and json.loads(out)["paired_scenarios"] == 11
