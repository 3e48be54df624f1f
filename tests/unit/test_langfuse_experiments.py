"""Experiments (langfuse/experiments.py): the id Langfuse derives, and the span attributes a linked
scenario trace carries, read from the real SDK's spans captured in-process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langfuse import Langfuse

from evaluator.langfuse import Experiment, ExperimentLink, Tracing, experiment_id
from evaluator.langfuse.experiments import experiment_url

EXPERIMENT = Experiment(
    id="0123456789abcdef",
    name="v2",
    dataset_id="dataset-1",
    description="evaluator run run-1",
    metadata={"agent_prompts": {"agents/research": 2}},
)
LINK = ExperimentLink(
    experiment=EXPERIMENT,
    item_id="research--s1",
    item_metadata={"scenario_id": "s1", "tags": ["smoke"]},
    expected_output={"tools": {"include": ["pdf_retrieval"]}},
)


def sdk_experiment_id(project_id: str, dataset_id: str, run_name: str) -> str:
    # The SDK's derivation is an instance method that does not touch the instance when both ids are given.
    sdk: Any = Langfuse._create_experiment_id
    return str(sdk(None, project_id=project_id, dataset_id=dataset_id, run_name=run_name))


@pytest.mark.parametrize(
    "run_name",
    [
        "v2",
        "research-v1",
        "pr\u00fcfung \u2013 zwei",
        "実験 🚀",
        'quote " and \\ backslash',
        "tab\tnew\nline\x01",
        "",
    ],
)
def test_the_experiment_id_is_the_one_the_sdk_and_server_derive(run_name: str) -> None:
    assert experiment_id("project-1", "dataset-1", run_name) == sdk_experiment_id(
        "project-1", "dataset-1", run_name
    )
    assert len(experiment_id("project-1", "dataset-1", run_name)) == 16


def test_the_same_run_name_is_the_same_experiment_and_any_other_part_changes_it() -> None:
    same = experiment_id("p", "d", "v2")
    assert same == experiment_id("p", "d", "v2")
    assert (
        len(
            {
                same,
                experiment_id("p", "d", "v3"),
                experiment_id("p", "e", "v2"),
                experiment_id("q", "d", "v2"),
            }
        )
        == 4
    )


def test_the_experiment_url_is_the_sdks() -> None:
    url = experiment_url("https://cloud.langfuse.com", "p1", "0123456789abcdef")
    assert url == "https://cloud.langfuse.com/project/p1/experiments/results?baseline=0123456789abcdef"


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def scenario_spans(tracing: Tracing, run_id: str, *, experiment: ExperimentLink | None) -> dict[str, Any]:
    """The spans (by name) of a scenario run with a child and a grandchild of its root `s1`."""
    trace_id = tracing.trace_id_for(run_id, "s1")
    with (
        tracing.scenario_run(
            trace_id=trace_id, scenario_id="s1", run_id=run_id, tags=[], input="q", experiment=experiment
        ) as root,
        tracing.client.start_as_current_observation(as_type="agent", name="orchestrator"),
        tracing.client.start_as_current_observation(as_type="tool", name="search"),
    ):
        pass
    root.end()
    return {span.name: span for span in tracing.take(trace_id).spans}


def test_a_linked_trace_carries_the_sdks_experiment_attributes_on_every_span(tracing: Tracing) -> None:
    spans = scenario_spans(tracing, "run-linked", experiment=LINK)
    assert set(spans) == {"s1", "orchestrator", "search"}
    root_id = format(spans["s1"].context.span_id, "016x")
    for name, span in spans.items():
        attributes = span.attributes
        assert attributes["langfuse.experiment.id"] == "0123456789abcdef", name
        assert attributes["langfuse.experiment.name"] == "v2"
        assert json.loads(attributes["langfuse.experiment.metadata"]) == {
            "agent_prompts": {"agents/research": 2}
        }
        assert attributes["langfuse.experiment.dataset.id"] == "dataset-1"
        assert attributes["langfuse.experiment.item.id"] == "research--s1"
        assert json.loads(attributes["langfuse.experiment.item.metadata"]) == {
            "scenario_id": "s1",
            "tags": ["smoke"],
        }
        assert attributes["langfuse.experiment.item.root_observation_id"] == root_id
        assert attributes["langfuse.environment"] == "sdk-experiment"
    root = spans["s1"].attributes
    assert root["langfuse.experiment.description"] == "evaluator run run-1"
    assert json.loads(root["langfuse.experiment.item.expected_output"]) == {
        "tools": {"include": ["pdf_retrieval"]}
    }
    assert (
        "langfuse.experiment.description" not in spans["search"].attributes
    )  # the root's only, as in the SDK
    assert root["langfuse.trace.name"] == "s1"  # the trace attributes are still there


def test_an_unlinked_trace_carries_no_experiment_attribute(tracing: Tracing) -> None:
    spans = scenario_spans(tracing, "run-unlinked", experiment=None)
    attributes = [dict(span.attributes) for span in spans.values()]
    assert [key for a in attributes for key in a if key.startswith("langfuse.experiment")] == []
    assert all(a.get("langfuse.environment") != "sdk-experiment" for a in attributes)
