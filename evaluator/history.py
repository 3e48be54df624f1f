"""Aggregates over the local store, for `evaluator report`: per run, per scenario, per prompt version.

Rates count finished verdicts only: an `error` result counts as not passed. `full_workflow` is the mean
over results that had a trajectory (None when none had one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Grouping = Literal["run", "scenario", "prompt"]


@dataclass
class Row:
    key: str
    results: int = 0
    passed: int = 0
    errors: int = 0
    full_workflow: list[float] = field(default_factory=list)
    last_status: str = ""
    first_seen: str = ""

    def add(self, result: Mapping[str, Any], finished_at: str) -> None:
        self.results += 1
        self.passed += result.get("status") == "passed"
        self.errors += result.get("status") == "error"
        trajectory = result.get("trajectory")
        if isinstance(trajectory, dict) and isinstance(trajectory.get("full_workflow"), int | float):
            self.full_workflow.append(float(trajectory["full_workflow"]))
        self.last_status = str(result.get("status", ""))
        self.first_seen = min(self.first_seen or finished_at, finished_at)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "results": self.results,
            "passed": self.passed,
            "errors": self.errors,
            "pass_rate": round(self.passed / self.results, 4) if self.results else None,
            "full_workflow": round(sum(self.full_workflow) / len(self.full_workflow), 4)
            if self.full_workflow
            else None,
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
