"""Reading traces back from the stand-in: `validate --trace-id` and `run --verify-langfuse`."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.langfuse_server import LangfuseStandIn

SCENARIO = str(ROOT / "scenarios/research/research-pdf-only.yaml")


def test_validate_trace_id_waits_for_a_trace_that_appears_late(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    code, text = cli("run", SCENARIO, "--output", "results.json")
    assert code == 1, text
    [local] = json.loads(Path("results.json").read_text())["results"]
    langfuse_standin.visibility_delay = 2.0  # as if ingestion had not caught up yet
    hidden_until = time.monotonic() + 2.0
    code, text = cli("validate", "--scenario", SCENARIO, "--trace-id", local["trace_id"], "--json")
    assert code == 1, text
    remote = json.loads(text[text.index("{") :])
    assert remote["trace_id"] == local["trace_id"]
    assert remote["workflow"] == local["workflow"]
    assert remote["workflow"]["tools"]["unexpected"] == ["web_search"]
    reads = langfuse_standin.requests_to("/api/public/v2/observations", "GET")
    assert any(r.at < hidden_until for r in reads)  # it asked while the trace was still invisible...
    assert remote["observations"] == local["observations"]  # ...and kept polling until all of it was there


def test_validate_trace_id_of_an_unknown_trace(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    langfuse_deadlines(with_langfuse, read_deadline_seconds=1)
    code, text = cli("validate", "--scenario", SCENARIO, "--trace-id", "0" * 32)
    assert code == 2
    assert f"trace {'0' * 32} was not readable in Langfuse within 1 s" in text


def test_validate_trace_id_without_keys(demo_project: Path, cli: Cli) -> None:
    code, text = cli("validate", "--scenario", SCENARIO, "--trace-id", "abc")
    assert code == 2 and "no keys are set" in text


def test_verify_langfuse_confirms_every_trace(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    code, text = cli(
        "run",
        str(ROOT / "scenarios/research"),
        "--tag",
        "pdf",
        "--verify-langfuse",
        "--prompt",
        "agents/research=2",
    )
    assert "Verified in Langfuse: 7 traces give the same verdict" in text, text
    assert "different" not in text and "missing" not in text.replace("missing /", "")
    assert code == 0


def test_verify_langfuse_reports_a_trace_whose_spans_were_lost(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    langfuse_deadlines(with_langfuse, flush=2, delivery=3, verify_deadline_seconds=3)
    langfuse_standin.fail_next(50, status=500, path="/api/public/otel/v1/traces")  # the SDK drops on 500
    code, text = cli("run", SCENARIO, "--verify-langfuse", "--prompt", "agents/research=2")
    assert "missing: research-pdf-only: trace" in text, text
    assert code == 1  # the scenario passed, but Langfuse does not hold its trace
