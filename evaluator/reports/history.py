"""History for `evaluator report`: the stored results grouped per prompt version, per scenario or per run.

`--by prompt` (the default) gives one row per agent prompt version (`group: "agent_prompt"`, from each
result's `prompts`) and, apart from them, one per judge prompt version (`group: "judge_prompt"`, from
`quality.prompt` and `correctness.prompt`): a result counts toward every prompt version it used. Each
row carries the run-level figures of the `MetricSet` over its results, how many results each rests
on (`n`), the first and last run, and `change`: each figure minus the same figure of the row before it
(the previous version of the same prompt, or the latest run before it with a scenario in common; none
for scenarios).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.metrics import MetricSet
from evaluator.reports.runs import RunRecord
from evaluator.results import agent_prompts, default_metrics

__all__ = ["GROUPINGS", "Grouping", "history", "report_document"]

Grouping = Literal["prompt", "scenario", "run"]
GROUPINGS: tuple[Grouping, ...] = ("prompt", "scenario", "run")


@dataclass
class _Group:
    kind: str  # agent_prompt | judge_prompt | scenario | run
    key: str
    name: str | None = None
    version: int | None = None
    sources: set[str] = field(default_factory=set)
    runs: dict[str, RunRecord] = field(default_factory=dict)  # by id, in first-seen order
    results: list[Mapping[str, Any]] = field(default_factory=list)

    def add(self, run: RunRecord, result: Mapping[str, Any], source: str | None = None) -> None:
        self.runs.setdefault(run.id, run)
        self.results.append(result)
        if source and source != "unknown":
            self.sources.add(source)


def _groups_of(
    run: RunRecord, result: Mapping[str, Any], by: Grouping, metrics: MetricSet
) -> list[tuple[_Group, str | None]]:
    if by == "run":
        return [(_Group(kind="run", key=run.label), None)]
    if by == "scenario":
        return [(_Group(kind="scenario", key=str(result.get("scenario_id", ""))), None)]
    found = [
        (_Group(kind="agent_prompt", key=f"{name}@v{version}", name=name, version=version), source)
        for name, version, source in agent_prompts(result)
    ]
    return found + [
        (_Group(kind="judge_prompt", key=f"{name}@v{version}", name=name, version=version), None)
        for name, version in metrics.judge_prompts(result)
    ]


def _grouped(runs: Sequence[RunRecord], by: Grouping, metrics: MetricSet) -> list[_Group]:
    groups: dict[tuple[str, str], _Group] = {}
    for run in runs:
        for result in run.results:
            for fresh, source in _groups_of(run, result, by, metrics):
                group = groups.setdefault((fresh.kind, fresh.key), fresh)
                group.add(run, result, source)
    order = {"agent_prompt": 0, "judge_prompt": 1, "scenario": 2, "run": 3}
    listed = list(groups.values())
    if by == "run":
        return listed  # runs come oldest first already
    return sorted(listed, key=lambda g: (order[g.kind], g.name or g.key, g.version or 0))


def _row(group: _Group, metrics: MetricSet) -> dict[str, Any]:
    summary = metrics.summarize(group.results)
    results = summary.pop("scenarios")
    runs = list(group.runs.values())
    return {
        "group": group.kind,
        "key": group.key,
        "name": group.name,
        "version": group.version,
        "sources": sorted(group.sources),
        "runs": len(runs),
        "scenarios": len({str(r.get("scenario_id")) for r in group.results}),
        "results": results,
        **summary,
        "first_run": runs[0].ref(),
        "last_run": runs[-1].ref(),
    }


def change(
    current: Mapping[str, Any], previous: Mapping[str, Any], metrics: MetricSet | None = None
) -> dict[str, float | None]:
    """Each figure of `current` minus the same figure of `previous` (None when either is missing)."""
    return {
        name: round(current[name] - previous[name], 4)
        if current[name] is not None and previous[name] is not None
        else None
        for name in (metrics or default_metrics()).figure_names
    }


def history(
    runs: Sequence[RunRecord], by: Grouping, metrics: MetricSet | None = None
) -> list[dict[str, Any]]:
    """The report rows (see the module docstring), each with `change` against the row before it; the
    figures are those of `metrics` (the built-in ones by default)."""
    metrics = metrics or default_metrics()
    groups = _grouped(runs, by, metrics)
    rows = [_row(group, metrics) for group in groups]
    scenarios = [{str(r.get("scenario_id")) for r in group.results} for group in groups]
    for index, row in enumerate(rows):
        before = _previous(rows[:index], row, by, scenarios[: index + 1])
        row["change"] = (
            {"against": before["key"], **change(row, before, metrics)} if before is not None else None
        )
    return rows


def _previous(
    earlier: Sequence[dict[str, Any]], row: Mapping[str, Any], by: Grouping, scenarios: Sequence[set[str]]
) -> dict[str, Any] | None:
    """The row `row` changed from: the same prompt's version before; for a run, the latest run before it
    with a scenario in common (`scenarios`: each row's scenario ids, `row`'s last), so that a run of one
    suite is not measured against a run of another; none for a scenario."""
    if by == "run":
        own = scenarios[-1]
        same_suite = [r for r, ids in zip(earlier, scenarios, strict=False) if ids & own]
        return dict(same_suite[-1]) if same_suite else None
    if by == "scenario":
        return None
    same = [r for r in earlier if r["group"] == row["group"] and r["name"] == row["name"]]
    return dict(same[-1]) if same else None


def report_document(
    runs: Sequence[RunRecord], by: Grouping, source: str, metrics: MetricSet | None = None
) -> dict[str, Any]:
    """What `evaluator report --json` prints."""
    return {
        "by": by,
        "source": source,
        "runs": [run.ref() for run in runs],
        "rows": history(runs, by, metrics),
    }
