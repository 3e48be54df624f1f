"""Dataset items as a user meets them in Langfuse (the stand-in): each scenario is one item, and each
scenario's trace is linked to its own item, however long its id."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import yaml

from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.langfuse_server import ApiError, LangfuseStandIn, Request, Response

SUITE = str(ROOT / "scenarios/research")


def test_scenario_ids_alike_up_to_the_item_id_limit_are_two_items_each_run_linked_to_its_own(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    config = with_langfuse / "evaluator.toml"
    config.write_text(config.read_text() + '\n[datasets]\nname = "research"\n')
    scenario = yaml.safe_load((ROOT / "scenarios/research/research-web-news.yaml").read_text())
    long = "research-" + "x" * 250  # item ids are at most 255 characters
    (with_langfuse / "suite").mkdir()
    for end in ("a", "b"):
        (with_langfuse / "suite" / f"{end}.yaml").write_text(yaml.safe_dump({**scenario, "id": long + end}))

    code, out = cli("datasets", "push", "suite")
    assert code == 0 and '"research": 2 created, 0 updated, 0 unchanged' in out, out
    items = langfuse_standin.dataset_items
    assert len(items) == 2 and all(len(i) <= 255 for i in items)
    assert {i["metadata"]["scenario_id"] for i in items.values()} == {long + "a", long + "b"}
    assert cli("datasets", "push", "suite")[1].count("0 created, 0 updated, 2 unchanged") == 1

    code, out = cli("run", "suite", "--run-name", "long-ids")
    assert code == 0 and "2 scenario traces linked to their items" in out, out
    with httpx.Client(base_url=langfuse_standin.base_url, auth=langfuse_standin.new_keys()) as api:
        answer = api.get(
            "/api/public/experiment-items",
            params={"fromStartTime": "2020-01-01T00:00:00Z", "fields": "core,itemMetadata"},
        )
    linked = {
        i["experimentItemId"]: i["experimentItemMetadata"]["scenario_id"] for i in answer.json()["data"]
    }
    assert {i: items[i]["metadata"]["scenario_id"] for i in items} == linked


def test_a_push_langfuse_refuses_part_way_says_what_it_pushed_and_the_next_push_finishes_it(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    posted = 0

    def fourth_refused(standin: LangfuseStandIn, request: Request) -> Response:
        nonlocal posted
        posted += 1
        if posted == 4:
            raise ApiError(400, "Item refused for the test")
        return LangfuseStandIn._create_dataset_item(standin, request)

    routes = [
        replace(r, handler=fourth_refused) if r.handler is LangfuseStandIn._create_dataset_item else r
        for r in LangfuseStandIn.routes
    ]
    monkeypatch.setattr(LangfuseStandIn, "routes", routes)
    code, out = cli("datasets", "push", SUITE, "--name", "research")
    said = " ".join(out.split())
    assert code == 2 and 'Created dataset "research"' in said, out
    assert (
        "created research-bird-allow-web created research-clarify-help created research-clarify-vague" in said
    )
    assert '"research": 3 created, 0 updated, 0 unchanged, 8 not pushed' in said
    assert 'HTTP 400 while pushing item "research--research-clarify-wordy-request"' in said
    assert "Item refused for the test" in said and "run `evaluator datasets push` again" in said
    assert len(langfuse_standin.dataset_items) == 3

    code, out = cli("datasets", "push", SUITE, "--name", "research")
    assert code == 0 and '"research": 8 created, 0 updated, 3 unchanged' in out, out
    assert len(langfuse_standin.dataset_items) == 11


@pytest.mark.parametrize("name", ["", "d" * 201])
def test_a_dataset_name_runs_could_not_link_to_is_bad_input(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, name: str
) -> None:
    config = with_langfuse / "evaluator.toml"
    config.write_text(config.read_text() + '\n[datasets]\nname = "research"\n')
    code, out = cli("datasets", "push", SUITE, "--tag", "smoke", "--name", name)
    assert code == 2 and "a dataset name, as [datasets] name in evaluator.toml, has 1 to 200" in out, out
    assert langfuse_standin.datasets == {} and langfuse_standin.dataset_items == {}
    code, out = cli("datasets", "push", SUITE, "--tag", "smoke", "--name", "d" * 200)
    assert code == 0 and len(langfuse_standin.datasets) == 1, out


def test_a_push_longer_than_the_post_run_delivery_deadline_is_not_cut_off(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """The deadline of the sending after a run does not bound a push: a suite pushed to a Langfuse that
    takes its time per request (as a far-away one does, for a request per item) is pushed whole."""
    langfuse_deadlines(with_langfuse, flush=1, delivery=1)
    langfuse_standin.slow = 0.3  # seven requests: longer than the 1 s deadline
    code, out = cli("datasets", "push", SUITE, "--tag", "smoke", "--name", "research")
    assert code == 0 and '"research": 3 created, 0 updated, 0 unchanged' in out, out
    assert len(langfuse_standin.dataset_items) == 3
