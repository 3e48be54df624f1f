"""Run-level metrics, computed from result objects (the JSON of DESIGN.md, Result object), stored or fresh.

Every figure is the mean of a per-scenario value over the results that have it, so a run, a prompt
version, a scenario's history and a pair of runs are all summarised the same way:

    pass_rate                 1 when the scenario passed, else 0 (an `error` result counts as 0)
    workflow_pass_rate        1 when the workflow verdict passed, else 0 (an `error` result counts as 0)
    trajectory_<mode>         the trajectory's mode value, for scenarios with a trajectory
    quality_<dimension>       the quality judge's score, for judged results (`quality_mean`: their mean)
    correctness_accuracy      1 when the correctness verdict is `correct`   (results with a verdict)
    correctness_hallucination_rate / correctness_missing_rate   likewise for `hallucination` / `miss`
    correctness_truthfulness  +1 correct, 0 miss, -1 hallucination; its mean is (2*correct + miss)/n - 1
    latency_ms, cost          as stored (cost only when a result carries one)

Results with an `evaluator_error` are counted but never enter a figure: the evaluator failed, not the
agent. A judge that did not run gives no quality or correctness value (never a 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evaluator.metrics import METRICS

__all__ = [
    "FIGURES",
    "QUALITY_DIMENSIONS",
    "RATE_FIGURES",
    "agent_prompts",
    "judge_models",
    "judge_prompts",
    "scenario_values",
    "summarize",
]

QUALITY_DIMENSIONS = ("answer_quality", "factual_correctness", "completeness")
_VERDICT_FIGURES = {
    "correctness_accuracy": {"correct": 1.0},
    "correctness_hallucination_rate": {"hallucination": 1.0},
    "correctness_missing_rate": {"miss": 1.0},
    "correctness_truthfulness": {"correct": 1.0, "miss": 0.0, "hallucination": -1.0},
}
# Figures of the metric registry: "trajectory_full_workflow" -> ("trajectory", "full_workflow").
METRIC_FIGURES: dict[str, tuple[str, ...]] = {
    f"{metric.key}_{name}": (metric.key, *path) for metric in METRICS for name, path in metric.figures.items()
}
FIGURES: tuple[str, ...] = (
    "pass_rate",
    "workflow_pass_rate",
    *METRIC_FIGURES,
    *(f"quality_{d}" for d in QUALITY_DIMENSIONS),
    "quality_mean",
    *_VERDICT_FIGURES,
    "latency_ms",
    "cost",
)
RATE_FIGURES = frozenset(
    {"pass_rate", "workflow_pass_rate", *METRIC_FIGURES, *_VERDICT_FIGURES} - {"correctness_truthfulness"}
)


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None  # JSON numbers; not bool


def _at(document: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = document
    for part in path:
        # dict first: documents are JSON objects, and the Mapping check alone is several times slower
        value = value.get(part) if isinstance(value, (dict, Mapping)) else None
    return value


def _quality_values(quality: Any) -> dict[str, float]:
    if not isinstance(quality, Mapping):
        return {}
    values = {f"quality_{d}": v for d in QUALITY_DIMENSIONS if (v := _number(quality.get(d))) is not None}
    if values:
        values["quality_mean"] = sum(values.values()) / len(values)
    return values


def _correctness_values(correctness: Any) -> dict[str, float]:
    verdict = correctness.get("verdict") if isinstance(correctness, Mapping) else None
    if verdict not in ("correct", "miss", "hallucination"):
        return {}
    return {name: weights.get(verdict, 0.0) for name, weights in _VERDICT_FIGURES.items()}


def scenario_values(result: Mapping[str, Any]) -> dict[str, float]:
    """The per-scenario value of every figure this result has (see the module docstring)."""
    if result.get("evaluator_error"):
        return {}
    status = result.get("status")
    workflow_pass = _at(result, ("workflow", "pass"))
    values: dict[str, float] = {
        "pass_rate": 1.0 if status == "passed" else 0.0,
        "workflow_pass_rate": 1.0 if status != "error" and workflow_pass is True else 0.0,
    }
    for name, path in METRIC_FIGURES.items():
        if (value := _number(_at(result, path))) is not None:
            values[name] = value
    values |= _quality_values(result.get("quality"))
    values |= _correctness_values(result.get("correctness"))
    for name, key in (("latency_ms", "latency_ms"), ("cost", "cost")):
        if (value := _number(result.get(key))) is not None:
            values[name] = value
    return values


def summarize(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts, then every figure's mean (None when no result has it) and how many results it rests on
    (`n`: {figure: count})."""
    counts = {"scenarios": 0, "passed": 0, "failed": 0, "errors": 0, "evaluator_errors": 0}
    unscored = 0
    sums: dict[str, list[float]] = {}
    for result in results:
        counts["scenarios"] += 1
        status = result.get("status")
        counts["passed"] += status == "passed"
        counts["failed"] += status == "failed"
        counts["errors"] += status == "error"
        counts["evaluator_errors"] += bool(result.get("evaluator_error"))
        unscored += _at(result, ("judge_status", "status")) == "unscored"
        for name, value in scenario_values(result).items():
            sums.setdefault(name, []).append(value)
    means = {name: round(sum(v) / len(v), 4) if (v := sums.get(name)) else None for name in FIGURES}
    return {
        **counts,
        "judge_unscored": unscored,
        **means,
        "n": {name: len(sums.get(name, [])) for name in FIGURES},
    }


def judge_prompts(result: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(name, version) of each judge prompt a result was judged with (quality, correctness)."""
    found = []
    for key in ("quality", "correctness"):
        prompt = _at(result, (key, "prompt"))
        if isinstance(prompt, Mapping) and isinstance(prompt.get("name"), str):
            version = prompt.get("version")
            if isinstance(version, int) and (prompt["name"], version) not in found:
                found.append((prompt["name"], version))
    return found


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


def judge_models(result: Mapping[str, Any]) -> list[str]:
    return [m for key in ("quality", "correctness") if isinstance(m := _at(result, (key, "model")), str)]
