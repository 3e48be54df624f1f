"""The judges end to end through the command line: `evaluator run` with the judge stand-in as the LLM
(and the Langfuse stand-in) posts the quality and correctness scores with the judge prompt version,
each judgement its own trace; a second run is served from the verdict cache; `--prompt` picks a judge
prompt version; `validate --trace FILE` judges too; with no endpoint the judges say why."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, Cli
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn

SUITE = str(ROOT / "scenarios/research")
QUALITY_SCORES = ("quality_answer_quality", "quality_factual_correctness", "quality_completeness")


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as standin:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", standin.base_url)
        yield standin


def _run(cli: Cli, *extra: str) -> tuple[int, str, dict[str, Any]]:
    code, text = cli("run", SUITE, "--tag", "pdf", "--output", "results.json", *extra)
    return code, text, json.loads(Path("results.json").read_text())


def test_run_posts_judge_scores_with_the_prompt_version_and_judge_traces(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, judge: JudgeStandIn, cli: Cli
) -> None:
    assert cli("prompts", "push")[0] == 0
    code, text, document = _run(cli)
    assert code == 1, text  # the pass/fail verdicts are the workflow's, as without judges
    results = document["results"]
    assert {r["status"] for r in results} == {"passed", "failed"}
    remote = langfuse_standin.scores
    by_trace: dict[tuple[str, str], dict[str, Any]] = {(s["traceId"], s["name"]): s for s in remote.values()}
    with_truth = 0
    for result in results:
        assert result["judge_status"] == {"status": "scored", "reason": ""}
        assert result["quality"]["prompt"] == {"name": "evaluation/quality", "version": 1}
        assert result["judge"]["quality"]["prompt"]["source"] == "langfuse"
        for name in QUALITY_SCORES:
            score = by_trace[(result["trace_id"], name)]
            assert score["dataType"] == "NUMERIC" and score["comment"] == "Clear."
            assert score["metadata"]["judge_prompt"] == "evaluation/quality"
            assert score["metadata"]["judge_prompt_version"] == 1
            assert score["metadata"]["judge_trace_id"] == result["judge"]["quality"]["trace_id"]
        _assert_judge_trace(langfuse_standin, result, "quality")
        if result["correctness"] is not None:
            with_truth += 1
            score = by_trace[(result["trace_id"], "correctness")]
            assert (score["dataType"], score["value"]) == ("CATEGORICAL", result["correctness"]["verdict"])
    assert with_truth == 5
    crag = document["run"]["metrics"]["correctness"]
    assert crag["total"] == 5 and crag["accuracy"] == 1.0 and crag["truthfulness_score"] == 1.0
    assert document["run"]["judge"]["calls"] == len(judge.requests)
    configs = {c["name"]: c for c in langfuse_standin.score_configs}
    assert [c["label"] for c in configs["correctness"]["categories"]] == ["correct", "miss", "hallucination"]
    assert "Judges: " in text and "Correctness (5 with a verdict)" in text


def test_the_runs_rebuilt_from_langfuse_keep_the_per_judge_prompt_trends(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, judge: JudgeStandIn, cli: Cli
) -> None:
    _run(cli)
    code, text = cli("report", "--by", "prompt", "--json")
    assert code == 0, text
    local = [row for row in json.loads(text)["rows"] if row["group"] == "judge_prompt"]
    code, text = cli("report", "--by", "prompt", "--json", "--source", "langfuse")
    assert code == 0, text
    remote = [row for row in json.loads(text)["rows"] if row["group"] == "judge_prompt"]
    both = {"evaluation/quality@v1", "evaluation/correctness@v1"}
    assert both <= {row["key"] for row in local}
    assert {row["key"] for row in remote} == both  # the per-agent judge's scores are not read back yet


def _assert_judge_trace(standin: LangfuseStandIn, result: dict[str, Any], judge: str) -> None:
    spans = standin.spans_for(result["judge"][judge]["trace_id"])
    [generation] = spans  # one model call: one GENERATION, the judge trace's root
    assert generation.observation_type == "GENERATION"
    assert generation.attributes["langfuse.trace.name"] == f"judge:{result['scenario_id']}"
    assert generation.attributes["session.id"].startswith("run-")
    assert generation.attributes["session.id"] in generation.attributes["langfuse.trace.tags"]
    assert generation.attributes["langfuse.observation.prompt.name"] == f"evaluation/{judge}"
    assert generation.attributes["langfuse.observation.prompt.version"] == 1
    assert generation.attributes["langfuse.observation.model.name"] == "gpt-4o-mini"
    assert json.loads(generation.attributes["langfuse.observation.usage_details"])["input"] == 120
    assert result["trace_id"] not in {s.trace_id for s in spans}  # apart from the agent's trace


def test_a_second_run_is_served_from_the_cache_and_no_cache_pays_again(
    demo_project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    code, text, first = _run(cli)
    assert code == 1, text
    paid = len(judge.requests)
    assert paid == first["run"]["judge"]["calls"] > 0
    code, text, second = _run(cli)
    assert len(judge.requests) == paid
    assert second["run"]["judge"]["cached"] == paid and second["run"]["judge"]["calls"] == 0
    assert [r["quality"] for r in second["results"]] == [r["quality"] for r in first["results"]]
    assert f"0 calls, {paid} cached" in text
    _run(cli, "--no-cache")
    assert len(judge.requests) == 2 * paid


def test_a_verdict_cached_by_a_run_without_langfuse_links_no_judge_trace_in_a_run_with_it(
    demo_project: Path,
    langfuse_standin: LangfuseStandIn,
    judge: JudgeStandIn,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first run is embedded: its judge traces go nowhere. The second, connected to Langfuse, is
    served those verdicts from the cache: its judge scores link no judge trace, not one Langfuse has
    never seen."""
    assert _run(cli)[0] == 1
    public_key, secret_key = langfuse_standin.new_keys()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", langfuse_standin.base_url)
    code, text, document = _run(cli)
    assert code == 1, text
    assert document["run"]["judge"]["calls"] == 0 and document["run"]["judge"]["cached"] > 0
    assert all(r["judge"]["quality"]["trace_id"] is None for r in document["results"])
    judged = [s for s in langfuse_standin.scores.values() if s["name"] in QUALITY_SCORES]
    assert judged and all("judge_trace_id" not in s["metadata"] for s in judged)
    assert all(s["metadata"]["judge_decided_by"] == "cache" for s in judged)


def test_a_judge_prompt_version_chosen_with_prompt_is_recorded(
    demo_project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    prompts = demo_project / "prompts"
    shutil.copytree(ROOT / "prompts", prompts)
    v1 = (prompts / "evaluation/quality/v1.prompt").read_text()
    v2 = v1.replace("labels: [production]", "labels: [candidate]").replace(
        "You are an evaluator", "You grade"
    )
    (prompts / "evaluation/quality/v2.prompt").write_text(v2)
    config = demo_project / "evaluator.toml"
    config.write_text(config.read_text().replace(f'dir = "{ROOT / "prompts"}"', f'dir = "{prompts}"'))
    code, text, document = _run(cli, "--prompt", "evaluation/quality=2")
    assert code == 1, text
    assert {r["quality"]["prompt"]["version"] for r in document["results"]} == {2}
    assert all(body["messages"][0]["content"].startswith("You grade") for body in _quality_bodies(judge))
    with sqlite3.connect(demo_project / "evaluator.db") as db:
        rows = db.execute("SELECT metadata FROM scores WHERE name = 'quality_completeness'").fetchall()
    assert rows and {json.loads(r[0])["judge_prompt_version"] for r in rows} == {2}


def _quality_bodies(judge: JudgeStandIn) -> list[dict[str, Any]]:
    return [b for b in judge.bodies() if "<criteria>" in b["messages"][1]["content"]]


def test_broken_replies_are_unscored_never_zero_and_the_run_goes_on(
    demo_project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    judge.mode = "invalid"
    code, text, document = _run(cli, "--judge-concurrency", "2")
    assert code == 1  # the same verdicts as ever: the judges never decide pass or fail
    # the summary says why, not only how many
    assert "unscored (" in text and "the reply holds no JSON object" in " ".join(text.split()), text
    assert {r["judge_status"]["status"] for r in document["results"]} == {"unscored"}
    assert all(r["quality"] is None and r["correctness"] is None for r in document["results"])
    with sqlite3.connect(demo_project / "evaluator.db") as db:
        names = {r[0] for r in db.execute("SELECT name FROM scores")}
    assert not names & {*QUALITY_SCORES, "correctness"}


def test_a_judge_prompt_version_whose_every_judgement_was_unscored_is_in_the_run_s_prompts(
    demo_project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    judge.mode = "invalid"  # a new judge prompt the model answers badly: the version to see in trends
    _, _, document = _run(cli)
    assert {r["judge_status"]["status"] for r in document["results"]} == {"unscored"}
    used = {(p["name"], p["version"]) for p in document["run"]["judge_prompts"]}
    assert {("evaluation/quality", 1), ("evaluation/correctness", 1)} <= used
    code, text = cli("report", "--by", "prompt", "--json")
    assert code == 0, text
    rows = {row["key"]: row for row in json.loads(text)["rows"] if row["group"] == "judge_prompt"}
    assert "evaluation/quality@v1" in rows, rows


def test_no_endpoint_means_no_judges_and_says_how_to_enable_them(demo_project: Path, cli: Cli) -> None:
    code, text, document = _run(cli)
    assert code == 1, text
    assert "To enable them, set OPENAI_API_KEY" in text and "Ollama" in text
    reasons = {r["judge_status"]["reason"] for r in document["results"]}
    assert len(reasons) == 1 and "no judge endpoint is configured" in reasons.pop()
    assert all(r["quality"] is None for r in document["results"])


def test_no_judge_turns_them_off(demo_project: Path, judge: JudgeStandIn, cli: Cli) -> None:
    code, _, document = _run(cli, "--no-judge")
    assert code == 1
    assert judge.requests == []
    assert {r["judge_status"]["reason"] for r in document["results"]} == {"--no-judge was given"}


def test_a_run_whose_judges_did_not_run_names_no_judge_model(
    demo_project: Path, judge: JudgeStandIn, cli: Cli
) -> None:
    """`run.models.judge` names the model that judged the run: none with `--no-judge` (compare and
    report would otherwise read a judge model change into a run no judge saw)."""
    assert _run(cli)[2]["run"]["models"]["judge"] == "gpt-4o-mini"
    assert _run(cli, "--no-judge")[2]["run"]["models"]["judge"] is None


def test_validate_a_saved_trace_judges_it(demo_project: Path, judge: JudgeStandIn, cli: Cli) -> None:
    _, _, document = _run(cli, "--no-judge")
    scenario = ROOT / "scenarios/research/research-pdf-only.yaml"
    trace = demo_project / "trace.json"
    _save_trace(demo_project, document, "research-pdf-only", trace)
    code, out = cli("validate", "--scenario", str(scenario), "--trace", str(trace), "--json")
    assert code == 0, out  # the saved trace calls pdf_retrieval only: it passes
    result = json.loads(out)
    assert result["judge_status"]["status"] == "scored"
    assert result["quality"]["answer_quality"] == 0.9
    assert result["correctness"]["verdict"] == "correct"
    [quality] = _quality_bodies(judge)
    assert "DIN-SQL" in quality["messages"][1]["content"].split("<sources>", 1)[1]  # the trace's tool output
    _, out = cli("validate", "--scenario", str(scenario), "--trace", str(trace), "--json", "--no-judge")
    assert json.loads(out)["judge_status"] == {"status": "skipped", "reason": "--no-judge was given"}
    asked = len(judge.requests)
    cli("validate", "--scenario", str(scenario), "--trace", str(trace), "--json")
    assert len(judge.requests) == asked  # served from the verdict cache
    _, out = cli("validate", "--scenario", str(scenario), "--trace", str(trace), "--json", "--no-cache")
    # quality, correctness, and the per-agent judge once for each of the trace's two agents
    assert len(judge.requests) == asked + 4 and json.loads(out)["judge_status"]["status"] == "scored"


def _save_trace(project: Path, document: dict[str, Any], scenario_id: str, path: Path) -> None:
    """The stored run's trace as a Langfuse traces-endpoint body: root, agent, the tool with its output."""
    [result] = [r for r in document["results"] if r["scenario_id"] == scenario_id]
    observations = [
        {"id": "r", "type": "SPAN", "name": scenario_id, "startTime": "2026-11-22T10:00:00Z"},
        {
            "id": "o",
            "type": "AGENT",
            "name": "orchestrator",
            "parentObservationId": "r",
            "startTime": "2026-11-22T10:00:01Z",
            "metadata": {"flow": "research"},
        },
        {
            "id": "a",
            "type": "AGENT",
            "name": "research",
            "parentObservationId": "o",
            "startTime": "2026-11-22T10:00:02Z",
        },
        {
            "id": "t",
            "type": "TOOL",
            "name": "pdf_retrieval",
            "parentObservationId": "a",
            "startTime": "2026-11-22T10:00:03Z",
            "output": "DIN-SQL reached 85.3% execution accuracy",
        },
    ]
    body = {"id": "t-1", "name": scenario_id, "output": result["output"], "observations": observations}
    path.write_text(json.dumps(body))
