"""CRAG's multi-turn rules (seed crag-llm-judge-evaluator.md, "Multi-Turn Conversation Scoring" and
"Scores Dictionary"), on the turns of a conversation that have a correctness verdict.

The two-errors rule: after two consecutive answers that are not correct (missed or wrong, in any mix),
every later turn counts as missed (not correct, not an exact match), whatever its own verdict; the two
turns themselves keep theirs. The rule fires once per conversation.

multi_turn_conversation_score = mean(correct) - mean(hallucination) over the conversation's turns after
the rule, in -1..1.

Turns without a verdict (no ground truth, or a judge that could not score) are left out before the rule
runs: they neither extend nor break a run of errors.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.metrics.dialogue._values import CragTurn

__all__ = ["CRAG_SCORE_LABELS", "apply_two_errors_rule", "conversation_score", "crag_scores"]

CRAG_SCORE_LABELS: tuple[tuple[str, str], ...] = (
    ("total", "turns"),
    ("correct", "correct"),
    ("correct_exact", "exact"),
    ("miss", "miss"),
    ("hallucination", "halluc."),
    ("accuracy", "accuracy"),
    ("exact_match", "exact match"),
    ("missing", "missing"),
    ("hallucination_rate", "halluc. rate"),
    ("truthfulness_score", "truthfulness"),
    ("mean_multi_turn_conversation_score", "multi-turn score"),
)
"""Each key of `crag_scores`' dictionary, with its short label for a table's column."""

_MISSED = CragTurn(verdict="miss")


def apply_two_errors_rule(turns: Sequence[CragTurn]) -> tuple[CragTurn, ...]:
    """The conversation's verdicts in order, every turn after the second of two consecutive
    not-correct answers made a miss."""
    for index in range(1, len(turns)):
        if turns[index - 1].verdict != "correct" and turns[index].verdict != "correct":
            return (*turns[: index + 1], *(_MISSED for _ in turns[index + 1 :]))
    return tuple(turns)


def conversation_score(turns: Sequence[CragTurn]) -> float | None:
    """mean(correct) - mean(hallucination) over the turns after the two-errors rule; None with no turn."""
    ruled = apply_two_errors_rule(turns)
    if not ruled:
        return None
    correct = sum(turn.verdict == "correct" for turn in ruled)
    hallucinated = sum(turn.verdict == "hallucination" for turn in ruled)
    return (correct - hallucinated) / len(ruled)


def crag_scores(conversations: Sequence[Sequence[CragTurn]]) -> dict[str, float | int] | None:
    """The seed's scores dictionary over every turn of every conversation, after the two-errors rule
    (as the seed's evaluator computes it):

        total          N turns with a verdict
        correct_exact  exact matches;  exact_match = correct_exact / N
        correct        correct turns;  accuracy = correct / N
        miss           missed turns;   missing = miss / N
        hallucination  N - correct - miss;  hallucination_rate = hallucination / N
        truthfulness_score  (2 x correct + miss) / N - 1
        mean_multi_turn_conversation_score  mean over the conversations with a verdict

    None when no turn has a verdict. Figures are not rounded."""
    ruled = [apply_two_errors_rule(turns) for turns in conversations if turns]
    flat = [turn for turns in ruled for turn in turns]
    if not flat:
        return None
    total = len(flat)
    correct = sum(turn.verdict == "correct" for turn in flat)
    miss = sum(turn.verdict == "miss" for turn in flat)
    exact = sum(turn.exact_match for turn in flat if turn.verdict == "correct")
    scores = [score for turns in ruled if (score := conversation_score(turns)) is not None]
    return {
        "total": total,
        "correct_exact": exact,
        "correct": correct,
        "miss": miss,
        "hallucination": total - correct - miss,
        "exact_match": exact / total,
        "accuracy": correct / total,
        "missing": miss / total,
        "hallucination_rate": (total - correct - miss) / total,
        "truthfulness_score": (2 * correct + miss) / total - 1,
        "mean_multi_turn_conversation_score": sum(scores) / len(scores),
    }
