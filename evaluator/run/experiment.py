"""Runs as Langfuse experiments: a scenario suite as a dataset (`evaluator datasets push`), and each
connected run as a dataset run of it (after the run, within its post-run deadline).

One item per scenario, its id derived from the dataset name and the scenario id (langfuse.item_id), its
input the scenario's input, its expected output the scenario's `expected` block, its metadata the
scenario's id, description, tags and target. A run links each scenario's trace to that scenario's item in
a dataset run named after the run (its `--run-name`, else its id), with the run's prompt versions, git
commit and targets as run metadata, and posts the run-level metrics as scores of the dataset run
(`run_pass_rate`, `run_workflow_pass_rate`, `run_trajectory_full_workflow`, ...). In Langfuse: Datasets >
the dataset > Runs lists the runs with these scores; select two or more runs and compare them item by item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse import DatasetItem, LangfuseDatasets, item_id
from evaluator.results import FIGURES, RunInfo, ScenarioResult, run_provenance, summarize
from evaluator.scenarios import LoadedScenario

RUN_SCORE_PREFIX = "run_"


@dataclass(frozen=True, kw_only=True)
class PushReport:
    dataset: str
    created_dataset: bool
    created: list[str] = field(default_factory=list)  # scenario ids
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class DatasetRunReport:
    dataset: str
    run_name: str
    dataset_run_id: str | None = None
    linked: list[str] = field(default_factory=list)  # scenario ids
    not_in_dataset: list[str] = field(default_factory=list)
    scores: list[str] = field(default_factory=list)  # dataset-run score names posted
    error: str | None = None  # why linking stopped, if it did


def dataset_item(scenario: LoadedScenario, dataset: str) -> DatasetItem:
    s = scenario.scenario
    return DatasetItem(
        id=item_id(dataset, s.id),
        input=s.input,
        expected_output=s.expected.model_dump(mode="json", exclude_none=True),
        metadata={
            "scenario_id": s.id,
            "description": s.description,
            "tags": list(s.tags),
            "target": s.target,
        },
    )


def push_suite(
    datasets: LangfuseDatasets, scenarios: Sequence[LoadedScenario], dataset: str, deadline: Deadline
) -> PushReport:
    """Create the dataset if missing, then create or update one item per scenario (nothing when unchanged)."""
    _, created_dataset = datasets.ensure_dataset(
        dataset,
        "Scenarios of langfuse-agent-evaluator (one item per scenario)",
        {"pushed_by": "evaluator datasets push"},
        deadline=deadline,
    )
    items = [dataset_item(s, dataset) for s in scenarios]
    scenario_of = {item.id: s.scenario.id for item, s in zip(items, scenarios, strict=True)}
    created, updated, unchanged = datasets.push_items(dataset, items, deadline=deadline)
    return PushReport(
        dataset=dataset,
        created_dataset=created_dataset,
        created=[scenario_of[i] for i in created],
        updated=[scenario_of[i] for i in updated],
        unchanged=[scenario_of[i] for i in unchanged],
    )


def run_scores(documents: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The run-level metrics that have a value, as dataset-run score names."""
    metrics = summarize(documents)
    return {
        f"{RUN_SCORE_PREFIX}{name}": float(metrics[name]) for name in FIGURES if metrics[name] is not None
    }


def link_run(
    datasets: LangfuseDatasets,
    run: RunInfo,
    results: Sequence[ScenarioResult],
    dataset: str,
    deadline: Deadline,
) -> DatasetRunReport | None:
    """Link every scenario trace of the run to its item; None when the dataset does not exist."""
    if datasets.get_dataset(dataset, deadline=deadline) is None:
        return None
    existing = datasets.items(dataset, deadline=deadline)
    documents = [r.to_json() for r in results]
    header = run_provenance(run, documents)
    metadata = {
        "run_id": run.id,
        "agent_prompts": {p["name"]: p["version"] for p in header["agent_prompts"]},
        "judge_prompts": {p["name"]: p["version"] for p in header["judge_prompts"]},
        "git": header["git"],
        "targets": header["targets"],
    }
    linked, missing, run_id = [], [], None
    try:
        for result in results:
            item = item_id(dataset, result.scenario_id)
            if item not in existing:
                missing.append(result.scenario_id)
                continue
            run_id = datasets.link(
                run_name=run.name or run.id,
                item_id=item,
                trace_id=result.trace_id,
                description=f"evaluator run {run.id}",
                metadata=metadata,
                deadline=deadline,
            )
            linked.append(result.scenario_id)
        scores = run_scores(documents) if run_id is not None else {}
        if run_id is not None:
            datasets.post_run_scores(run_id, scores, run_id=run.id, metadata=metadata, deadline=deadline)
    except LangfuseUnavailableError as exc:
        return DatasetRunReport(
            dataset=dataset, run_name=run.name, dataset_run_id=run_id, linked=linked, not_in_dataset=missing,
            error=str(exc),
        )  # fmt: skip
    return DatasetRunReport(
        dataset=dataset, run_name=run.name, dataset_run_id=run_id, linked=linked, not_in_dataset=missing,
        scores=sorted(scores),
    )  # fmt: skip
