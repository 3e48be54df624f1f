"""The LLM judges on dialogue turns (DESIGN.md, "Dialogues"; seed dialogue-metrics-mas4cs.md, metric 11):
every turn judged as a single-turn scenario is, through the run's judge stage (its bound, Ctrl-C), the
quality judge with the conversation so far, the correctness judge on a turn with a ground truth; the
dialogue's `response_*` figures are the means over the turns the judge scored, the run's the mean of
the dialogue means."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evaluator.judge import TURN_CRITERIA, FakeJudgeModel, Judges, ModelCall, RetryPolicy
from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.results import default_metrics, scores_for
from evaluator.run import Pipeline, RunOptions, SuiteOptions, run_suite
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Store
from tests.integration import dialogue_targets
from tests.integration.toy_targets import Gauge

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
CONFIG = """\
[run]
timeout_seconds = 20
[store]
path = "state/evaluator.db"
"""

BOOKING: list[dict[str, Any]] = [
    {"user": "A hotel for 2 people on Saturday", "expected": {"intent": "book_hotel"}},
    {
        "user": "The Acorn, 3 nights",
        "expected": {"intent": "book_hotel", "answer": {"criteria": "asks only for what is still missing"}},
    },
    {
        "user": "Book it",
        "expected": {
            "action": "book",
            "answer": {"ground_truth": "Your room at the Acorn Guest House is booked."},
        },
    },
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evaluator.toml").write_text(CONFIG + f'[prompts]\ndir = "{PROMPTS}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    for name in ("EVALUATOR_JUDGE_BASE_URL", "EVALUATOR_JUDGE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    dialogue_targets.calls.clear()
    return tmp_path


def _dialogue(sid: str, turns: list[dict[str, Any]]) -> Scenario:
    return Scenario.model_validate({"id": sid, "target": "plain", "turns": turns})


def _quality(answer: float, factual: float, complete: float) -> str:
    return json.dumps(
        {"answer_quality": answer, "factual_correctness": factual, "completeness": complete, "reasoning": "r"}
    )


def _block(call: ModelCall, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", call.messages[-1].content, re.DOTALL)
    return found.group(1) if found else ""


def _user_message(call: ModelCall) -> str:
    return next(m.content for m in call.messages if m.role == "user")


def _by_turn(replies: dict[str, str], correctness: str = "") -> Any:
    """A judge that answers by the turn's user message (the turns of a dialogue are judged as they come
    back, so their order among the judge calls is not fixed); a correctness request gets `correctness`."""

    def reply(call: ModelCall) -> str:
        text = _user_message(call)
        if "<ground_truth>" in text:
            return correctness
        asked = re.search(r"<input>\n(.*?)\n</input>", text, re.DOTALL)
        return replies[asked.group(1) if asked else ""]

    return reply


def test_every_turn_is_judged_with_the_conversation_so_far(project: Path) -> None:
    """Worked out by hand: turn 0 scores (0.8, 1.0, 0.6), turn 1 (0.6, 0.5, 1.0), turn 2's reply is not
    JSON, not even after the repair request: unscored. The dialogue's means are over turns 0 and 1:
    response_quality (0.8 + 0.6) / 2 = 0.7, factual correctness (1.0 + 0.5) / 2 = 0.75, completeness
    (0.6 + 1.0) / 2 = 0.8. A second dialogue of one turn scores 0.4 / 0.4 / 0.4: the run's response
    quality is the mean of the dialogue means, (0.7 + 0.4) / 2 = 0.55 (over the turns it would be
    (0.8 + 0.6 + 0.4) / 3 = 0.6). Turn 2's ground truth is not its reply word for word: the semantic
    step asks the correctness prompt, CORRECT."""
    model = FakeJudgeModel(
        default=_by_turn(
            {
                "A hotel for 2 people on Saturday": _quality(0.8, 1.0, 0.6),
                "The Acorn, 3 nights": _quality(0.6, 0.5, 1.0),
                "Book it": "I would rather not say.",
                "A hotel for 1 people on Monday": _quality(0.4, 0.4, 0.4),
            },
            correctness='{"verdict": "CORRECT", "reason": "the same booking"}',
        )
    )
    output = project / "out.json"
    suite = run_suite(
        scenarios=[
            _dialogue("judged", BOOKING),
            _dialogue("short", [{"user": "A hotel for 1 people on Monday"}]),
        ],
        options=SuiteOptions(judge_model=model, output=output),
        targets={"plain": dialogue_targets.plain},
    )
    document = json.loads(output.read_text())
    judged = document["results"][0]
    turns = judged["turns"]
    assert [t["status"] for t in turns] == ["passed", "passed", "passed"]  # a judge never fails a turn
    assert [t["quality"] and t["quality"]["answer_quality"] for t in turns] == [0.8, 0.6, None]
    assert turns[0]["quality"]["prompt"] == {"name": "evaluation/turn_quality", "version": 1}
    assert [t["judge_status"]["status"] for t in turns] == ["scored", "scored", "unscored"]
    assert turns[2]["judge_status"]["reason"].startswith("quality: the judge's reply was not valid")
    assert turns[2]["correctness"]["verdict"] == "correct"
    assert turns[0]["correctness"] is None  # no ground truth: no correctness judge
    figures = judged["dialogue"]
    assert figures["response_quality"] == pytest.approx(0.7)
    assert figures["response_factual_correctness"] == pytest.approx(0.75)
    assert figures["response_completeness"] == pytest.approx(0.8)
    assert figures["multi_turn_conversation_score"] == 1.0  # one CRAG verdict, correct
    assert judged["judge_status"]["status"] == "unscored"
    assert judged["judge_status"]["reason"].startswith("turn 2: quality:")
    run = document["run"]["dialogue"]
    assert run["response_quality"] == pytest.approx(0.55)
    assert run["response_completeness"] == pytest.approx((0.8 + 0.4) / 2)
    assert document["run"]["metrics"]["dialogue_response_quality"] == pytest.approx(0.55)
    assert document["run"]["judge"]["calls"] == len(model.calls)

    # what the judge was shown: the turn prompt, the conversation before the turn, the criteria
    quality_calls = [c for c in model.calls if "<ground_truth>" not in _user_message(c)]
    by_input = {_block(c, "input"): c for c in quality_calls if len(c.messages) == 2}
    first, second = by_input["A hotel for 2 people on Saturday"], by_input["The Acorn, 3 nights"]
    assert "one turn of a conversation" in first.messages[0].content
    assert _block(first, "history") == "(none)"
    assert _block(first, "criteria") == TURN_CRITERIA  # the seed's rubric when the turn gives none
    assert _block(second, "criteria") == "asks only for what is still missing"
    assert _block(second, "history") == (
        '<message role="user">\nA hotel for 2 people on Saturday\n</message>\n'
        '<message role="assistant">\nHow many nights?\n</message>'
    )

    # the scores: the judges' on each turn's trace, the dialogue means on the session
    [result] = [r for r in suite.results if r.scenario_id == "judged"]
    scores = scores_for(result, run_id=suite.run.id)
    session = {s.name: s.value for s in scores if s.session_id is not None}
    assert session["dialogue_response_quality"] == pytest.approx(0.7)
    on_turns = {(s.trace_id, s.name) for s in scores if s.session_id is None}
    assert (turns[0]["trace_id"], "quality_answer_quality") in on_turns
    assert (turns[2]["trace_id"], "correctness") in on_turns
    assert (turns[2]["trace_id"], "quality_answer_quality") not in on_turns  # unscored: no score


def test_no_judge_skips_the_turns_with_the_reason(project: Path) -> None:
    output = project / "out.json"
    run_suite(
        scenarios=[_dialogue("unjudged", BOOKING)],
        options=SuiteOptions(no_judge=True, output=output),
        targets={"plain": dialogue_targets.plain},
    )
    document = json.loads(output.read_text())
    [result] = document["results"]
    assert {json.dumps(t["judge_status"]) for t in result["turns"]} == {
        json.dumps({"status": "skipped", "reason": "--no-judge was given"})
    }
    assert all(t["quality"] is None and t["correctness"] is None for t in result["turns"])
    assert result["dialogue"]["response_quality"] is None  # not measured, never 0
    assert document["run"]["dialogue"]["response_quality"] is None


def test_without_an_endpoint_the_turns_say_how_to_judge_them(project: Path) -> None:
    suite = run_suite(
        scenarios=[_dialogue("unjudged", BOOKING[:1])], targets={"plain": dialogue_targets.plain}
    )
    [result] = suite.results
    assert result.dialogue is not None and result.dialogue.turns[0].result is not None
    assert "no judge endpoint is configured" in result.dialogue.turns[0].result.judge_status.reason


def test_the_judge_bound_holds_across_dialogue_turns(project: Path) -> None:
    """4 dialogues of 3 turns at once, 2 judgements at a time at most: every turn judged."""
    gauge = Gauge()

    def reply(call: ModelCall) -> str:
        if "<ground_truth>" in _user_message(call):
            return '{"verdict": "CORRECT", "reason": "same"}'
        with gauge:
            time.sleep(0.05)  # hold the slot a moment, so that calls overlap if the bound lets them
        return _quality(1.0, 1.0, 1.0)

    suite = run_suite(
        scenarios=[_dialogue(f"d{i}", BOOKING) for i in range(4)],
        options=SuiteOptions(judge_model=FakeJudgeModel(default=reply), concurrency=4, judge_concurrency=2),
        targets={"plain": dialogue_targets.plain},
    )
    assert 1 <= gauge.peak <= 2
    turns = [t for r in suite.results for t in r.to_json()["turns"]]
    assert len(turns) == 12 and {t["judge_status"]["status"] for t in turns} == {"scored"}
    assert {r.to_json()["dialogue"]["response_quality"] for r in suite.results} == {1.0}


def test_ctrl_c_while_a_turn_is_judged_records_the_dialogue_at_once(project: Path) -> None:
    """Turn 0's verdict is back; the judge hangs on turn 1 (turn 2 waits for the slot), then Ctrl-C:
    the dialogue is recorded at once with its three turns, turn 0 judged, turns 1 and 2 unjudged."""
    release, stop = threading.Event(), threading.Event()

    def reply(call: ModelCall) -> str:
        if _block(call, "input") == "A hotel for 2 people on Saturday":
            return _quality(0.5, 0.5, 0.5)
        threading.Timer(0.3, stop.set).start()
        release.wait(60)
        return _quality(1.0, 1.0, 1.0)

    turns = [
        {"user": "A hotel for 2 people on Saturday"},
        {"user": "The Acorn, 3 nights"},
        {"user": "Book it"},
    ]
    judges = Judges(model=FakeJudgeModel(default=reply), prompts=PromptLibrary(PROMPTS), retry=RetryPolicy())
    tracing, store = Tracing.embedded(), Store(None)
    pipeline = Pipeline(
        tracer=tracing,
        targets={"plain": dialogue_targets.plain},
        prompts=PromptLibrary(PROMPTS),
        recorder=store,
        judges=judges,
    )
    started = time.monotonic()
    try:
        run, results = pipeline.run(
            [LoadedScenario(scenario=_dialogue("interrupted", turns), path=Path("x.yaml"))],
            RunOptions(judge_concurrency=1),
            stop=stop,
        )
    finally:
        release.set()
        tracing.shutdown()
    assert time.monotonic() - started < 10  # not the judge's 60 s
    assert run.interrupted
    [result] = results
    document = result.to_json()
    assert [t["status"] for t in document["turns"]] == ["passed", "passed", "passed"]
    assert [t["judge_status"]["status"] for t in document["turns"]] == ["scored", "skipped", "skipped"]
    assert document["turns"][1]["judge_status"]["reason"] == "the run was interrupted before the judges ran"
    assert document["dialogue"]["response_quality"] == 0.5  # the one turn judged
    assert [r["scenario_id"] for r in store.results(run.id)] == ["interrupted"]


def test_a_crashing_judge_leaves_the_turns_standing(project: Path) -> None:
    def crash(call: ModelCall) -> str:
        raise KeyError("bug in a judge")

    suite = run_suite(
        scenarios=[_dialogue("crashing", BOOKING[:2])],
        options=SuiteOptions(judge_model=FakeJudgeModel(default=crash)),
        targets={"plain": dialogue_targets.plain},
    )
    [result] = suite.results
    assert result.status == "passed"
    document = result.to_json()
    assert [t["judge_status"]["status"] for t in document["turns"]] == ["unscored", "unscored"]
    assert document["turns"][0]["judge_status"]["reason"].startswith(
        "evaluator error in the judges: KeyError"
    )
    assert document["dialogue"]["response_quality"] is None


def test_a_dialogue_run_names_the_judge_prompts_and_model_its_turns_used(project: Path) -> None:
    """The turns' judgements are the dialogue's: the run lists their prompt versions and model, and
    `report` groups the dialogue under each judge prompt version (the helper's outside-in check found
    `judge_prompts: []` and no per-judge-prompt row for a judged dialogue run)."""
    model = FakeJudgeModel(
        default=_by_turn(
            {
                "A hotel for 2 people on Saturday": _quality(0.8, 1.0, 0.6),
                "The Acorn, 3 nights": _quality(0.6, 0.5, 1.0),
                "Book it": _quality(1.0, 1.0, 1.0),
            },
            correctness='{"verdict": "CORRECT", "reason": "the same booking"}',
        )
    )
    output = project / "out.json"
    run_suite(
        scenarios=[_dialogue("judged", BOOKING)],
        options=SuiteOptions(judge_model=model, output=output),
        targets={"plain": dialogue_targets.plain},
    )
    run = json.loads(output.read_text())["run"]
    assert run["judge_prompts"] == [
        {"name": "evaluation/correctness", "version": 1},
        {"name": "evaluation/turn_quality", "version": 1},
    ]
    [result] = json.loads(output.read_text())["results"]
    assert run["models"]["judge"] == result["turns"][0]["quality"]["model"]
    assert default_metrics().judge_prompts(result) == [
        ("evaluation/turn_quality", 1),
        ("evaluation/correctness", 1),
    ]  # in turn order: turn 0 has no ground truth, so no correctness judge
