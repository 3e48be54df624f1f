"""A long scenario id in Langfuse: the SDK drops a trace name, or a trace metadata value in its JSON
form, of more than 200 characters whole. The evaluator cuts the metadata to fit, so the trace keeps its
`scenario_id` metadata, and gives no trace name longer than that, so Langfuse names the trace after its
root span, which holds the whole id (a cut name could be another scenario's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn
from tests.standin.views import TraceSummary, is_root


@pytest.mark.parametrize("length", [199, 230])
def test_a_long_scenario_ids_trace_keeps_its_name_and_scenario_id_metadata(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, length: int
) -> None:
    scenario = yaml.safe_load((ROOT / "scenarios/research/research-web-news.yaml").read_text())
    scenario_id = "research-" + "z" * (length - len("research-"))
    (with_langfuse / "suite").mkdir()
    (with_langfuse / "suite" / "long.yaml").write_text(yaml.safe_dump({**scenario, "id": scenario_id}))
    code, out = cli("run", "suite")
    assert code == 0, out
    [root] = [span for span in langfuse_standin.spans if is_root(span)]
    assert root.name == scenario_id
    kept = json.loads(str(root.attributes["langfuse.trace.metadata.scenario_id"]))
    assert scenario_id.startswith(kept) and len(json.dumps(kept)) == 200
    assert TraceSummary.of(root.trace_id, langfuse_standin.spans_for(root.trace_id)).name == scenario_id
    assert ("langfuse.trace.name" in root.attributes) == (length <= 200)
