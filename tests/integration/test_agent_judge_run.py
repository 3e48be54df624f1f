"""The per-agent judge end to end through the command line: `evaluator run` of the research demo (its
target declares `agent_tools`, so the per-agent analysis is on) with the judge stand-in as the LLM and
the Langfuse stand-in. The demo's trace has two agents: the orchestrator runs the research agent inside
its own call (a delegation), and the research agent calls the tools. Each agent is judged once, in its
own judge trace; the stand-in's valid reply (reasoning 0.8, handoff 0.7, response quality 0.9,
coordination 0.85) lands in `agent_judge` and in the `per_agent` entries, except the research agent's
handoff (it delegated to no one: null); the scores sit on each agent's observation, and `report --by
agent` shows them."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, Cli
from tests.standin.judge_server import JudgeStandIn, is_agent
from tests.standin.langfuse_server import LangfuseStandIn

PDF_ONLY = str(ROOT / "scenarios/research/research-pdf-only.yaml")


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as standin:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", standin.base_url)
        yield standin


def _agent_in(body: dict[str, Any]) -> str:
    user = body["messages"][1]["content"]
    return str(user.split("<agent>\n", 1)[1].split("\n</agent>", 1)[0])


def test_each_agent_is_judged_once_and_its_values_reach_per_agent_scores_and_the_report(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, judge: JudgeStandIn, cli: Cli
) -> None:
    assert cli("prompts", "push")[0] == 0
    code, text = cli("run", PDF_ONLY, "--output", "out.json")
    assert code in (0, 1), text
    document = json.loads(Path("out.json").read_text())
    [result] = document["results"]
    asked = [_agent_in(body) for body in judge.bodies() if is_agent(body)]
    assert asked == ["orchestrator", "research"]  # one call per agent, first call first
    assert result["judge_status"] == {"status": "scored", "reason": ""}

    field = result["agent_judge"]
    assert list(field["agents"]) == ["orchestrator", "research"]
    orchestrator, research = field["agents"]["orchestrator"], field["agents"]["research"]
    assert (orchestrator["reasoning"], orchestrator["handoff"], orchestrator["response_quality"]) == (
        0.8,
        0.7,
        0.9,
    )
    assert orchestrator["handoff_reason"] == "Passed the request on."
    assert (
        research["handoff"] is None and research["handoff_reason"] == "it did not delegate to another agent"
    )
    assert field["coordination"] == 0.85 and field["prompt"] == {"name": "evaluation/agent", "version": 1}
    entries = result["per_agent"]["agents"]
    assert {k: entries["research"][k] for k in ("reasoning", "handoff", "response_quality")} == {
        "reasoning": 0.8, "handoff": None, "response_quality": 0.9,
    }  # fmt: skip
    assert entries["orchestrator"]["handoff"] == 0.7

    detail = result["judge"]["agent_judge"]
    assert detail["calls"] == 2 and detail["tokens"] == {"input": 240, "output": 60}
    parts = detail["parts"]
    for agent in ("orchestrator", "research"):
        part = parts[f"agent_judge:{agent}"]
        [generation] = langfuse_standin.spans_for(part["trace_id"])  # each agent's judgement: its own trace
        assert generation.attributes["langfuse.trace.name"] == "judge:research-pdf-only"
        assert generation.attributes["langfuse.observation.prompt.name"] == "evaluation/agent"
        assert result["trace_id"] != part["trace_id"]
    assert parts["agent_judge:orchestrator"]["trace_id"] != parts["agent_judge:research"]["trace_id"]

    posted = [s for s in langfuse_standin.scores.values() if s["metadata"]["run_id"] == document["run"]["id"]]
    judged = {(s["name"], s["metadata"]["agent"]): s for s in posted if s["name"].startswith("agent_")}
    assert judged[("agent_reasoning", "research")]["value"] == 0.8
    assert judged[("agent_response_quality", "orchestrator")]["value"] == 0.9
    assert ("agent_handoff", "research") not in judged and judged[("agent_handoff", "orchestrator")][
        "value"
    ] == 0.7
    # on the research agent's own observation, where its agent_tool_use is
    research_scores = {
        judged[(n, "research")]["observationId"] for n in ("agent_reasoning", "agent_tool_use")
    }
    assert len(research_scores) == 1 and None not in research_scores
    assert (
        judged[("agent_reasoning", "research")]["metadata"]["judge_trace_id"]
        == parts["agent_judge:research"]["trace_id"]
    )
    configs = {c["name"]: c for c in langfuse_standin.score_configs}
    assert configs["agent_response_quality"]["dataType"] == "NUMERIC"

    figures = document["run"]["metrics"]
    assert (figures["agent_reasoning"], figures["agent_handoff"]) == (0.8, 0.7)
    assert figures["agent_judge"]["agents"] == 2 and figures["agent_judge"]["coordination"] == 0.85
    assert document["run"]["judge"]["calls"] == len(judge.requests)
    assert "Agents (LLM judge, 2 agents judged): reasoning 0.80, handoff 0.70" in text
    assert {"name": "evaluation/agent", "version": 1} in document["run"]["judge_prompts"]

    code, text = cli("report", "--by", "agent", "--json")
    assert code == 0, text
    rows = {row["agent"]: row for row in json.loads(text)["rows"]}
    assert (rows["research"]["reasoning"], rows["research"]["handoff"]) == (0.8, None)
    assert rows["orchestrator"]["handoff"] == 0.7
    code, text = cli("report", "--by", "agent")
    assert code == 0 and "reasoning" in text
    # rebuilt from the scores in Langfuse: the same values per agent
    code, text = cli("report", "--by", "agent", "--json", "--source", "langfuse")
    assert code == 0, text
    remote = {row["agent"]: row for row in json.loads(text)["rows"]}
    assert (remote["research"]["reasoning"], remote["research"]["response_quality"]) == (0.8, 0.9)
    assert remote["orchestrator"]["handoff"] == 0.7


def test_per_agent_false_turns_the_judge_off(demo_project: Path, judge: JudgeStandIn, cli: Cli) -> None:
    config = demo_project / "evaluator.toml"
    config.write_text(config.read_text() + "\n[judge]\nper_agent = false\n")
    code, text = cli("run", PDF_ONLY, "--output", "out.json")
    assert code in (0, 1), text
    [result] = json.loads(Path("out.json").read_text())["results"]
    assert not any(is_agent(body) for body in judge.bodies()) and judge.bodies()  # the other judges ran
    assert "agent_judge" not in result and result["per_agent"]["agents"]["research"]["reasoning"] is None


@dataclass
class _ResearchHeld(JudgeStandIn):
    """The judge stand-in, holding the research agent's request: Ctrl-C comes as it arrives (the
    orchestrator's reply is in by then: an answer's agents are judged in turn)."""

    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        if is_agent(body) and _agent_in(body) == "research":
            os.kill(os.getpid(), signal.SIGINT)
            self.release.wait(60)
        return super().answer(body)


def test_ctrl_c_between_agents_keeps_the_verdicts_of_the_agents_judged(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    """The per-agent judge has the orchestrator's reply and waits on the research agent's, then
    Ctrl-C: the orchestrator's verdict (made and paid for) is in the result, its per_agent entry and
    the run's judge calls; the research agent and the judges not asked yet are unscored with why, the
    parts they would give not measured (never 0), not the whole answer "interrupted before the judges
    ran"."""
    with _ResearchHeld() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        try:
            code, text = cli("run", PDF_ONLY, "--output", "out.json")
        finally:
            judge.release.set()
    assert code == 130, text
    document = json.loads(Path("out.json").read_text())
    [result] = document["results"]
    interrupted = "the run was interrupted before this judge ended"
    field_ = result["agent_judge"]
    orchestrator, research = field_["agents"]["orchestrator"], field_["agents"]["research"]
    assert (orchestrator["reasoning"], orchestrator["handoff"], orchestrator["response_quality"]) == (
        0.8,
        0.7,
        0.9,
    )
    assert (research["status"], research["reason"]) == ("unscored", interrupted)
    assert all(research[a] is None for a in ("reasoning", "handoff", "response_quality", "coordination"))
    detail = result["judge"]["agent_judge"]
    assert detail["status"] == "scored"
    assert detail["reason"] == f"1 of 2 agents unscored: research: {interrupted}"
    assert detail["calls"] == 1 and detail["tokens"] == {"input": 120, "output": 30}
    for judge_key in ("quality", "correctness"):  # agent_judge asks first: these had not started
        assert result["judge"][judge_key]["status"] == "unscored", judge_key
        assert result["judge"][judge_key]["reason"] == interrupted
    assert result["judge_status"]["status"] == "unscored"

    entries = result["per_agent"]["agents"]
    assert {k: entries["orchestrator"][k] for k in ("reasoning", "handoff", "response_quality")} == {
        "reasoning": 0.8, "handoff": 0.7, "response_quality": 0.9,
    }  # fmt: skip
    assert {k: entries["research"][k] for k in ("reasoning", "handoff", "response_quality")} == dict.fromkeys(
        ("reasoning", "handoff", "response_quality")
    )
    assert entries["research"]["score"] == entries["research"]["tool_use_score"]  # the judge's parts drop out
    per_agent = result["per_agent"]
    assert per_agent["coordination"]["judge"] == 0.85  # the orchestrator's view alone
    coordination = (per_agent["coordination"]["rule_score"] + 0.85) / 2
    assert per_agent["coordination_score"] == pytest.approx(coordination)
    tool_use, drift = per_agent["tool_use_score"], per_agent["intent_drift_score"]
    overall = (0.25 * tool_use + 0.20 * coordination + 0.15 * 0.8 + 0.10 * (1 - drift)) / 0.70
    assert per_agent["overall_score"] == pytest.approx(overall)  # reasoning: the orchestrator's

    usage = document["run"]["judge"]
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (1, 120, 30)
    assert "Stopped by SIGINT" in text
