"""Runs as experiments (run/experiment.py): the plan made before a run (which scenarios get a link, to
which experiment) and the report after it (run-level scores on the experiment), with a recording fake of
the datasets role."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse import experiment_id
from evaluator.prompts import Prompt, PromptLibrary
from evaluator.results import DialogueOutcome, RunInfo, default_metrics, with_dialogues
from evaluator.run.dialogue import turn_scenario
from evaluator.run.experiment import (
    experiment_metadata,
    plan_experiment,
    report_experiment,
    run_scores,
    served_versions,
)
from evaluator.scenarios import LoadedScenario, Scenario
from tests.builders import scenario
from tests.stored_runs import result

ROOT = Path(__file__).resolve().parents[2]


class FakeDatasets:
    """The datasets role: one dataset with some items; posted scores recorded; failures on demand."""

    def __init__(self, items: list[str] | None, *, fail_scores: bool = False) -> None:
        self._items = items
        self._fail_scores = fail_scores
        self.posted: list[dict[str, Any]] = []

    def get_dataset(self, name: str, *, deadline: Deadline | None = None) -> dict[str, Any] | None:
        return None if self._items is None else {"id": f"id-of-{name}", "name": name}

    def items(self, dataset: str, *, deadline: Deadline | None = None) -> dict[str, dict[str, Any]]:
        return {item: {"id": item} for item in self._items or []}

    def post_run_scores(self, experiment_id: str, scores: dict[str, float], **kwargs: Any) -> None:
        if self._fail_scores:
            raise LangfuseUnavailableError("Langfuse at http://x answered HTTP 503 while posting")
        self.posted.append({"experiment_id": experiment_id, "scores": scores, **kwargs})


def loaded(*ids: str) -> list[LoadedScenario]:
    return [
        LoadedScenario(
            scenario=scenario(id=i, tags=["smoke"], expected={"tools": {"include": ["a"]}}), path=Path()
        )
        for i in ids
    ]


METADATA = experiment_metadata(
    run_id="run-1", pins={"agents/research": 2}, judge_prompts=set(), git=None, targets=["demo"]
)


def plan(datasets: FakeDatasets, *ids: str, run_name: str = "v2") -> Any:
    return plan_experiment(
        datasets,  # type: ignore[arg-type]
        loaded(*ids),
        dataset="research",
        project_id="project-1",
        run_name=run_name,
        run_id="run-1",
        metadata=METADATA,
        deadline=Deadline(5),
    )


def test_scenarios_with_an_item_get_a_link_to_the_runs_experiment() -> None:
    made = plan(FakeDatasets(["research--s1", "research--s3"]), "s1", "s2", "s3")
    assert sorted(made.links) == ["s1", "s3"]
    experiment = made.experiment
    assert experiment.id == experiment_id("project-1", "id-of-research", "v2") and experiment.name == "v2"
    assert experiment.dataset_id == "id-of-research" and experiment.description == "evaluator run run-1"
    link = made.links["s1"]
    assert link.experiment is experiment and link.item_id == "research--s1"
    assert link.expected_output == {"tools": {"include": ["a"]}}  # as written: no defaults added
    assert link.item_metadata["scenario_id"] == "s1" and link.item_metadata["tags"] == ["smoke"]


def test_no_dataset_no_plan() -> None:
    assert plan(FakeDatasets(None), "s1") is None


def test_the_metadata_keeps_agent_and_judge_pins_apart() -> None:
    metadata = experiment_metadata(
        run_id="r",
        pins={"agents/research": 2, "evaluation/quality": 3},
        judge_prompts={"evaluation/quality", "evaluation/correctness"},
        git={"commit": "abc", "dirty": False},
        targets=("demo",),
    )
    assert metadata == {
        "run_id": "r",
        "agent_prompts": {"agents/research": 2},
        "judge_prompts": {"evaluation/quality": 3},
        "git": {"commit": "abc", "dirty": False},
        "targets": ["demo"],
    }


def test_the_metadata_records_the_agent_prompt_versions_served_pinned_or_not() -> None:
    library = PromptLibrary(ROOT / "prompts")
    asked: list[tuple[str, int | None]] = []

    def fetch(local: Prompt, version: int | None, label: str | None) -> Prompt:
        asked.append((local.name, version))
        if local.name == "agents/orchestrator":
            raise LangfuseUnavailableError("Langfuse did not serve prompt agents/orchestrator")
        return replace(local, version=7, source="langfuse")  # Langfuse's production label is on v7

    served = served_versions(
        library,
        fetch,
        pins={"agents/research": 2},
        skip={"evaluation/quality", "evaluation/correctness", "evaluation/turn_quality", "evaluation/agent"},
    )
    concierge = [f"agents/concierge-{agent}" for agent in ("action", "memory", "policy", "triage")]
    assert served == {
        "agents/clarification": 7,
        **dict.fromkeys(concierge, 7),
        "agents/orchestrator": 1,
        "agents/research": 2,
    }
    assert sorted(asked) == [
        ("agents/clarification", None),
        *((name, None) for name in concierge),
        ("agents/orchestrator", None),
    ]
    metadata = experiment_metadata(
        run_id="r", pins={}, served=served, judge_prompts={"evaluation/quality"}, git=None, targets=[]
    )
    assert metadata["agent_prompts"] == served


RUN = RunInfo(id="run-1", name="v2", started_at="2026-11-23T10:00:00.000Z")


def test_the_report_posts_the_run_level_scores_to_the_experiment() -> None:
    datasets = FakeDatasets(["research--s1", "research--s2"])
    made = plan(datasets, "s1", "s2", "s3")
    results = [result("s1"), result("s2", workflow=False), result("s3")]
    report = report_experiment(datasets, made, RUN, results, Deadline(5))  # type: ignore[arg-type]
    assert report.linked == ["s1", "s2"] and report.not_in_dataset == ["s3"] and report.error is None
    [posted] = datasets.posted
    assert posted["experiment_id"] == made.experiment.id and posted["run_id"] == "run-1"
    assert posted["scores"]["run_pass_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert report.scores == sorted(posted["scores"])
    assert posted["metadata"]["agent_prompts"] == {"agents/research": 1}  # what the results used
    assert posted["metadata"]["run_id"] == "run-1"


def test_no_linked_trace_no_scores() -> None:
    datasets = FakeDatasets([])
    report = report_experiment(datasets, plan(datasets, "s1"), RUN, [result("s1")], Deadline(5))  # type: ignore[arg-type]
    assert report.linked == [] and report.not_in_dataset == ["s1"] and report.scores == []
    assert datasets.posted == []


def test_a_scenario_that_did_not_run_is_not_linked() -> None:
    datasets = FakeDatasets(["research--s1", "research--s2"])
    report = report_experiment(datasets, plan(datasets, "s1", "s2"), RUN, [result("s1")], Deadline(5))  # type: ignore[arg-type]
    assert report.linked == ["s1"] and report.not_in_dataset == []


def test_scores_that_cannot_be_posted_are_reported() -> None:
    datasets = FakeDatasets(["research--s1"], fail_scores=True)
    made = replace(plan(datasets, "s1"), url="http://x/project/p/experiments/results?baseline=e")
    report = report_experiment(datasets, made, RUN, [result("s1")], Deadline(5))  # type: ignore[arg-type]
    assert report.error is not None and "HTTP 503" in report.error
    assert report.scores == [] and report.linked == ["s1"] and report.url == made.url


def test_the_turn_quality_prompt_is_a_judge_prompt_in_a_run_without_dialogues() -> None:
    """A single-turn run never asks `evaluation/turn_quality`, but it is a judge's prompt all the same:
    the experiment's metadata must not list it among the agent prompts."""
    from evaluator.results import builtin_metrics
    from evaluator.run.judging import judge_prompt_names

    item = LoadedScenario(scenario=scenario(id="s1", input="q"), path=Path("s1.yaml"))
    names = judge_prompt_names(builtin_metrics(), [item])
    assert names == {"evaluation/quality", "evaluation/correctness", "evaluation/turn_quality"}


def test_a_dialogue_is_linked_through_its_first_turn_only() -> None:
    """An experiment item names one trace: a dialogue's is its first turn's (`<id>#0`, as the dialogue
    runner names the turn), the later turns carry no link; a single-turn scenario keeps its own id."""
    dialogue = Scenario.model_validate(
        {"id": "talk", "target": "t", "turns": [{"user": "hi"}, {"user": "book it"}]}
    )
    datasets = FakeDatasets(["research--talk", "research--s1"])
    made = plan_experiment(
        datasets,  # type: ignore[arg-type]
        [LoadedScenario(scenario=dialogue, path=Path()), *loaded("s1")],
        dataset="research",
        project_id="project-1",
        run_name="v2",
        run_id="run-1",
        metadata=METADATA,
        deadline=Deadline(5),
    )
    assert made is not None and sorted(made.links) == ["s1", "talk#0"]
    assert made.links["talk#0"].item_id == "research--talk"
    assert made.links["talk#0"].item_metadata["scenario_id"] == "talk"
    assert turn_scenario(dialogue, 0, dialogue.turns[0]).id == "talk#0"  # what the pipeline looks up
    talked = replace(result("talk"), dialogue=DialogueOutcome(session_id="run-1:talk", turns=()))
    assert made.linked(talked) and made.linked(result("s1")) and not made.linked(result("s2"))


def test_a_runs_dialogue_figures_are_its_dataset_level_ones() -> None:
    """`run_dialogue_<key>` is the dataset-level figure of `run.dialogue` (JGA over every measured turn,
    here 0.5), not the summary's `dialogue_jga` (set apart here, 0.75, to tell the two apart): a name
    has one source; counts and CRAG's dictionary come along, lists and null figures do not."""
    metrics = with_dialogues(default_metrics())
    summary = {"pass_rate": 1.0, "dialogue_jga": 0.75, "dialogue_memory_transfer": 0.5}
    dialogues = {
        "jga": 0.5, "memory_transfer": None, "turns": 4, "dialogues": 2, "unreported": ["acts"],
        "crag": {"accuracy": 0.5, "total": 2},
    }  # fmt: skip
    assert run_scores(summary, metrics, dialogues) == {
        "run_pass_rate": 1.0,
        "run_dialogue_jga": 0.5,
        "run_dialogue_turns": 4.0,
        "run_dialogue_dialogues": 2.0,
        "run_dialogue_crag_accuracy": 0.5,
        "run_dialogue_crag_total": 2.0,
    }
    assert run_scores(summary, metrics)["run_dialogue_jga"] == 0.75  # no dialogue summary: as before
