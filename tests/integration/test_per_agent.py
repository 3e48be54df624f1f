"""The per-agent analysis in a run (DESIGN.md, Per-agent analysis): the demo declares its research
agent's tools and their schemas, and `research-pdf-only` narrows them to `pdf_retrieval`; research
prompt v1's extra `web_search` call comes out as an unauthorized tool of the research agent, in the
result's `per_agent`, as a `tool_issue` score on the tool's observation and an `agent_tool_use` score
on the agent's observation, in the run figures; the scenario's pass or fail is not its to decide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

TRACE_FIGURES = ("overall_score", "coordination_score", "intent_drift_score")
SCENARIOS = [str(ROOT / f"scenarios/research/research-{name}.yaml") for name in ("pdf-only", "web-news")]


def _run(cli: Cli, *args: str) -> dict[str, Any]:
    code, text = cli("run", *SCENARIOS, "--no-judge", "--output", "out.json", *args)
    assert code in (0, 1), text
    document: dict[str, Any] = json.loads(Path("out.json").read_text())
    return document


def test_v1s_web_search_is_the_research_agents_unauthorized_tool(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    document = _run(cli, "--prompt", "agents/research=1", "--junit", "junit.xml")
    pdf_only, news = document["results"]
    # JUnit names the agent at fault in the failing scenario's message
    junit = ElementTree.parse("junit.xml")  # noqa: S314 (our own output)
    failure = junit.find(".//testcase[@name='research-pdf-only']/failure")
    assert failure is not None
    assert "research: research called web_search, which is not among its tools" in failure.get("message", "")
    entry = pdf_only["per_agent"]["agents"]["research"]
    [issue] = entry["issues"]
    assert (issue["kind"], issue["severity"], issue["tool"], issue["parameter"]) == (
        "unauthorized_tool", "high", "web_search", None,
    )  # fmt: skip
    assert "not among its tools (pdf_retrieval)" in issue["message"]
    assert (entry["tool_calls"], entry["tool_use_score"]) == (2, 0.5)
    assert entry["latency_ms"] is not None and entry["latency_ms"] > 0
    assert (entry["tokens"], entry["cost"]) == (None, None)  # the scripted model reports no usage
    # the judge's parts are not measured: the agent's score is its tool use alone
    assert {k: entry[k] for k in ("reasoning", "handoff", "response_quality")} == dict.fromkeys(
        ("reasoning", "handoff", "response_quality")
    )
    assert entry["score"] == 0.5
    assert entry["recommendations"] == [
        {
            "message": "Consider improving tool selection logic for research (tool_use_score 0.50: "
            "unauthorized_tool)",
            "observation_ids": [issue["observation_id"]],
        }
    ]
    field = pdf_only["per_agent"]
    # two agents ran; the research agent's 2 tool calls are the steps, none duplicated: 1.0
    assert field["coordination_score"] == 1.0 and field["coordination"]["problems"] == []
    # steps: research (included), pdf_retrieval (included), web_search (excluded): 1 of 3 drifted
    assert field["intent_drift_score"] == pytest.approx(1 / 3)
    overall = (0.25 * 0.5 + 0.20 * 1.0 + 0.10 * (2 / 3)) / 0.55  # conversation, reasoning: not measured
    assert field["overall_score"] == pytest.approx(overall)
    assert news["per_agent"]["overall_score"] == 1.0 and news["per_agent"]["intent_drift_score"] == 0.0
    assert pdf_only["per_agent"]["agents"]["orchestrator"]["issues"] == []
    assert (
        pdf_only["per_agent"]["unattributed_issues"] == [] and pdf_only["per_agent"]["unchecked_tools"] == []
    )
    assert news["per_agent"]["agents"]["research"]["issues"] == []  # research keeps web_search here
    figures = document["run"]["metrics"]
    assert (figures["agent_tool_use"], figures["agent_tool_issues"]) == (0.75, 0.5)
    assert figures["overall_score"] == pytest.approx((overall + 1.0) / 2, abs=1e-4)
    assert figures["intent_drift_score"] == pytest.approx(1 / 6, abs=1e-4)
    assert figures["coordination_score"] == 1.0

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
    [agent_score] = [s for s in posted if s["name"] == "agent_score" and s["traceId"] == pdf_only["trace_id"]]
    assert (agent_score["value"], agent_score["metadata"]["agent"]) == (0.5, "research")
    assert agent_score["observationId"] in {s["observationId"] for s in research_scores}  # the agent's
    on_trace = {
        s["name"]: s["value"]
        for s in posted
        if s["traceId"] == pdf_only["trace_id"] and not s.get("observationId")
    }
    assert on_trace["overall_score"] == pytest.approx(overall)
    assert on_trace["intent_drift_score"] == pytest.approx(1 / 3) and on_trace["coordination_score"] == 1.0
    configs = {c["name"]: c for c in langfuse_standin.score_configs}
    assert [c["label"] for c in configs["tool_issue"]["categories"]] == [
        "unauthorized_tool", "hallucinated_parameter", "missing_parameter", "invalid_value", "tool_error",
    ]  # fmt: skip
    assert configs["agent_tool_use"]["dataType"] == "NUMERIC"


FIXTURES = ROOT / "tests/fixtures/traces"


def test_validate_reads_a_saved_traces_observations(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LangGraph supervisor's trace saved from Langfuse: its research expert called web_search, which
    the target does not give it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evaluator.toml").write_text(
        '[targets.supervisor]\nentry = "m:f"\n'
        '[targets.supervisor.agent_tools]\nresearch_expert = ["read_paper"]\n'
    )
    (tmp_path / "s.yaml").write_text("id: s\ntarget: supervisor\ninput: q\n")
    code, text = cli(
        "validate", "--scenario", "s.yaml", "--trace", str(FIXTURES / "langgraph_supervisor.json"),
        "--no-judge", "--json",
    )  # fmt: skip
    assert code in (0, 1), text
    field = json.loads(text)["per_agent"]
    [issue] = field["agents"]["research_expert"]["issues"]
    assert (issue["kind"], issue["tool"]) == ("unauthorized_tool", "web_search")
    assert field["unchecked_tools"] == ["web_search"]  # this saved trace records no definition of it


WRITER = """
def run(request):
    langfuse = request.langfuse
    with langfuse.start_as_current_observation(as_type="agent", name="writer"):
        with langfuse.start_as_current_observation(
            as_type="generation", name="llm", model="m",
            usage_details={"input": 3, "output": 2}, cost_details={"total": 0.25},
        ):
            pass
        with langfuse.start_as_current_observation(as_type="tool", name="search", input={"query": 1}):
            pass
    return "done"
"""
SCHEMAS = (
    '[{"type": "function", "function": {"name": "search", "parameters": {"type": "object", '
    '"required": ["query"], "properties": {"query": {"type": "string"}}}}}]'
)


@pytest.mark.parametrize("read_back", [False, True])
def test_tokens_and_cost_of_the_langfuse_sdks_own_generations(
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
    langfuse_standin: LangfuseStandIn,
    read_back: bool,
) -> None:
    """Captured in the run (the span's usage attributes), and read back from Langfuse (`validate
    --trace-id`, the rows' `usage` field group): the writer's generation's tokens and cost, and its
    search call's wrong type checked against the `tool_schemas` file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "writer_target.py").write_text(WRITER)
    (tmp_path / "tools.json").write_text(SCHEMAS)
    (tmp_path / "evaluator.toml").write_text(
        f'[store]\npath = "{tmp_path / "e.db"}"\n[targets.w]\nentry = "writer_target:run"\n'
        'tool_schemas = "tools.json"\n[langfuse]\nflush_timeout_seconds = 10\n'
    )
    (tmp_path / "s.yaml").write_text("id: s\ntarget: w\ninput: q\nexpected: {tools: {strict: false}}\n")
    if read_back:
        public_key, secret_key = langfuse_standin.new_keys()
        monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
        monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
        monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse_standin.base_url)
    code, text = cli("run", "s.yaml", "--no-judge", "--output", "out.json")
    assert code in (0, 1), text
    [result] = json.loads(Path("out.json").read_text())["results"]
    if read_back:
        code, text = cli(
            "validate", "--scenario", "s.yaml", "--trace-id", result["trace_id"], "--no-judge", "--json"
        )
        assert code in (0, 1), text
        result = json.loads(text)
    writer = result["per_agent"]["agents"]["writer"]
    assert (writer["tokens"], writer["cost"]) == (5, 0.25)
    [issue] = writer["issues"]
    assert (issue["kind"], issue["parameter"]) == ("invalid_value", "query")


def test_report_by_agent_per_prompt_version_with_links(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """Research prompt v1 against v2: the research agent's issue is v1's alone, linked to its trace's
    page on the tool's observation; the terminal, JSON and HTML reports show it."""
    for version in (1, 2):
        _run(cli, "--prompt", f"agents/research={version}", "--run-name", f"v{version}")
    code, text = cli("report", "--by", "agent", "--json", "--html", "report.html")
    assert code == 0, text
    document = json.loads(text)
    research = {row["prompt"]: row for row in document["rows"] if row["agent"] == "research"}
    v1, v2 = research["agents/research@v1"], research["agents/research@v2"]
    assert (v1["results"], v1["tool_calls"], v1["issues"], v1["tool_use_score"]) == (2, 3, 1, 0.6667)
    assert (v2["results"], v2["issues"], v2["tool_use_score"]) == (2, 0, 1.0)
    assert v1["tokens"] is None and v1["latency_ms"] is not None
    [issue] = document["issues"]
    assert (issue["scenario_id"], issue["agent"], issue["kind"]) == (
        "research-pdf-only",
        "research",
        "unauthorized_tool",
    )
    assert issue["url"] == (
        f"{langfuse_standin.base_url}/project/standin-project/traces/{issue['trace_id']}"
        f"?observation={issue['observation_id']}"
    )
    page = Path("report.html").read_text()
    assert "Each agent, per prompt version" in page and f'href="{issue["url"]}"' in page.replace("&amp;", "&")
    [advice] = document["recommendations"]  # v1's research agent in research-pdf-only, on its web_search
    assert (advice["scenario_id"], advice["agent"], advice["observation_ids"]) == (
        "research-pdf-only", "research", [issue["observation_id"]],
    )  # fmt: skip
    assert advice["url"] == issue["url"] and advice["message"] in page.replace("&#x27;", "'")
    assert (v1["score"], v2["score"]) == (0.75, 1.0)  # the means of research's scores: (0.5 + 1) / 2, 1
    code, text = cli("report", "--by", "agent")
    assert code == 0 and "Agents with agents/research@v1" in text and "Tool issues" in text
    assert "Recommendations" in text


def test_compare_gates_each_agent_and_langfuse_gives_the_same(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """v2 then v1 of the research prompt on the same two scenarios: the research agent's tool use goes
    from 1.0 and 1.0 to 0.5 (research-pdf-only: its web_search is unauthorized there) and 1.0, a mean of
    1.0 -> 0.75, -25 points: beyond the 5-point gate, so compare fails naming the agent; the
    orchestrator makes no tool call, so it has no tool-use figure (nor score) to gate. Rebuilt from the
    scores in Langfuse (`agent_tool_use`, `agent_score`, `tool_issue`, and the trace's
    `overall_score`, `coordination_score`, `intent_drift_score`), the report per agent and the gate come
    out the same."""
    _run(cli, "--prompt", "agents/research=2", "--run-name", "v2")
    _run(cli, "--prompt", "agents/research=1", "--run-name", "v1")
    code, text = cli("compare", "v2", "v1", "--json")
    assert code == 1, text
    local = json.loads(text)
    # the research agent's score is its tool use alone (the judge's parts are not measured): the same
    # change, beyond its 10-point gate
    tool_use, score = local["group_checks"]
    assert (tool_use["group"], tool_use["label"], tool_use["n"]) == ("research", "research: tool use", 2)
    assert (tool_use["baseline"], tool_use["candidate"], tool_use["change"]) == (1.0, 0.75, -25.0)
    assert (score["label"], score["threshold"], score["change"]) == ("research: agent score", 10.0, -25.0)
    assert {"research: tool use", "research: agent score"} <= set(local["regressions"])
    # the trace's figures, as agent-scores computes them: overall (v1's research-pdf-only 0.712121, the
    # rest 1.0) 1.0 -> (0.712121 + 1) / 2, -14.39 points; intent drift 0 -> (1/3 + 0) / 2, +16.67 points
    # (lower is better); coordination 1.0 in both (no problem found)
    trace = {c["figure"]: c for c in local["checks"] if c["figure"] in TRACE_FIGURES}
    assert [(trace[k]["change"], trace[k]["regression"]) for k in TRACE_FIGURES] == [
        (-14.39, True), (0.0, False), (16.67, True),
    ]  # fmt: skip
    code, text = cli("compare", "v2", "v1")
    assert code == 1 and "research: tool use" in text and "research: agent score" in text

    # from Langfuse: runs are named by their id there
    ids = [json.loads(Path("out.json").read_text())["run"]["id"]]
    code, text = cli("compare", "previous", "latest", "--json", "--source", "langfuse")
    assert code == 1, text
    remote = json.loads(text)
    assert remote["candidate"]["id"] == ids[0]
    assert remote["group_checks"] == local["group_checks"]
    assert [c for c in remote["checks"] if c["figure"] in TRACE_FIGURES] == list(trace.values())
    code, text = cli("report", "--by", "agent", "--json")
    assert code == 0, text
    rows = json.loads(text)
    code, text = cli("report", "--by", "agent", "--json", "--source", "langfuse")
    assert code == 0, text
    rebuilt = json.loads(text)
    with_calls = [row for row in rows["rows"] if row["tool_calls"]]
    assert rebuilt["rows"] == with_calls  # the orchestrator made no tool call: no score carries it
    assert {row["agent"] for row in rows["rows"]} - {row["agent"] for row in with_calls} == {"orchestrator"}
    assert _runless(rebuilt["issues"]) == _runless(rows["issues"])  # (a run's label is its name locally)
    # recommendations are no score: only the local report has v1's
    assert (len(rows["recommendations"]), rebuilt["recommendations"]) == (1, [])


def _runless(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in issue.items() if k != "run"} for issue in issues]
