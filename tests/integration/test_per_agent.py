"""The per-agent analysis in a run (DESIGN.md, Per-agent analysis): the demo declares its research
agent's tools and their schemas, and `research-pdf-only` narrows them to `pdf_retrieval`; research
prompt v1's extra `web_search` call comes out as an unauthorized tool of the research agent, in the
result's `per_agent`, as a `tool_issue` score on the tool's observation and an `agent_tool_use` score
on the agent's observation, in the run figures; the scenario's pass or fail is not its to decide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

SCENARIOS = [str(ROOT / f"scenarios/research/research-{name}.yaml") for name in ("pdf-only", "web-news")]


def _run(cli: Cli, *args: str) -> dict[str, Any]:
    code, text = cli("run", *SCENARIOS, "--no-judge", "--output", "out.json", *args)
    assert code in (0, 1), text
    document: dict[str, Any] = json.loads(Path("out.json").read_text())
    return document


def test_v1s_web_search_is_the_research_agents_unauthorized_tool(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    document = _run(cli, "--prompt", "agents/research=1")
    pdf_only, news = document["results"]
    entry = pdf_only["per_agent"]["agents"]["research"]
    [issue] = entry["issues"]
    assert (issue["kind"], issue["severity"], issue["tool"], issue["parameter"]) == (
        "unauthorized_tool", "high", "web_search", None,
    )  # fmt: skip
    assert "not among its tools (pdf_retrieval)" in issue["message"]
    assert (entry["tool_calls"], entry["tool_use_score"]) == (2, 0.5)
    assert entry["latency_ms"] is not None and entry["latency_ms"] > 0
    assert (entry["tokens"], entry["cost"]) == (None, None)  # the scripted model reports no usage
    assert {k: entry[k] for k in ("reasoning", "handoff", "response_quality", "score")} == dict.fromkeys(
        ("reasoning", "handoff", "response_quality", "score")
    )
    assert entry["recommendations"] == []
    assert pdf_only["per_agent"]["agents"]["orchestrator"]["issues"] == []
    assert (
        pdf_only["per_agent"]["unattributed_issues"] == [] and pdf_only["per_agent"]["unchecked_tools"] == []
    )
    assert news["per_agent"]["agents"]["research"]["issues"] == []  # research keeps web_search here
    figures = document["run"]["metrics"]
    assert (figures["agent_tool_use"], figures["agent_tool_issues"]) == (0.75, 0.5)

    posted = [s for s in langfuse_standin.scores.values() if s["metadata"]["run_id"] == document["run"]["id"]]
    [tool_issue] = [s for s in posted if s["name"] == "tool_issue"]
    assert tool_issue["observationId"] == issue["observation_id"]
    assert (tool_issue["traceId"], tool_issue["value"], tool_issue["dataType"]) == (
        pdf_only["trace_id"], "unauthorized_tool", "CATEGORICAL",
    )  # fmt: skip
    research_scores = [
        s for s in posted if s["name"] == "agent_tool_use" and s["metadata"]["agent"] == "research"
    ]
    assert sorted(s["value"] for s in research_scores) == [0.5, 1.0]
    assert all(s["observationId"] and s["observationId"] != issue["observation_id"] for s in research_scores)
