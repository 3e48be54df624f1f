"""A dialogue's per-agent field rebuilt from Langfuse (`report --source langfuse`, `compare --source
langfuse`) keeps the issues of tool calls no agent made: no session score carries them, the turns'
`tool_issue` scores do. Each turn of the desk below makes one faulty call outside every agent (a
`lookup` without its required `topic`) and one clean call by its planner: locally and from Langfuse,
2 issues over the session, each linked to its turn's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Cli
from tests.standin.langfuse_server import LangfuseStandIn

DESK = """
def run(request):
    langfuse = request.langfuse
    with langfuse.start_as_current_observation(as_type="tool", name="lookup", input={}):
        pass  # no agent made it, and it misses `topic`
    with langfuse.start_as_current_observation(as_type="agent", name="planner"):
        with langfuse.start_as_current_observation(as_type="tool", name="lookup", input={"topic": "x"}):
            pass
    return "ok"
"""
SCHEMAS = (
    '[{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", '
    '"required": ["topic"], "properties": {"topic": {"type": "string"}}}}}]'
)


def _report(cli: Cli, *args: str) -> dict[str, Any]:
    code, text = cli("report", *args, "--json")
    assert code == 0, text
    document: dict[str, Any] = json.loads(text)
    return document


def test_a_dialogues_issues_outside_every_agent_come_back_from_langfuse(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, langfuse_standin: LangfuseStandIn
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "desk_target.py").write_text(DESK)
    (tmp_path / "tools.json").write_text(SCHEMAS)
    (tmp_path / "evaluator.toml").write_text(
        f'[store]\npath = "{tmp_path / "e.db"}"\n[targets.desk]\nentry = "desk_target:run"\n'
        'tool_schemas = "tools.json"\n[targets.desk.agent_tools]\nplanner = ["lookup"]\n'
        "[langfuse]\nflush_timeout_seconds = 10\n"
    )
    (tmp_path / "d.yaml").write_text("id: d\ntarget: desk\nturns:\n  - user: one\n  - user: two\n")
    public_key, secret_key = langfuse_standin.new_keys()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse_standin.base_url)
    code, text = cli("run", "d.yaml", "--no-judge", "--output", "out.json")
    assert code in (0, 1), text
    [result] = json.loads(Path("out.json").read_text())["results"]
    turn_traces = [turn["trace_id"] for turn in result["turns"]]
    session = result["per_agent"]
    assert [(i["kind"], i["turn"], i["trace_id"]) for i in session["unattributed_issues"]] == [
        ("missing_parameter", 0, turn_traces[0]),
        ("missing_parameter", 1, turn_traces[1]),
    ]
    assert (session["tool_calls"], session["issues"]) == (4, 2)

    local, remote = _report(cli, "--by", "agent"), _report(cli, "--by", "agent", "--source", "langfuse")
    local_issues = [(i["agent"], i["kind"], i["turn"], i["trace_id"]) for i in local["issues"]]
    assert local_issues == [
        (None, "missing_parameter", 0, turn_traces[0]),
        (None, "missing_parameter", 1, turn_traces[1]),
    ]
    assert [(i["agent"], i["kind"], i["turn"], i["trace_id"]) for i in remote["issues"]] == local_issues
    local_run, remote_run = _report(cli, "--by", "run"), _report(cli, "--by", "run", "--source", "langfuse")
    assert local_run["rows"][0]["agent_tool_issues"] == remote_run["rows"][0]["agent_tool_issues"] == 2.0
