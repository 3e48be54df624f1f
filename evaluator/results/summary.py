"""Run-level figures drawn from the results: the CRAG metrics of the correctness verdicts, the mean
quality scores, and what the judges cost.

CRAG (seed crag-llm-judge-evaluator.md), over the results that have a correctness verdict:

    total          N results with a verdict (correct, miss or hallucination)
    exact_match    correct_exact / N           (correct by exact match, no LLM call)
    accuracy       correct / N                 (exact or judged CORRECT)
    missing        miss / N                    ("I don't know" and its variants)
    hallucination_rate  hallucination / N      (hallucination = N - correct - miss)
    truthfulness_score  (2 x correct + miss) / N - 1

`unjudged` counts the results with a ground truth but no verdict (the judge was skipped or could not
score), which the rates leave out. With no verdict at all, the correctness figures are None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evaluator.results.figures import QUALITY_DIMENSIONS

if TYPE_CHECKING:
    from evaluator.results.model import ScenarioResult

__all__ = ["correctness_metrics", "crag_metrics", "judge_usage", "quality_means", "run_metrics"]


def crag_metrics(verdicts: Sequence[tuple[str, bool]], *, unjudged: int = 0) -> dict[str, Any] | None:
    """The CRAG figures of (verdict, exact match) pairs; None when there are none."""
    total = len(verdicts)
    if total == 0:
        return None
    correct = sum(verdict == "correct" for verdict, _ in verdicts)
    miss = sum(verdict == "miss" for verdict, _ in verdicts)
    exact = sum(exact for verdict, exact in verdicts if verdict == "correct")
    hallucination = total - correct - miss
    return {
        "total": total,
        "unjudged": unjudged,
        "correct_exact": exact,
        "correct": correct,
        "miss": miss,
        "hallucination": hallucination,
        "exact_match": round(exact / total, 4),
        "accuracy": round(correct / total, 4),
        "missing": round(miss / total, 4),
        "hallucination_rate": round(hallucination / total, 4),
        "truthfulness_score": round((2 * correct + miss) / total - 1, 4),
    }


def correctness_metrics(results: Sequence[ScenarioResult]) -> dict[str, Any] | None:
    pairs: list[tuple[str, bool]] = []
    unjudged = 0
    for result in results:
        verdict = result.judged.get("correctness")
        if verdict is not None:
            document = verdict.to_json()
            pairs.append((str(document["verdict"]), bool(document["exact_match"])))
        elif "correctness" in result.judge_detail:
            unjudged += 1
    return crag_metrics(pairs, unjudged=unjudged)


def quality_means(results: Sequence[ScenarioResult]) -> dict[str, Any] | None:
    """The mean of each quality score over the results the quality judge scored; None: none."""
    scored = [v.to_json() for r in results if (v := r.judged.get("quality")) is not None]
    if not scored:
        return None
    means: dict[str, Any] = {"scored": len(scored)}
    for name in QUALITY_DIMENSIONS:
        means[name] = round(sum(float(doc[name]) for doc in scored) / len(scored), 4)
    return means


def run_metrics(results: Sequence[ScenarioResult]) -> dict[str, Any]:
    return {"correctness": correctness_metrics(results), "quality": quality_means(results)}


def judge_usage(results: Sequence[ScenarioResult]) -> dict[str, int]:
    """What the judges did in a run: model calls made (repairs and retries included), judgements
    served from the cache, judgements whose endpoint failed, judgements left unscored, tokens used."""
    usage = {"calls": 0, "cached": 0, "failed": 0, "unscored": 0, "input_tokens": 0, "output_tokens": 0}
    for result in results:
        for detail in result.judge_detail.values():
            _add_usage(usage, detail)
    return usage


def _add_usage(usage: dict[str, int], detail: Mapping[str, Any]) -> None:
    usage["calls"] += int(detail.get("calls", 0))
    usage["cached"] += bool(detail.get("cached"))
    usage["failed"] += bool(detail.get("failed"))
    usage["unscored"] += detail.get("status") == "unscored"
    tokens = detail.get("tokens") or {}
    usage["input_tokens"] += int(tokens.get("input", 0))
    usage["output_tokens"] += int(tokens.get("output", 0))
