"""Aggregates over the local store, for `evaluator report`: per run, per scenario, per prompt version.

Rates count finished verdicts only: an `error` result counts as not passed. Each metric's figures (the
trajectory's `full_workflow`, ...) are means over the results that had that verdict (None when none had).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.metrics import METRICS

Grouping = Literal["run", "scenario", "prompt"]
FIGURES: dict[str, tuple[str, ...]] = {
    name: (metric.key, *path) for metric in METRICS for name, path in metric.figures.items()
}


def _figure(result: Mapping[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = result
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class Row:
    key: str
    results: int = 0
    passed: int = 0
    errors: int = 0
    figures: dict[str, list[float]] = field(default_factory=dict)
    last_status: str = ""
    first_seen: str = ""

    def add(self, result: Mapping[str, Any], finished_at: str) -> None:
        self.results += 1
        self.passed += result.get("status") == "passed"
        self.errors += result.get("status") == "error"
        for name, path in FIGURES.items():
            value = _figure(result, path)
            if value is not None:
                self.figures.setdefault(name, []).append(value)
        self.last_status = str(result.get("status", ""))
        self.first_seen = min(self.first_seen or finished_at, finished_at)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "results": self.results,
            "passed": self.passed,
            "errors": self.errors,
            "pass_rate": round(self.passed / self.results, 4) if self.results else None,
            **{
                name: round(sum(values) / len(values), 4) if (values := self.figures.get(name)) else None
                for name in FIGURES
            },
            "last_status": self.last_status,
        }


def _keys(by: Grouping, run_label: str, result: Mapping[str, Any]) -> list[str]:
    if by == "run":
        return [run_label]
    if by == "scenario":
        return [str(result.get("scenario_id", ""))]
    prompts = result.get("prompts") or {}
    return [
        f"{name}@v{use.get('version')} ({use.get('source', 'local')})"
        for name, use in sorted(prompts.items())
        if isinstance(use, dict)
    ]


def aggregate(rows: Iterable[tuple[str, str, str, Mapping[str, Any]]], by: Grouping) -> list[Row]:
    """`rows`: (run id, run name, finished_at, result object), oldest first. Rows in first-seen order."""
    groups: dict[str, Row] = {}
    for run_id, run_name, finished_at, result in rows:
        label = run_id if run_name in ("", run_id) else f"{run_name} ({run_id})"
        for key in _keys(by, label, result):
            groups.setdefault(key, Row(key=key)).add(result, finished_at)
    return sorted(groups.values(), key=lambda row: (row.first_seen, row.key))
