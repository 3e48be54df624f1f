"""Run-level figures drawn from the results' verdicts: each metric's run-level dictionary (the judges':
CRAG's for correctness, the quality means), and what the judges cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evaluator.metrics import MetricSet, Verdict

if TYPE_CHECKING:
    from evaluator.results.model import ScenarioResult

__all__ = ["judge_usage", "run_summaries", "with_turns"]


def run_summaries(results: Sequence[ScenarioResult], metrics: MetricSet) -> dict[str, Any]:
    """Each metric's run-level dictionary by its key (a judge's even when None; another metric's only
    when it has one), in the keys' alphabetical order. A judge's `unjudged`: the results it was asked
    about that got no verdict. Results with an `evaluator_error` enter none (as in `summarize`): a
    dialogue a turn's evaluator error ended keeps its verdicts for the record, not for the run."""
    summaries: dict[str, Any] = {}
    counted = [result for result in results if result.evaluator_error is None]
    for metric in sorted(metrics, key=lambda m: m.key):
        judged = metric.stage == "judge"
        verdicts: list[Verdict] = []
        unjudged = 0
        for result in counted:
            verdict = (result.judged if judged else result.verdicts).get(metric.key)
            if verdict is not None:
                verdicts.append(verdict)
            elif metric.key in result.judge_detail:
                unjudged += 1
        summary = metric.run_summary(verdicts, unjudged)
        if judged or summary is not None:
            summaries[metric.key] = summary
    return summaries


def with_turns(results: Sequence[ScenarioResult]) -> list[ScenarioResult]:
    """The results, each dialogue's followed by its turns' single-turn results (what the judges saw)."""
    found: list[ScenarioResult] = []
    for result in results:
        found.append(result)
        if result.dialogue is not None:
            found += [turn.result for turn in result.dialogue.turns if turn.result is not None]
    return found


def judge_usage(results: Sequence[ScenarioResult]) -> dict[str, int | None]:
    """What the judges did in a run (dialogue turns included): model calls made (repairs and retries
    included), judgements served from the cache, judgements whose endpoint failed, judgements left
    unscored, tokens used (None when calls were made and none reported usage: not measured, not 0; the 0
    tokens of a judgement that made no call, cached or not asked, do not make them measured)."""
    usage = {"calls": 0, "cached": 0, "failed": 0, "unscored": 0, "input_tokens": 0, "output_tokens": 0}
    usage["reported"] = 0  # judgements whose tokens were reported
    for result in with_turns(results):
        for detail in result.judge_detail.values():
            _add_usage(usage, detail)
    reported = usage.pop("reported")
    counted: dict[str, int | None] = dict(usage)
    if not reported and usage["calls"]:
        counted["input_tokens"] = counted["output_tokens"] = None
    return counted


def _add_usage(usage: dict[str, int], detail: Mapping[str, Any]) -> None:
    parts = detail.get("parts")
    if isinstance(parts, Mapping) and parts:  # a judgement made of several: each counts (judge.Judgement)
        for part in parts.values():
            _add_usage(usage, part)
        return
    usage["calls"] += int(detail.get("calls", 0))
    usage["cached"] += bool(detail.get("cached"))
    usage["failed"] += bool(detail.get("failed"))
    usage["unscored"] += detail.get("status") == "unscored"
    tokens = detail.get("tokens") or {}
    usage["reported"] += bool(tokens) and bool(detail.get("calls"))  # not a judgement that asked nothing
    usage["input_tokens"] += int(tokens.get("input", 0))
    usage["output_tokens"] += int(tokens.get("output", 0))
