"""judge/crag.py and results/summary.py: the rule steps and the run-level CRAG figures."""

from __future__ import annotations

import pytest

from evaluator.config import DEFAULT_MISS_PHRASES
from evaluator.judge import crag_metrics, exact_match, miss_phrase, normalise


def test_normalise_ignores_case_whitespace_and_punctuation() -> None:
    assert normalise("  DIN-SQL,\n  2023! ") == "din sql 2023"
    assert normalise("I Don\u2019t   know.") == "i don t know"


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "Sorry, I DO NOT KNOW the answer",
        "i don\u2019t know",
        "I don't have enough information.",
    ],
)
def test_misses(answer: str) -> None:
    assert miss_phrase(answer, DEFAULT_MISS_PHRASES) is not None


@pytest.mark.parametrize("answer", ["DIN-SQL", "I know: DIN-SQL", "Nobody knows who said 'I don'"])
def test_not_misses(answer: str) -> None:
    assert miss_phrase(answer, DEFAULT_MISS_PHRASES) is None


def test_miss_phrases_are_configurable() -> None:
    assert miss_phrase("No idea, sorry", ["no idea"]) == "no idea"
    assert miss_phrase("I don't know", ["no idea"]) is None


def test_exact_match_after_normalisation() -> None:
    assert exact_match("din-sql.", "DIN-SQL")
    assert not exact_match("DIN-SQL with GPT-4", "DIN-SQL")
    assert not exact_match("", "")


def test_run_level_figures_on_a_worked_example() -> None:
    # 10 answers: 3 exact matches, 2 judged CORRECT, 2 misses, 3 hallucinations
    verdicts = [("correct", True)] * 3 + [("correct", False)] * 2 + [("miss", False)] * 2
    verdicts += [("hallucination", False)] * 3
    figures = crag_metrics(verdicts, unjudged=1)
    assert figures == {
        "total": 10,
        "unjudged": 1,
        "correct_exact": 3,
        "correct": 5,
        "miss": 2,
        "hallucination": 3,
        "exact_match": 0.3,
        "accuracy": 0.5,
        "missing": 0.2,
        "hallucination_rate": 0.3,
        "truthfulness_score": 0.2,  # (2 x 5 + 2) / 10 - 1
    }
    assert crag_metrics([]) is None
