"""Run-level figures from result objects (the JSON of DESIGN.md, Result object), stored or fresh: the
figures of a `MetricSet` (metrics/metric_set.py; the built-in metrics' by default), and the prompt
versions a result used.

Each figure is declared with its metric (metrics/workflow.py, trajectory.py, judge/quality.py,
correctness.py; `pass_rate`, `latency_ms` and `cost`, the result's own, in metrics/metric_set.py) and
is the mean of its per-result value over the results that have it.

Results with an `evaluator_error` are counted but never enter a figure: the evaluator failed, not the
agent. A judge that did not run gives no quality or correctness value (never a 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.metrics import MetricSet
from evaluator.results.builtin import default_metrics

__all__ = ["agent_prompts", "judge_prompts", "scenario_values", "summarize"]


def scenario_values(result: Mapping[str, Any], metrics: MetricSet | None = None) -> dict[str, float]:
    """The per-scenario value of every figure this result has."""
    return (metrics or default_metrics()).scenario_values(result)


def summarize(results: Iterable[Mapping[str, Any]], metrics: MetricSet | None = None) -> dict[str, Any]:
    """Counts, then every figure's mean (None when no result has it) and how many results it rests on
    (`n`: {figure: count})."""
    return (metrics or default_metrics()).summarize(results)


def judge_prompts(result: Mapping[str, Any], metrics: MetricSet | None = None) -> list[tuple[str, int]]:
    """(name, version) of each judge prompt a result was judged with."""
    return (metrics or default_metrics()).judge_prompts(result)


def agent_prompts(result: Mapping[str, Any]) -> list[tuple[str, int, str]]:
    """(name, version, source) of each agent prompt a result's run used."""
    prompts = result.get("prompts")
    if not isinstance(prompts, Mapping):
        return []
    return [
        (str(name), use["version"], str(use.get("source") or "unknown"))
        for name, use in sorted(prompts.items())
        if isinstance(use, Mapping) and isinstance(use.get("version"), int)
    ]
