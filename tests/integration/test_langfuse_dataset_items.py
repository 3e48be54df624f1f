"""Dataset items as a user meets them in Langfuse (the stand-in): each scenario is one item, and each
scenario's trace is linked to its own item, however long its id."""

from __future__ import annotations

from pathlib import Path

import httpx
import yaml

from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn


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
