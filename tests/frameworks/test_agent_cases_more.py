"""Per-agent figures of real frameworks' traces through `evaluator run`, each worked out by hand from
DESIGN.md's definitions (Per-agent analysis): tool calls, issues, `tool_use_score`, tokens and cost
per agent, the trace's figures, and the scores Langfuse gets. What a system did not report is null,
never 0; an agent that did not run has no entry."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli import main
from tests.standin.langfuse_server import LangfuseStandIn

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ROOT / "tests/frameworks/systems"


def _evaluator(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`evaluator ARGS...` in-process, as the console script runs it: its output; exit 0 or 1."""
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    assert info.value.code in (0, 1, None), captured.out + captured.err
    return captured.out + captured.err


def _project(folder: Path, monkeypatch: pytest.MonkeyPatch, target: str, settings: str) -> None:
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(ROOT))
    (folder / "evaluator.toml").write_text(
        f'[store]\npath = "{folder / "e.db"}"\n[langfuse]\nflush_timeout_seconds = 10\n'
        f"[targets.{target}]\n{settings}"
    )


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario: str
) -> dict[str, Any]:
    Path("s.yaml").write_text(scenario)
    _evaluator(monkeypatch, capsys, "run", "s.yaml", "--no-judge", "--output", "out.json")
    [result] = json.loads(Path("out.json").read_text())["results"]
    assert result["status"] in ("passed", "failed"), result
    return dict(result)


def _with_langfuse(monkeypatch: pytest.MonkeyPatch, standin: LangfuseStandIn) -> None:
    public_key, secret_key = standin.new_keys()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", standin.base_url)


def _issues(entry: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(i["kind"], i["tool"], i["parameter"]) for i in entry["issues"]]


def test_observe_agents_positional_arguments_nested_calls_and_usage(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    langfuse_standin: LangfuseStandIn,
) -> None:
    """`observe_agents_more`: the planner's `search("BIRD", 5)` names `query` and `limit` in the order
    the tools' file lists them (no issue); its other calls: a wrong type, a tool that raises, and (in
    the nested planner call, still the planner's) an invented `page` Python refuses. 4 calls, 1
    clean: 0.25. The helper's positional `search(question)`: clean, 1.0. The quiet agent: no call,
    null. Outside every agent: `mystery` (no schema: unchecked) and `search()` (missing `query`, and
    Python fails it). The trace: 7 calls, 3 clean."""
    _with_langfuse(monkeypatch, langfuse_standin)
    _project(
        tmp_path,
        monkeypatch,
        "team",
        'entry = "tests.frameworks.systems.observe_agents_more:run"\n'
        f'tool_schemas = "{SYSTEMS / "observe_more_tools.json"}"\n'
        '[targets.team.agent_tools]\nplanner = ["search", "fail"]\nhelper = ["search"]\nquiet = []\n',
    )
    result = _run(monkeypatch, capsys, "id: s\ntarget: team\ninput: text-to-SQL\n")
    field = result["per_agent"]
    planner, helper, quiet = (field["agents"][name] for name in ("planner", "helper", "quiet"))
    # (in call order; calls within one millisecond of each other are ordered by name, as Langfuse's are)
    assert sorted(_issues(planner), key=str) == sorted(
        [
            ("invalid_value", "search", "limit"),
            ("tool_error", "fail", None),
            ("hallucinated_parameter", "search", "page"),
            ("tool_error", "search", None),
        ],
        key=str,
    )
    assert (planner["tool_calls"], planner["tool_use_score"], planner["score"]) == (4, 0.25, 0.25)
    assert (planner["tokens"], planner["cost"]) == (120, pytest.approx(0.003))
    assert (helper["tool_calls"], helper["issues"], helper["tool_use_score"]) == (1, [], 1.0)
    assert (helper["tokens"], helper["cost"]) == (10, None)
    assert (quiet["tool_calls"], quiet["tool_use_score"], quiet["score"]) == (0, None, None)
    assert (quiet["tokens"], quiet["cost"]) == (None, 0.5)
    outside = [(i["kind"], i["tool"], i["parameter"]) for i in field["unattributed_issues"]]
    assert outside == [("missing_parameter", "search", "query"), ("tool_error", "search", None)]
    assert field["unchecked_tools"] == ["mystery"]
    assert (field["tool_calls"], field["issues"]) == (7, 6)
    assert field["tool_use_score"] == pytest.approx(3 / 7)

    posted = [s for s in langfuse_standin.scores.values() if s["traceId"] == result["trace_id"]]
    tool_use = {s["metadata"]["agent"]: s["value"] for s in posted if s["name"] == "agent_tool_use"}
    assert tool_use == {"planner": 0.25, "helper": 1.0}  # the quiet agent's is not measured: no score
    faulty = sorted(s["observationId"] for s in posted if s["name"] == "tool_issue")
    assert faulty == sorted({i["observation_id"] for i in planner["issues"] + field["unattributed_issues"]})


def test_agents_sdk_handoffs_as_tool_parallel_calls_and_a_tool_that_raises(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    langfuse_standin: LangfuseStandIn,
) -> None:
    """`agents_sdk_tools_more`: the triage agent's one call is clean (1.0). The math agent's 5 calls
    (`ask_research` runs the research agent: a hand-off, not a call): `add` and `lookup` in parallel,
    clean; `fragile` raises (tool error); `now` with no arguments, clean; `add` without `b` (missing,
    and the SDK fails it): 3 of 5, 0.6. The research agent's `lookup` is checked against its own
    schema, not the math agent's: `limit` "five" is no integer (and the SDK fails it): 0.0. The
    billing agent never ran: no entry, no score. The scripted models report no usage: tokens null."""
    _with_langfuse(monkeypatch, langfuse_standin)
    tools = "".join(f'"{agent}" = {json.dumps(names)}\n' for agent, names in _sdk_agent_tools().items())
    _project(
        tmp_path,
        monkeypatch,
        "sdk",
        f'entry = "tests.frameworks.systems.agents_sdk_tools_more:run"\n[targets.sdk.agent_tools]\n{tools}',
    )
    result = _run(monkeypatch, capsys, "id: s\ntarget: sdk\ninput: Add 2 and 3.\n")
    assert [(h["from"], h["to"]) for h in result["handoffs"]] == [
        ("Triage agent", "Math agent"),
        ("Math agent", "Research agent"),
    ]
    field = result["per_agent"]
    assert list(field["agents"]) == ["Triage agent", "Math agent", "Research agent"]
    triage, math, research = field["agents"].values()
    assert (triage["tool_calls"], triage["issues"], triage["tool_use_score"]) == (1, [], 1.0)
    assert sorted(_issues(math), key=str) == sorted(
        [("tool_error", "fragile", None), ("missing_parameter", "add", "b"), ("tool_error", "add", None)],
        key=str,
    )
    assert (math["tool_calls"], math["tool_use_score"], math["score"]) == (5, 0.6, 0.6)
    assert _issues(research) == [("invalid_value", "lookup", "limit"), ("tool_error", "lookup", None)]
    assert (research["tool_calls"], research["tool_use_score"]) == (1, 0.0)
    assert all((entry["tokens"], entry["cost"]) == (None, None) for entry in field["agents"].values())
    assert (field["tool_calls"], field["issues"], field["unchecked_tools"]) == (7, 5, [])
    assert field["tool_use_score"] == pytest.approx(4 / 7)

    posted = [s for s in langfuse_standin.scores.values() if s["traceId"] == result["trace_id"]]
    tool_use = {s["metadata"]["agent"]: s["value"] for s in posted if s["name"] == "agent_tool_use"}
    assert tool_use == {"Triage agent": 1.0, "Math agent": 0.6, "Research agent": 0.0}
    on_agent = {s["metadata"]["agent"]: s["observationId"] for s in posted if s["name"] == "agent_tool_use"}
    assert on_agent == {name: entry["observation_ids"][0] for name, entry in field["agents"].items()}
    assert len([s for s in posted if s["name"] == "tool_issue"]) == 3  # one per faulty call


def _sdk_agent_tools() -> dict[str, list[str]]:
    from tests.frameworks.systems.agents_sdk_tools_more import AGENT_TOOLS

    return AGENT_TOOLS


def test_pydantic_ai_retried_tool_an_agent_without_tools_and_one_that_never_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pydantic_retry`: `add` raising `ModelRetry` is a failed call (ERROR), and the model's next
    call is another call: math_agent 1 of 2, 0.5. The coordinator's `ask_math` and `ask_writer` are
    hand-offs; its `lookup`: 1.0. The writer ran and called no tool: its tool use and score are null
    (not measured), its tokens counted. The auditor never ran: no entry (its declaration is not a
    0), and the scenario's `include` reports it missing, never avoided."""
    _project(
        tmp_path,
        monkeypatch,
        "pyd",
        'entry = "tests.frameworks.systems.pydantic_retry:run"\n[targets.pyd.agent_tools]\n'
        'coordinator = ["lookup", "ask_math", "ask_writer"]\nmath_agent = ["add"]\nwriter = []\n'
        'auditor = ["audit"]\n',
    )
    result = _run(
        monkeypatch,
        capsys,
        "id: s\ntarget: pyd\ninput: Add 2 and 3.\nexpected:\n"
        "  agents: {include: [math_agent, auditor], allow: [writer]}\n  tools: {include: [add, lookup]}\n",
    )
    assert result["workflow"]["agents"]["missing"] == ["auditor"]
    assert [(h["to"], h["via"]) for h in result["handoffs"]] == [
        ("math_agent", "ask_math"),
        ("writer", "ask_writer"),
    ]
    field = result["per_agent"]
    assert list(field["agents"]) == ["coordinator", "math_agent", "writer"]
    coordinator, math, writer = field["agents"].values()
    assert (coordinator["tool_calls"], coordinator["tool_use_score"]) == (1, 1.0)
    assert _issues(math) == [("tool_error", "add", None)]
    assert (math["tool_calls"], math["tool_use_score"], math["score"]) == (2, 0.5, 0.5)
    assert (writer["tool_calls"], writer["tool_use_score"], writer["score"]) == (0, None, None)
    for entry in (coordinator, math, writer):  # FunctionModel reports usage; nothing prices it
        assert isinstance(entry["tokens"], int) and entry["tokens"] > 0 and entry["cost"] is None
    assert (field["tool_calls"], field["issues"]) == (3, 1) and field["tool_use_score"] == pytest.approx(
        2 / 3
    )
    # steps: math_agent and writer (coordinator is the entry agent) + 3 tool calls; none drifted
    assert (field["intent_drift"]["steps"], field["intent_drift_score"]) == (5, 0.0)
    # (0.25 tool use + 0.20 coordination (1.0) + 0.10 (1 - drift)) / 0.55
    assert field["overall_score"] == pytest.approx((0.25 * 2 / 3 + 0.20 + 0.10) / 0.55)
