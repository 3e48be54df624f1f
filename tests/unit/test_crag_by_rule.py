"""CRAG's rule steps without a judge model (DESIGN.md, Judges: "Miss detection and the exact match need no
model"): `evaluate` decides a miss and an exact match in the metrics stage; an answer only the semantic
step could decide is not measured (null, with the reason), never a hallucination. The run figures, the
scores and the console count only the decided ones; a judge that runs still decides by the same rules
first.

Every case is worked out by hand from the seed (crag-llm-judge-evaluator.md, "LLM Judge Details": 1. an
"I don't know" variant is a miss, 2. an exact match is correct with no API call, 3. otherwise the LLM)
and its normalisation (lower case, special characters removed)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from evaluator.judge import NOTHING_TO_JUDGE, FakeJudgeModel, Judges, RetryPolicy
from evaluator.judge.correctness import NEEDS_A_JUDGE
from evaluator.metrics import JudgeStatus
from evaluator.prompts import PromptLibrary
from evaluator.reports import print_summary
from evaluator.results import RunInfo, ScenarioResult, builtin_metrics, evaluate, run_summaries, scores_for
from tests.builders import TraceBuilder, scenario

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
NO_JUDGE = JudgeStatus(status="skipped", reason="--no-judge was given")


def _trace() -> Any:
    builder = TraceBuilder()
    builder.agent("research")
    return builder.build()


def _result(answer: str, ground_truth: str | None = "DIN-SQL", sid: str = "s1") -> ScenarioResult:
    expected = {"answer": {"ground_truth": ground_truth}} if ground_truth is not None else {}
    sc = scenario(id=sid, input="Which approach leads Spider?", expected=expected)
    return evaluate(
        sc, _trace(), judge_status=NO_JUDGE, output=answer, finished_at="2026-11-25T10:00:00.000Z"
    )


def test_a_miss_phrase_is_a_miss_without_a_judge() -> None:
    document = _result("Sorry, I don't know which one.").to_json()
    assert document["correctness"] == {
        "verdict": "miss",
        "exact_match": False,
        "reason": 'the answer says it does not know ("i don\'t know")',
        "prompt": None,
        "model": None,
    }
    assert document["judge"]["correctness"]["decided_by"] == "miss"
    assert document["judge"]["correctness"]["calls"] == 0
    assert document["judge_status"] == {"status": "skipped", "reason": "--no-judge was given"}


def test_an_exact_match_after_normalisation_is_correct_without_a_judge() -> None:
    # "  din-sql. " -> "din sql" == "DIN-SQL" -> "din sql": case, punctuation and whitespace folded
    document = _result("  din-sql. ").to_json()
    assert document["correctness"]["verdict"] == "correct"
    assert document["correctness"]["exact_match"] is True
    assert document["judge"]["correctness"]["decided_by"] == "exact match"


def test_an_answer_only_the_judge_could_decide_is_not_measured_with_the_reason() -> None:
    # "DIN-SQL, with GPT-4" is neither a miss nor "din sql": only the semantic step could say
    result = _result("DIN-SQL, with GPT-4")
    document = result.to_json()
    assert document["correctness"] is None  # not measured, never a hallucination
    detail = document["judge"]["correctness"]
    assert (detail["status"], detail["decided_by"], detail["reason"]) == ("skipped", "none", NEEDS_A_JUDGE)
    assert "--no-judge" in NEEDS_A_JUDGE and "OPENAI_API_KEY" in NEEDS_A_JUDGE
    assert "correctness" not in {s.name for s in scores_for(result, run_id="r")}


def test_no_ground_truth_no_correctness_at_all() -> None:
    document = _result("DIN-SQL", ground_truth=None).to_json()
    assert document["correctness"] is None and "judge" not in document


def test_scores_only_for_the_decided_ones_saying_how_they_were_decided() -> None:
    scores = {
        answer: [s for s in scores_for(_result(answer), run_id="r") if s.name == "correctness"]
        for answer in ("I do not know", "DIN-SQL", "RESDSQL")
    }
    [miss], [exact] = scores["I do not know"], scores["DIN-SQL"]
    assert (miss.value, miss.data_type, miss.metadata["judge_decided_by"]) == ("miss", "CATEGORICAL", "miss")
    assert (exact.value, exact.comment, exact.metadata["judge_decided_by"]) == (
        "correct",
        "exact match",
        "exact match",
    )
    assert "judge_prompt" not in exact.metadata and "judge_model" not in exact.metadata
    assert scores["RESDSQL"] == []


def _four() -> list[ScenarioResult]:
    """Two exact matches, a miss, and one only a judge could decide."""
    return [
        _result("DIN-SQL", sid="a"),
        _result("din sql", sid="b"),
        _result("I cannot answer that.", sid="c"),
        _result("RESDSQL", sid="d"),
    ]


def test_the_run_figures_count_only_the_decided_ones() -> None:
    results = _four()
    # 3 decided: 2 correct (both exact), 1 miss, 0 hallucination; the 4th is unjudged, not counted
    assert run_summaries(results, builtin_metrics())["correctness"] == {
        "total": 3,
        "unjudged": 1,
        "correct_exact": 2,
        "correct": 2,
        "miss": 1,
        "hallucination": 0,
        "exact_match": 0.6667,
        "accuracy": 0.6667,
        "missing": 0.3333,
        "hallucination_rate": 0.0,
        "truthfulness_score": 0.6667,  # (2 x 2 + 1) / 3 - 1
    }
    figures = builtin_metrics().summarize([r.to_json() for r in results])
    assert figures["correctness_accuracy"] == 0.6667 and figures["n"]["correctness_accuracy"] == 3
    assert figures["correctness_truthfulness"] == 0.6667  # (+1 +1 +0) / 3
    assert figures["judge_unscored"] == 0  # nothing was left unscored by a judge: none ran


def test_the_summary_gives_the_crag_line_and_no_judge_usage() -> None:
    out = io.StringIO()
    run = RunInfo(id="run-1", name="", started_at="2026-11-25T10:00:00Z")
    print_summary(Console(file=out, width=200), run, _four(), 4)
    text = out.getvalue()
    assert "Correctness (3 with a verdict, 1 not judged): accuracy 0.67, exact match 0.67" in text
    assert "Judges:" not in text  # no judge ran: no calls, tokens or cache to report


def test_a_judge_that_runs_applies_the_same_rules_first_and_decides_the_rest() -> None:
    fake = FakeJudgeModel(['{"verdict": "WRONG", "reason": "another system"}'])
    judges = Judges(model=fake, prompts=PromptLibrary(PROMPTS), retry=RetryPolicy(sleep=lambda _: None))
    by_rule = {r.scenario_id: r for r in _four()}
    judged = {}
    for sid, result in by_rule.items():
        sc = scenario(
            id=sid, input="Which approach leads Spider?", expected={"answer": {"ground_truth": "DIN-SQL"}}
        )
        outcome = judges.judge(sc, result.output, _trace(), run_id="r")
        judged[sid] = replace(
            result, judged=outcome.judged, judge_detail=outcome.detail, judge_status=outcome.status
        )
    assert len(fake.calls) == 1  # only "RESDSQL" needed the model
    for sid in ("a", "b", "c"):  # the judge's verdict is the rule's, decided the same way
        assert judged[sid].to_json()["correctness"] == by_rule[sid].to_json()["correctness"]
        assert judged[sid].to_json()["judge"]["correctness"]["decided_by"] in ("miss", "exact match")
    assert judged["d"].to_json()["correctness"]["verdict"] == "hallucination"
    assert judged["d"].to_json()["judge"]["correctness"]["decided_by"] == "judge"


def test_a_judge_that_does_not_apply_leaves_nothing_behind() -> None:
    # the quality judge has no rule step: a scenario with criteria only gets no `judge` field
    sc = scenario(id="q", input="?", expected={"answer": {"criteria": "names DIN-SQL"}})
    result = evaluate(sc, _trace(), judge_status=NOTHING_TO_JUDGE, output="DIN-SQL")
    assert result.judged == {} and result.judge_detail == {}
