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
