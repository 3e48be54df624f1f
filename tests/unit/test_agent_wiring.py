"""The per-agent analysis wired into compare's gate, the rebuild from Langfuse scores and a dialogue's
roll-up (DESIGN.md, Per-agent analysis). Every expected figure below is worked out by hand from the
inputs written next to it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from evaluator.cli import main
from evaluator.config import CompareConfig, load_config
from evaluator.errors import InputError
from evaluator.metrics import MetricContext, MetricSet, PerAgentMetric, TargetAgents
from evaluator.metrics.agents._rebuild import per_agent_from_scores
from evaluator.metrics.agents._session import SessionAgentsVerdict, roll_up_session
from evaluator.reports import compare_markdown, compare_runs, print_compare
from evaluator.reports.runs import RunRecord
from evaluator.results import ToolSchemaFile
from evaluator.scenarios import Scenario
from evaluator.trace import TraceDetail
from tests.builders import TraceBuilder, expected

METRICS = MetricSet([PerAgentMetric()])


def _issue(obs: str, kind: str = "unauthorized_tool", parameter: str | None = None) -> dict[str, Any]:
    severity = "high" if kind == "unauthorized_tool" else "medium"
    return {"kind": kind, "severity": severity, "tool": "book", "parameter": parameter, "message": "m",
            "observation_id": obs}  # fmt: skip


def _agent(calls: int, issues: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    faulty = len({i["observation_id"] for i in issues})
    score = (calls - faulty) / calls if calls else None
    return {"tool_calls": calls, "issues": issues, "tool_use_score": score, "latency_ms": 100.0,
            "tokens": None, "cost": None, "score": None, **more}  # fmt: skip


def _field(agents: dict[str, Any], calls: int, **more: Any) -> dict[str, Any]:
    trace = dict.fromkeys(("coordination_score", "intent_drift_score", "overall_score"))
    return {"agents": agents, "tool_calls": calls, "unattributed_issues": [], "unchecked_tools": [],
            **trace, **more}  # fmt: skip


# --- a dialogue's roll-up --------------------------------------------------------------------------------

# Turn 0: the planner makes 2 clean calls (5 tokens, $0.25, 100 ms); turn 1: it makes 2 calls, one of them
# with two issues (an unauthorized tool and an invented parameter), reports no tokens; the writer, in
# turn 1 only, makes 1 clean call with 4 tokens. Turn 1 also has a faulty call no agent made.
TURNS = [
    (0, "t0", _field({"planner": _agent(2, [], tokens=5, cost=0.25, score=0.8)}, 2, overall_score=0.9)),
    (
        1,
        "t1",
        _field(
            {
                "planner": _agent(2, [_issue("b1"), _issue("b1", "hallucinated_parameter", "nights")]),
                "writer": _agent(1, [], tokens=4),
            },
            4,
            unattributed_issues=[_issue("x1", "tool_error")],
            unchecked_tools=["fetch"],
        ),
    ),
]


def test_a_dialogues_roll_up_per_agent_and_per_session() -> None:
    field = roll_up_session(TURNS)
    assert field is not None
    planner, writer = field["agents"]["planner"], field["agents"]["writer"]
    # 4 calls over the session, 1 of them faulty (two issues, one call): 3/4, not the mean of 1.0 and 0.5
    assert (planner["turns"], planner["tool_calls"], planner["tool_use_score"]) == (2, 4, 0.75)
    assert [(i["kind"], i["turn"], i["trace_id"]) for i in planner["issues"]] == [
        ("unauthorized_tool", 1, "t1"), ("hallucinated_parameter", 1, "t1"),
    ]  # fmt: skip
    # turn 1 reported no tokens or cost: the session's sums are not measured; latency was measured twice
    assert (planner["tokens"], planner["cost"], planner["latency_ms"]) == (None, None, 200.0)
    assert planner["score"] == 0.8  # the mean over the turns that measured it (turn 0 only)
    assert (writer["turns"], writer["tool_use_score"], writer["tokens"]) == (1, 1.0, 4)
    # the session: 2 + 4 calls, 2 of them faulty (b1 and the unattributed x1): 4/6
    assert (field["turns"], field["tool_calls"], field["issues"]) == (2, 6, 3)
    assert field["tool_use_score"] == round(4 / 6, 6)
    assert [i["observation_id"] for i in field["unattributed_issues"]] == ["x1"]
    assert field["unchecked_tools"] == ["fetch"]
    assert (field["overall_score"], field["coordination_score"]) == (0.9, None)


def test_a_dialogues_session_scores_follow_the_dialogue_naming() -> None:
    field = roll_up_session(TURNS)
    assert field is not None
    scores = SessionAgentsVerdict(field=field).scores()
    named = [(s.name, s.metadata.get("agent"), s.value) for s in scores]
    assert named == [
        ("dialogue_agent_tool_use", "planner", 0.75),
        ("dialogue_agent_score", "planner", 0.8),
        ("dialogue_agent_tool_use", "writer", 1.0),
        ("dialogue_overall_score", None, 0.9),
    ]
    levels = MetricSet([PerAgentMetric()]).score_levels
    assert {levels[name] for name, _, _ in named} == {"session"}
    assert levels["agent_tool_use"] == "trace"  # the turn's own stay on its trace


def test_no_turn_analysed_no_roll_up() -> None:
    assert roll_up_session([]) is None


# --- compare gates each agent ------------------------------------------------------------------------------


def _result(sid: str, agents: dict[str, float | None], **trace: float) -> dict[str, Any]:
    entries = {
        name: {"tool_calls": 2, "issues": [], "tool_use_score": score} for name, score in agents.items()
    }
    return {"scenario_id": sid, "status": "passed", "per_agent": {"agents": entries, **trace}}


def _run(run_id: str, results: list[dict[str, Any]]) -> RunRecord:
    return RunRecord(id=run_id, name=run_id, started_at=run_id, results=tuple(results))


def test_compare_gates_each_agent_and_lists_agents_only_one_run_has() -> None:
    # research: 1.0 in all four scenarios, then 0.5 in one: mean 1.0 -> 0.875, -12.5 points (> 5)
    # writer: 1.0 -> 1.0; clarifier only in the baseline, reviewer only in the candidate: listed, not gated
    base = _run("b", [_result(f"s{i}", {"research": 1.0, "writer": 1.0, "clarifier": 1.0}) for i in range(4)])
    cand = _run(
        "c",
        [
            _result(f"s{i}", {"research": 0.5 if i == 0 else 1.0, "writer": 1.0, "reviewer": 0.0})
            for i in range(4)
        ],
    )
    document = compare_runs(base, cand, CompareConfig(), metrics=METRICS)
    rows = {(c["group"], c["figure"]): c for c in document["group_checks"]}
    assert set(rows) == {("research", "agent_tool_use_score"), ("writer", "agent_tool_use_score")}
    research = rows[("research", "agent_tool_use_score")]
    assert (research["baseline"], research["candidate"], research["change"], research["n"]) == (
        1.0, 0.875, -12.5, 4,
    )  # fmt: skip
    assert research["regression"] and research["label"] == "research: tool use"
    assert rows[("writer", "agent_tool_use_score")]["status"] == "ok"
    assert document["groups_apart"] == {
        "agent": {"only_in_baseline": ["clarifier"], "only_in_candidate": ["reviewer"]}
    }
    assert document["verdict"] == "regression" and "research: tool use" in document["regressions"]


def test_a_per_agent_threshold_by_agent_or_by_figure() -> None:
    base = _run("b", [_result(f"s{i}", {"research": 1.0}) for i in range(4)])
    cand = _run("c", [_result(f"s{i}", {"research": 0.5 if i == 0 else 1.0}) for i in range(4)])
    for thresholds in ({"agent_tool_use_score": 12.5}, {"agent_tool_use_score.research": 13.0}):
        config = CompareConfig(thresholds=thresholds)
        [row] = compare_runs(base, cand, config, metrics=METRICS)["group_checks"]
        assert not row["regression"], thresholds  # exactly the threshold, or under it, is no regression
    config = CompareConfig(thresholds={"agent_tool_use_score": 20.0, "agent_tool_use_score.research": 12.0})
    [row] = compare_runs(base, cand, config, metrics=METRICS)["group_checks"]
    assert row["threshold"] == 12.0 and row["regression"]  # the agent's own wins


def test_a_run_not_judged_is_not_read_as_a_change_in_its_agents() -> None:
    """The baseline was judged, the candidate's judge was down; the agents did the same. The clarifier
    has no tools, so only the judge measured it: it is not "only in the baseline". The weighted scores
    weigh the judge's parts in one run only: not compared, and said so, not a +30-point change."""

    def judged(sid: str) -> dict[str, Any]:
        agents = {
            "research": {"tool_use_score": 1.0, "reasoning": 0.6, "response_quality": 0.6, "score": 0.82},
            "clarifier": {"tool_use_score": None, "reasoning": 0.5, "response_quality": 0.5, "score": 0.5},
        }
        coordination = {"rule_score": 1.0, "judge": 0.2}
        per_agent = {"agents": agents, "coordination": coordination, "coordination_score": 0.6}
        return {"scenario_id": sid, "status": "passed", "per_agent": {**per_agent, "overall_score": 0.7}}

    def unjudged(sid: str) -> dict[str, Any]:
        agents = {
            "research": {"tool_use_score": 1.0, "reasoning": None, "response_quality": None, "score": 1.0},
            "clarifier": {"tool_use_score": None, "reasoning": None, "response_quality": None, "score": None},
        }
        coordination = {"rule_score": 1.0, "judge": None}
        per_agent = {"agents": agents, "coordination": coordination, "coordination_score": 1.0}
        return {"scenario_id": sid, "status": "passed", "per_agent": {**per_agent, "overall_score": 1.0}}

    base = _run("b", [judged(f"s{i}") for i in range(4)])
    cand = _run("c", [unjudged(f"s{i}") for i in range(4)])
    document = compare_runs(base, cand, CompareConfig(), metrics=METRICS)
    assert document["groups_apart"] == {}
    checks = {c["figure"]: c for c in document["checks"]}
    assert checks["overall_score"]["n"] == checks["coordination_score"]["n"] == 0
    assert checks["overall_score"]["status"] == "not measured"
    assert checks["agent_tool_use"]["n"] == 0  # no trace-level tool use in these results: unrelated
    assert [(c["group"], c["figure"], c["n"]) for c in document["group_checks"]] == [
        ("research", "agent_tool_use_score", 4)  # made of the tool calls alone: compared
    ]
    with_judge, without = "with the per-agent judge's parts", "without the per-agent judge's parts"
    assert document["not_comparable"] == [
        {"figure": name, "scenarios": 4, "baseline": with_judge, "candidate": without}
        for name in ("overall_score", "coordination_score", "agent_score")
    ]
    console = Console(record=True, width=400)
    print_compare(console, document, METRICS)
    assert (
        "Not compared on 4 scenario(s), made of different parts (the baseline's with the per-agent "
        "judge's parts, the candidate's without the per-agent judge's parts): overall_score, "
        "coordination_score, agent_score." in console.export_text()
    )
    assert "only in the baseline" not in console.export_text()


@pytest.mark.parametrize(("before", "after", "regression"), [(0.1, 0.25, True), (0.25, 0.1, False)])
def test_intent_drift_is_worse_when_it_rises(before: float, after: float, regression: bool) -> None:
    base = _run("b", [_result(f"s{i}", {"a": 1.0}, intent_drift_score=before) for i in range(3)])
    cand = _run("c", [_result(f"s{i}", {"a": 1.0}, intent_drift_score=after) for i in range(3)])
    document = compare_runs(base, cand, CompareConfig(), metrics=METRICS)
    [drift] = [c for c in document["checks"] if c["figure"] == "intent_drift_score"]
    assert drift["direction"] == "up" and drift["regression"] is regression  # 15 points, threshold 10


# --- rebuilt from Langfuse scores -------------------------------------------------------------------------


def _score(name: str, value: Any, *, on: str | None = None, **metadata: Any) -> dict[str, Any]:
    subject = {"kind": "observation", "id": on, "traceId": "t"} if on else {"kind": "trace", "id": "t"}
    return {"name": name, "value": value, "metadata": metadata, "subject": subject, "comment": "c"}


def test_per_agent_rebuilt_from_observation_scores() -> None:
    """The research agent (observation a1): 2 calls, one of them (w1) unauthorized; the orchestrator
    (a0): an agent score and no tool call; a faulty call (x1) no agent made."""
    issue = _issue("w1")
    rows = [
        _score("workflow_pass", 1, run_id="r"),
        _score(
            "agent_tool_use",
            0.5,
            on="a1",
            agent="research",
            tool_calls=2,
            latency_ms=22.5,
            tokens=7,
            cost=None,
        ),
        _score("tool_issue", "unauthorized_tool", on="w1", agent="research", tool="book", issues=[issue]),
        _score("tool_issue", "tool_error", on="x1", agent=None, tool="fetch"),  # posted before `issues`
        _score("agent_score", 0.7, on="a0", agent="orchestrator"),
        _score("overall_score", 0.6),
    ]
    field = per_agent_from_scores(rows)
    assert field is not None
    research, orchestrator = field["agents"]["research"], field["agents"]["orchestrator"]
    assert (research["tool_calls"], research["tool_use_score"], research["issues"]) == (2, 0.5, [issue])
    assert (research["latency_ms"], research["tokens"], research["cost"]) == (22.5, 7, None)
    assert (orchestrator["score"], orchestrator["tool_calls"]) == (0.7, None)
    [outside] = field["unattributed_issues"]
    assert (outside["kind"], outside["severity"], outside["observation_id"]) == ("tool_error", "medium", "x1")
    # 2 calls of the research agent and the faulty call outside: 3, of which w1 and x1 faulty
    assert (field["tool_calls"], field["tool_use_score"], field["issues"]) == (3, 1 / 3, 2)
    assert (field["overall_score"], field["unchecked_tools"]) == (0.6, None)
    assert per_agent_from_scores([_score("workflow_pass", 1)]) is None  # no per-agent score: no field


def test_a_trace_whose_only_per_agent_scores_are_issues_of_calls_no_agent_made_keeps_them() -> None:
    """A faulty call outside every agent (x1) is the trace's only per-agent score: the field is there,
    with that issue, not absent as if nothing per-agent had been posted."""
    field = per_agent_from_scores(
        [_score("tool_issue", "tool_error", on="x1", issues=[_issue("x1", "tool_error")])]
    )
    assert field is not None
    assert [i["observation_id"] for i in field["unattributed_issues"]] == ["x1"]
    assert field["agents"] == {}


def test_the_roll_ups_scores_rebuild_the_same_scores() -> None:
    """The scores a trace's verdict posts (agent-scores' `agent_score` and trace scores, agent-wiring's
    `agent_tool_use`) carry back what the rebuild reads. The trace: an orchestrator, and a research
    agent under it calling pdf_retrieval and web_search; the research agent may use pdf_retrieval only,
    and the scenario includes research and pdf_retrieval and excludes web_search. By hand: research's
    tool use 1/2 (web_search unauthorized), so its score 0.5 (the judge's parts not measured); the
    orchestrator made no tool call: no score; coordination: 2 steps, no problem: 1.0; drift (the
    orchestrator, the entry agent, is exempt): research, pdf_retrieval, web_search (excluded): 1 of 3;
    overall (0.25 x 0.5 + 0.20 x 1.0 + 0.10 x 2/3) / 0.55."""
    builder = TraceBuilder()
    orchestrator = builder.agent("orchestrator")
    research = builder.agent("research", parent=orchestrator)
    builder.tool("pdf_retrieval", parent=research, input={"query": "q"})
    builder.tool("web_search", parent=research, input={"query": "q"})
    metric = PerAgentMetric({"t": TargetAgents(agent_tools={"research": ("pdf_retrieval",)})})
    scenario = Scenario(
        id="s",
        target="t",
        input="q",
        expected=expected(
            agents={"include": ["research"]}, tools={"include": ["pdf_retrieval"], "exclude": ["web_search"]}
        ),
    )
    verdict = metric.evaluate(
        MetricContext(
            scenario=scenario,
            trace=builder.build(),
            answer="",
            detail=lambda: TraceDetail(observations=tuple(builder.observations)),
        )
    )
    assert verdict is not None
    local = verdict.to_json()
    overall = (0.25 * 0.5 + 0.20 * 1.0 + 0.10 * 2 / 3) / 0.55
    assert (local["agents"]["research"]["score"], local["agents"]["orchestrator"]["score"]) == (0.5, None)
    assert (local["coordination_score"], local["intent_drift_score"]) == (1.0, pytest.approx(1 / 3))
    assert local["overall_score"] == pytest.approx(overall)
    rows = [
        {
            "name": score.name,
            "value": score.value,
            "metadata": dict(score.metadata),
            "comment": score.comment,
            "subject": {"kind": "observation", "id": score.observation_id, "traceId": "t1"}
            if score.observation_id
            else {"kind": "trace", "id": "t1"},
        }
        for score in verdict.scores()
    ]
    rebuilt = per_agent_from_scores(rows)
    assert rebuilt is not None
    assert list(rebuilt["agents"]) == ["research"]  # the orchestrator left no score
    research_entry = rebuilt["agents"]["research"]
    assert (research_entry["score"], research_entry["tool_use_score"]) == (0.5, 0.5)
    keys = ("coordination_score", "intent_drift_score", "overall_score", "tool_use_score", "issues")
    assert {k: rebuilt[k] for k in keys} == {k: local[k] for k in keys}
    assert "recommendations" not in research_entry  # no score carries them


def test_one_set_of_trace_figures_gated_and_no_score_declared_twice() -> None:
    """The trace's overall, coordination and intent drift are run figures once each, gated (drift
    upward); the MetricSet built above would have raised on a duplicate score or figure name."""
    gated = {f.name: f.gate for f in METRICS.gated}
    trace = ("overall_score", "coordination_score", "intent_drift_score")
    found = {name: (g.direction, g.threshold) for name, g in gated.items() if g is not None and name in trace}
    assert found == dict(zip(trace, [("down", 10.0), ("down", 10.0), ("up", 10.0)], strict=True))
    assert not {"agent_overall", "agent_coordination", "agent_intent_drift"} & set(METRICS.figure_names)
    assert {"agent_score", "overall_score", "dialogue_agent_score", "dialogue_overall_score"} <= set(
        METRICS.score_types
    )


# --- the tool_schemas file: lint, and read only when a check needs it ---------------------------------------


def _project(tmp_path: Path, schemas: str | None) -> Path:
    if schemas is not None:
        (tmp_path / "tools.json").write_text(schemas)
    (tmp_path / "evaluator.toml").write_text(
        f'[store]\npath = "{tmp_path / "e.db"}"\n[targets.w]\nentry = "m:f"\ntool_schemas = "tools.json"\n'
    )
    (tmp_path / "s.yaml").write_text("id: s\ntarget: w\ninput: q\n")
    return tmp_path / "evaluator.toml"


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out + captured.err


@pytest.mark.parametrize(
    ("schemas", "found"),
    [
        (None, "tools.json does not exist"),
        ('{"name": "add"}', "tools.json: a JSON dict, not a list"),
        ('[{"type": "function"}]', "tools.json [0]: not a function definition"),
    ],
)
def test_lint_names_the_configuration_the_field_and_the_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    schemas: str | None,
    found: str,
) -> None:
    config = _project(tmp_path, schemas)
    code, text = _cli(monkeypatch, capsys, "lint", str(tmp_path / "s.yaml"), "--config", str(config))
    assert code == 2, text
    text = " ".join(text.split())  # the console wraps long lines
    assert f"{config}: [targets.w] tool_schemas: " in text and found in text and "Fix: " in text
    # a run stops before anything runs (its target's entry is not even imported), with the same message
    code, text = _cli(monkeypatch, capsys, "run", str(tmp_path / "s.yaml"), "--config", str(config))
    assert code == 2 and found in " ".join(text.split()), text
    # report never needs the schemas: it does not read the file
    code, text = _cli(monkeypatch, capsys, "report", "--config", str(config))
    assert code == 0, text


def test_the_file_is_read_at_its_first_use_and_fails_the_same_way(tmp_path: Path) -> None:
    config = load_config(_project(tmp_path, "[1]"))
    schemas = ToolSchemaFile(config, "w", Path("tools.json"))
    assert schemas  # declared: the analysis applies, nothing read yet
    for _ in range(2):
        with pytest.raises(InputError, match=r"\[targets\.w\] tool_schemas: .*tools\.json \[0\]"):
            schemas.get("add")
    (tmp_path / "tools.json").write_text(
        '[{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]'
    )
    fresh = ToolSchemaFile(config, "w", Path("tools.json"))
    assert list(fresh) == ["add"] and fresh == schemas  # the same file of the same target


def test_a_per_agent_threshold_naming_an_agent_neither_run_has_is_said_unused() -> None:
    base = _run("b", [_result(f"s{i}", {"research": 1.0, "writer": 1.0}) for i in range(4)])
    cand = _run(
        "c", [_result(f"s{i}", {"research": 0.5 if i == 0 else 1.0, "writer": 1.0}) for i in range(4)]
    )
    thresholds = {
        "agent_tool_use_score.reserch": 20.0,
        "agent_tool_use_score.writer": 1.0,
        "agent_tool_use": 5,
    }
    document = compare_runs(base, cand, CompareConfig(thresholds=thresholds), metrics=METRICS)
    assert document["unused_thresholds"] == [
        {
            "key": "agent_tool_use_score.reserch",
            "group_kind": "agent",
            "group": "reserch",
            "groups": ["research", "writer"],
        }
    ]
    research = next(c for c in document["group_checks"] if c["group"] == "research")
    assert research["threshold"] == 5.0 and research["regression"]  # the misspelled key's 20 never applied
    text = compare_markdown(document, METRICS)
    assert (
        '[compare.thresholds] agent_tool_use_score.reserch was not used: neither run has the agent "reserch" '
        '(did you mean "research"?).'
    ) in text
