"""CRAG turn data scored offline (`validate --turns`; seed crag-llm-judge-evaluator.md): the seed's
JSONL records, decided in the seed's order (a miss, an exact match, then the semantic step only with a
judge), the two-errors rule per conversation, and the scores dictionary for `all` and `ego`.

The expected figures are worked out by hand on examples/crag/turn_data.jsonl (11 turns, 3
conversations; the README shows the same file):

    car-1   (ego)      red/"Red" exact | "I don't know." miss | "I do not know" miss
    city-2  t0,t1 ego  Paris/"Lyon, I believe" needs the judge | 20/"20" exact | miss | Seine/"seine" exact
    tower-3 (not ego)  miss | miss | "Gustave Eiffel" exact | 330 metres/"About 330 metres tall" judge

Without a judge the two undecided turns are left out (not measured):
    car-1   [C, M, M]        the rule fires on turn 2, nothing after it        score (1 - 0) / 3 = 1/3
    city-2  [C, M, C]        no two not-correct in a row                       score 2/3
    tower-3 [M, M, C->M]     the rule fires on turn 1: turn 2 counts as missed score 0
    all: 9 turns, 3 correct (3 exact), 6 missed, 0 hallucinated; truthfulness (2*3 + 6)/9 - 1 = 1/3;
         mean conversation score (1/3 + 2/3 + 0)/3 = 1/3; 2 not decided
    ego (the ego turns alone, as the seed's evaluator computes it): car-1 [C, M, M] 1/3, city-2 [C] 1;
         4 turns, 2 correct, 2 missed; truthfulness (4 + 2)/4 - 1 = 0.5; mean (1/3 + 1)/2 = 2/3; 1 not decided
With a judge saying WRONG to Lyon and CORRECT to 330 metres:
    city-2  [H, C, M, C]     no rule                                           score (2 - 1)/4 = 1/4
    tower-3 [M, M, C->M, C->M]                                                  score 0
    all: 11 turns, 3 correct (3 exact), 7 missed, 1 hallucinated; truthfulness (6 + 7)/11 - 1 = 2/11;
         mean (1/3 + 1/4 + 0)/3 = 7/36
    ego: car-1 1/3, city-2 [H, C] 0; 5 turns, 2 correct, 2 missed, 1 hallucinated; truthfulness 0.2;
         mean 1/6
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.config import Config, Settings, StoreConfig
from evaluator.errors import InputError
from evaluator.judge import FakeJudgeModel
from evaluator.run import load_turn_data, score_turn_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/crag/turn_data.jsonl"
WRONG = '{"verdict": "WRONG", "reason": "another city"}'
CORRECT = '{"verdict": "CORRECT", "reason": "the same height"}'


def _config(tmp_path: Path) -> Config:
    return Config(
        settings=Settings(store=StoreConfig(path=tmp_path / "evaluator.db")), base_dir=ROOT, source=None
    )


def _expected(**figures: float) -> dict[str, float]:
    return {key: pytest.approx(value) for key, value in figures.items()}  # type: ignore[misc]


def test_the_example_without_a_judge_decides_misses_and_exact_matches_only(tmp_path: Path) -> None:
    records = load_turn_data(EXAMPLE)
    assert len(records) == 11 and records[0].query == "What color is this car?"
    scored = score_turn_data(_config(tmp_path), records, no_judge=True)
    assert scored.scores["all"] == _expected(
        total=9,
        correct_exact=3,
        correct=3,
        miss=6,
        hallucination=0,
        exact_match=3 / 9,
        accuracy=3 / 9,
        missing=6 / 9,
        hallucination_rate=0.0,
        truthfulness_score=1 / 3,
        mean_multi_turn_conversation_score=1 / 3,
        unjudged=2,
    )
    assert scored.scores["ego"] == _expected(
        total=4,
        correct_exact=2,
        correct=2,
        miss=2,
        hallucination=0,
        exact_match=0.5,
        accuracy=0.5,
        missing=0.5,
        hallucination_rate=0.0,
        truthfulness_score=0.5,
        mean_multi_turn_conversation_score=2 / 3,
        unjudged=1,
    )
    undecided = [(t.record.session_id, t.record.turn_idx, t.record.line) for t in scored.undecided]
    assert undecided == [("city-2", 0, 4), ("tower-3", 3, 11)]
    assert "--no-judge was given" in scored.undecided[0].reason
    document = scored.to_json()
    assert set(document) == {"all", "ego", "undecided"}
    assert (
        document["undecided"][1]["interaction_id"] == "c3-3" and document["undecided"][1]["verdict"] is None
    )


def test_without_an_endpoint_the_turns_wait_for_the_semantic_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "EVALUATOR_JUDGE_BASE_URL", "EVALUATOR_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    notes: list[tuple[str, str]] = []
    scored = score_turn_data(
        _config(tmp_path), load_turn_data(EXAMPLE), notice=lambda k, m: notes.append((k, m))
    )
    assert scored.scores["all"]["unjudged"] == 2 and scored.scores["all"]["total"] == 9
    assert scored.judge_status is not None and "no judge endpoint" in scored.judge_status.reason
    assert [kind for kind, _ in notes] == ["note"]  # how to enable the judge, once


def test_the_judge_decides_the_rest(tmp_path: Path) -> None:
    model = FakeJudgeModel([WRONG, CORRECT])
    scored = score_turn_data(_config(tmp_path), load_turn_data(EXAMPLE), model=model, run_id="r")
    assert len(model.calls) == 2  # only the two turns the rules could not decide
    assert "Lyon, I believe" in model.calls[0].messages[-1].content
    assert scored.scores["all"] == _expected(
        total=11,
        correct_exact=3,
        correct=3,
        miss=7,
        hallucination=1,
        exact_match=3 / 11,
        accuracy=3 / 11,
        missing=7 / 11,
        hallucination_rate=1 / 11,
        truthfulness_score=2 / 11,
        mean_multi_turn_conversation_score=7 / 36,
        unjudged=0,
    )
    assert scored.scores["ego"] == _expected(
        total=5,
        correct_exact=2,
        correct=2,
        miss=2,
        hallucination=1,
        exact_match=0.4,
        accuracy=0.4,
        missing=0.4,
        hallucination_rate=0.2,
        truthfulness_score=0.2,
        mean_multi_turn_conversation_score=1 / 6,
        unjudged=0,
    )
    decided = {(t.record.session_id, t.record.turn_idx): t.decided_by for t in scored.turns}
    assert decided[("city-2", 0)] == "judge" and decided[("car-1", 0)] == "exact match"
    assert decided[("car-1", 1)] == "miss" and scored.undecided == ()


def test_a_turn_the_judge_cannot_score_is_not_measured(tmp_path: Path) -> None:
    model = FakeJudgeModel(default="no JSON here, ever")
    scored = score_turn_data(_config(tmp_path), load_turn_data(EXAMPLE), model=model, run_id="r")
    assert [t.record.interaction_id for t in scored.undecided] == ["c2-0", "c3-3"]
    assert scored.undecided[0].reason.startswith("not judged: ")
    assert scored.scores["all"]["total"] == 9 and scored.scores["all"]["unjudged"] == 2


def test_malformed_lines_are_named_by_file_line_and_field(tmp_path: Path) -> None:
    good = {
        "session_id": "s",
        "turn_idx": 0,
        "is_ego": False,
        "query": "q",
        "ground_truth": "a",
        "agent_response": "a",
    }
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({k: v for k, v in good.items() if k != "agent_response"} | {"turn_idx": 1}),
        json.dumps(good | {"turn_idx": "first", "is_ego": "yes"}),
        "",
        json.dumps(good),
        "[1, 2]",
    ]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        load_turn_data(path)
    problems = [str(p) for p in info.value.problems]
    assert problems[0].startswith(f"{path}:2: not JSON")
    assert problems[1] == (
        f"{path}:3: agent_response: missing. Fix: give each line as the seed's turn data: an object with "
        "session_id, turn_idx, is_ego, query, ground_truth and agent_response"
    )
    assert problems[2].startswith(f"{path}:4: turn_idx: 'first' is not a turn index. Fix: give the turn's")
    assert problems[3].startswith(f"{path}:4: is_ego: 'yes' is not true or false")
    assert problems[4].startswith(f"{path}:6: turn_idx: session s has turn 0 already (line 1)")
    assert problems[5].startswith(f"{path}:7: a list, not an object")
    assert len(problems) == 6


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(InputError, match="no turn in the file"):
        load_turn_data(path)


def test_a_line_nested_too_deeply_is_a_problem_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InputError, match=r"deep.jsonl:1: not JSON \(maximum recursion depth"):
        load_turn_data(path)
