"""Runs as Langfuse experiments: a scenario suite as a dataset (`evaluator datasets push`), and each
connected run as an experiment on it.

One item per scenario, its id derived from the dataset name and the scenario id (langfuse.item_id), its
input the scenario's input, its expected output the scenario's `expected` block, its metadata the
scenario's id, description, tags and target.

Before a run (`plan_experiment`), the dataset and its items are looked up: the run's experiment is named
after the run (its `--run-name`, else its id), its id derived as Langfuse derives it (the same name on
the same dataset is the same experiment), its metadata what is known before the run starts (the run id,
the prompt versions pinned with `--prompt`, the git commit, the targets). Each scenario with an item
gets an `ExperimentLink`, which its trace carries as span attributes while it runs (langfuse.experiments):
that is how Langfuse v4 records experiments. After the run (`report_experiment`), the run-level metrics
are posted as scores of the experiment (`run_<figure>`, each named by its metric), with every prompt
version the results used in their metadata. In
Langfuse: the dataset's page lists its experiments with these scores; select two and compare them item by
item.

A dialogue is one dataset item, and its run of that item is its *first turn's* trace: an experiment item
(a dataset run item) names exactly one trace (`traceId`, and `observationId`: here the turn's root
span), and one dialogue runs as one trace per turn; linking every turn would make Langfuse count the
item as run once per turn. So only the first turn (`<scenario id>#0`, the trace the dialogue's result
names) carries the link; the other turns are in its session (Sessions, `<run id>:<scenario id>`), which
the linked trace names. The dialogues' dataset-level figures (the run's `run.dialogue`, each by its own
rule: DESIGN.md, "Dialogues") are posted as the experiment's `run_dialogue_<key>` scores (CRAG's
dictionary as `run_dialogue_crag_<name>`), in place of the figures the run's summary has under those
names (the same values, by the same rules: metrics/dialogue/_metric.py), with the counts beside them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluator._time import Deadline, utc_now
from evaluator.errors import EvaluatorError, LangfuseUnavailableError, StoreError
from evaluator.langfuse import (
    DatasetItem,
    Experiment,
    ExperimentLink,
    LangfuseDatasets,
    experiment_id,
    item_id,
    run_score_bodies,
)
from evaluator.metrics import MetricSet
from evaluator.prompts import Prompt, PromptLibrary
from evaluator.results import RunInfo, ScenarioResult, run_provenance, run_summaries
from evaluator.run.suite import ExperimentReport
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Store

__all__ = [
    "RUN_DIALOGUE_PREFIX",
    "ExperimentPlan",
    "PushReport",
    "experiment_metadata",
    "plan_experiment",
    "push_suite",
    "report_experiment",
    "traced_id",
]

RUN_SCORE_PREFIX = "run_"
RUN_DIALOGUE_PREFIX = "run_dialogue_"  # the dialogues' dataset-level figures (run.dialogue)


@dataclass(frozen=True, kw_only=True)
class PushReport:
    dataset: str
    created_dataset: bool
    created: list[str] = field(default_factory=list)  # scenario ids
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    not_pushed: list[str] = field(default_factory=list)  # those after a failure, which `error` says
    error: LangfuseUnavailableError | None = None


@dataclass(frozen=True, kw_only=True)
class ExperimentPlan:
    """A run's experiment, decided before the run: the link each scenario's trace is to carry."""

    dataset: str
    experiment: Experiment
    # by the id of the scenario run whose trace carries it (`traced_id`: a dialogue's first turn's);
    # scenarios without an item have none
    links: Mapping[str, ExperimentLink]
    url: str | None = None
    traced: Mapping[str, str] = field(default_factory=dict)  # a dialogue's id -> its `traced_id`

    def linked(self, result: ScenarioResult) -> bool:
        """Whether a result's trace (a dialogue's: its first turn's) carried the link."""
        return self.traced.get(result.scenario_id, result.scenario_id) in self.links


def dataset_item(scenario: LoadedScenario, dataset: str) -> DatasetItem:
    """A scenario as a dataset item; a dialogue's input is its user turns, its expected output each
    turn's expectations (with its goal and policy, when given)."""
    s = scenario.scenario
    return DatasetItem(
        id=item_id(dataset, s.id),
        input=s.input if s.turns is None else [turn.user for turn in s.turns],
        expected_output=_expected_output(s),
        metadata={
            "scenario_id": s.id,
            "description": s.description,
            "tags": list(s.tags),
            "target": s.target,
        },
    )


def traced_id(s: Scenario) -> str:
    """The id of the scenario run whose trace joins the experiment: the scenario's own, or for a
    dialogue its first turn's (module docstring), as the dialogue runner names it."""
    if not s.turns:
        return s.id
    from evaluator.run.dialogue import turn_scenario  # here: a run without dialogues does not load them

    return turn_scenario(s, 0, s.turns[0]).id


def _expected_output(s: Scenario) -> Any:
    # what the file says, without the defaults it never wrote (`allow: []`, `strict: true`)
    if s.turns is None:
        return s.expected.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    return s.model_dump(
        mode="json", include={"turns", "goal", "policy"}, exclude_unset=True, exclude_none=True
    )


def push_suite(
    datasets: LangfuseDatasets,
    scenarios: Sequence[LoadedScenario],
    dataset: str,
    deadline: Deadline | None = None,
) -> PushReport:
    """Create the dataset if missing, then create or update one item per scenario (nothing when
    unchanged). Langfuse failing part-way ends the push: the report has what was done before it, the
    scenarios not pushed and the failure (`error`); a failure to find or create the dataset raises."""
    _, created_dataset = datasets.ensure_dataset(
        dataset,
        "Scenarios of langfuse-agent-evaluator (one item per scenario)",
        {"pushed_by": "evaluator datasets push"},
        deadline=deadline,
    )
    items = [dataset_item(s, dataset) for s in scenarios]
    scenario_of = {item.id: s.scenario.id for item, s in zip(items, scenarios, strict=True)}
    done: dict[str, list[str]] = {"created": [], "updated": [], "unchanged": []}
    error = None
    try:
        for pushed, action in datasets.push_items(dataset, items, deadline=deadline):
            done[action].append(scenario_of[pushed])
    except LangfuseUnavailableError as exc:  # what was pushed before it is said, with the failure
        error = exc
    finished = {scenario for ids in done.values() for scenario in ids}
    return PushReport(
        dataset=dataset,
        created_dataset=created_dataset,
        **done,
        not_pushed=[s.scenario.id for s in scenarios if s.scenario.id not in finished],
        error=error,
    )


def experiment_metadata(
    *,
    run_id: str,
    pins: Mapping[str, int],
    served: Mapping[str, int] | None = None,
    judge_prompts: Collection[str],
    git: Mapping[str, Any] | None,
    targets: Sequence[str],
) -> dict[str, Any]:
    """What an experiment records of its run, known before the run starts (every span of a linked
    trace carries it): the run id, the version of every agent prompt the run is served (`served`,
    pinned or not: see `served_versions`; None: only the pins are known), the judge prompt versions
    pinned with `--prompt`, the git commit and the targets."""
    agents = pins if served is None else served
    return {
        "run_id": run_id,
        "agent_prompts": {n: v for n, v in sorted(agents.items()) if n not in judge_prompts},
        "judge_prompts": {n: v for n, v in sorted(pins.items()) if n in judge_prompts},
        "git": dict(git) if git is not None else None,
        "targets": list(targets),
    }


def served_versions(
    library: PromptLibrary,
    fetch: Callable[[Prompt, int | None, str | None], Prompt],
    *,
    pins: Mapping[str, int],
    skip: Collection[str] = (),
    deadline: Deadline | None = None,
) -> dict[str, int]:
    """The version of each prompt of the library (but those in `skip`: the judges') that the run's
    targets are served: the pinned one; else the one Langfuse serves now (its `production` label;
    the SDK caches it, so a target asking during the run gets the same), else the local file's the
    run falls back to. A prompt no target asks for is listed too: which ones a target uses is known
    only once it has run, and the experiment's metadata is set before. Once `deadline` has passed,
    Langfuse is not asked for the rest: they get the local file's, as a prompt it did not serve."""
    versions: dict[str, int] = {}
    for name in library.names():
        if name in skip:
            continue
        if name in pins:
            versions[name] = pins[name]
            continue
        local = library.get(name)
        if deadline is not None and deadline.passed:
            versions[name] = local.version
            continue
        try:
            versions[name] = fetch(local, None, None).version
        except EvaluatorError:  # the run falls back to the file, and says so when a target asks for it
            versions[name] = local.version
    return versions


def plan_experiment(
    datasets: LangfuseDatasets,
    scenarios: Sequence[LoadedScenario],
    *,
    dataset: str,
    project_id: str,
    run_name: str,
    run_id: str,
    metadata: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    deadline: Deadline,
) -> ExperimentPlan | None:
    """The run's experiment on `dataset` and the link of every scenario that has an item there; None
    when the project has no such dataset. A failed lookup raises (LangfuseUnavailableError, ...).
    The experiment's `metadata` may be a function, called only once the dataset is found."""
    found = datasets.get_dataset(dataset, deadline=deadline)
    if found is None:
        return None
    existing = datasets.items(dataset, deadline=deadline)
    experiment = Experiment(
        id=experiment_id(project_id, str(found["id"]), run_name),
        name=run_name,
        dataset_id=str(found["id"]),
        description=f"evaluator run {run_id}",
        metadata=dict(metadata() if callable(metadata) else metadata),
    )
    items = ((traced_id(s.scenario), dataset_item(s, dataset)) for s in scenarios)
    links = {
        traced: ExperimentLink(
            experiment=experiment,
            item_id=item.id,
            item_metadata=item.metadata,
            expected_output=item.expected_output,
        )
        for traced, item in items
        if item.id in existing
    }
    traced = {s.scenario.id: traced_id(s.scenario) for s in scenarios if s.scenario.turns}
    return ExperimentPlan(dataset=dataset, experiment=experiment, links=links, traced=traced)


def run_scores(
    figures: Mapping[str, Any], metrics: MetricSet, dialogues: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The run-level figures of `metrics` (MetricSet.summarize) that have a value, as experiment score
    names; with `dialogues` (the run's dataset-level dialogue figures, `run.dialogue`), each of its
    numbers as `run_dialogue_<key>` (in place of the summary's figures so named) and
    CRAG's dictionary as `run_dialogue_crag_<name>`."""
    scores = {
        f"{RUN_SCORE_PREFIX}{name}": float(value)
        for name in metrics.figure_names
        if (value := figures.get(name)) is not None
    }
    if dialogues:  # every `run_dialogue_` score is then a dataset-level figure, none a mean of dialogues
        scores = {name: value for name, value in scores.items() if not name.startswith(RUN_DIALOGUE_PREFIX)}
        found = dialogues.get("crag")
        crag: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        for prefix, values in ((RUN_DIALOGUE_PREFIX, dialogues), (f"{RUN_DIALOGUE_PREFIX}crag_", crag)):
            scores |= {
                f"{prefix}{key}": float(value)
                for key, value in values.items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            }
    return scores


def report_experiment(
    datasets: LangfuseDatasets,
    plan: ExperimentPlan,
    run: RunInfo,
    results: Sequence[ScenarioResult],
    deadline: Deadline,
    *,
    outbox: tuple[Store, str] | None = None,
) -> ExperimentReport:
    """After the run: the run-level scores posted to the experiment (when any trace joined it), with
    every prompt version the results used in their metadata; what was linked. With an `outbox` (the
    store and the destination), the scores are kept there first and marked once Langfuse took them, so
    `sync` posts them again after an outage (a store that cannot take them: posted all the same)."""
    linked = [r.scenario_id for r in results if plan.linked(r)]
    report = ExperimentReport(
        dataset=plan.dataset,
        run_name=plan.experiment.name,
        experiment_id=plan.experiment.id,
        url=plan.url,
        linked=linked,
        not_in_dataset=[r.scenario_id for r in results if not plan.linked(r)],
    )
    if not linked:  # no trace joined it: Langfuse has no such experiment to score
        return report
    metrics = results[0].metrics  # `linked` is not empty
    documents = [r.to_json() for r in results]
    header = run_provenance(run, documents, metrics)
    metadata = {
        **plan.experiment.metadata,
        "agent_prompts": {p["name"]: p["version"] for p in header["agent_prompts"]},
        "judge_prompts": {p["name"]: p["version"] for p in header["judge_prompts"]},
    }
    dialogues = run_summaries(results, metrics).get("dialogue")
    scores = run_scores(header["metrics"], metrics, dialogues)  # the provenance summarised the results
    at = utc_now()  # frozen: the outbox's copy is the very body posted now
    body = run_score_bodies(plan.experiment.id, scores, run_id=run.id, metadata=metadata, timestamp=at)
    kept = outbox is not None and body and _kept(outbox, run.id, body)
    try:
        datasets.post_run_scores(
            plan.experiment.id, scores, run_id=run.id, metadata=metadata, deadline=deadline, timestamp=at
        )
    except LangfuseUnavailableError as exc:
        waits = "; they wait in the local outbox for `evaluator sync`" if kept else ""
        return replace(report, error=f"{exc}{waits}")
    if kept and outbox is not None:
        store, destination = outbox
        # a store failing now: Langfuse has them, and `sync` posts them again under the same ids (an update)
        with contextlib.suppress(StoreError):
            store.mark_experiment_scores_sent(run.id, destination, utc_now())
    return replace(report, scores=sorted(scores))


def _kept(outbox: tuple[Store, str], run_id: str, body: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the run-level scores are in the outbox now (a store failing at the run's end: not)."""
    store, destination = outbox
    try:
        store.keep_experiment_scores(run_id, destination, body)
    except StoreError:
        return False
    return True
