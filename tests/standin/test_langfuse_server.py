"""The Langfuse stand-in, exercised with the real Langfuse SDK (5.x) wherever the SDK has a call."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from langfuse import Evaluation, Langfuse, propagate_attributes
from langfuse.api.commons.errors.not_found_error import NotFoundError
from opentelemetry.sdk.trace import TracerProvider

from . import langfuse_server
from .langfuse_server import LangfuseStandIn
from .openapi_contract import SchemaMismatchError, load_contract

FIXED_TIMESTAMP = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
LangfuseFactory = Callable[..., Langfuse]  # the `make_langfuse` fixture


def record_agent_trace(client: Langfuse) -> str:
    """An AGENT root with a TOOL and a GENERATION child; returns the trace id."""
    with client.start_as_current_observation(
        name="orchestrator", as_type="agent", input={"question": "why?"}, metadata={"team": "a"}
    ) as root:
        with client.start_as_current_observation(name="search", as_type="tool") as tool:
            tool.update(output={"hits": 2})
        with client.start_as_current_observation(
            name="answer", as_type="generation", model="gpt-test", usage_details={"input": 3}
        ):
            pass
        root.update(output="because")
        trace_id = root.trace_id
    client.flush()
    return trace_id


def http(standin: LangfuseStandIn, keys: tuple[str, str] | None = None) -> httpx.Client:
    return httpx.Client(base_url=standin.base_url, auth=keys or standin.new_keys(), timeout=5)


# -- spans ------------------------------------------------------------------------------------


def test_exported_spans_arrive_with_type_name_and_parent(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    trace_id = record_agent_trace(make_langfuse())

    spans = {span.name: span for span in langfuse_standin.spans_for(trace_id)}
    assert set(spans) == {"orchestrator", "search", "answer"}
    root = spans["orchestrator"]
    assert root.observation_type == "AGENT"
    assert root.parent_span_id is None
    assert spans["search"].observation_type == "TOOL"
    assert spans["answer"].observation_type == "GENERATION"
    assert spans["search"].parent_span_id == root.span_id == spans["answer"].parent_span_id
    assert json.loads(root.attributes["langfuse.observation.input"]) == {"question": "why?"}
    assert root.attributes["langfuse.observation.metadata.team"] == '"a"'  # JSON-encoded
    post = langfuse_standin.requests_to("/api/public/otel/v1/traces")[0]
    assert post.headers["content-encoding"] == "gzip"
    assert post.headers["x-langfuse-ingestion-version"] == "4"


# -- scores -----------------------------------------------------------------------------------


def test_score_arrives_once_and_a_repost_updates_it(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    trace_id = client.create_trace_id(seed="score-once")

    def post(value: bool) -> None:
        client.create_score(
            name="correct",
            value=float(value),
            trace_id=trace_id,
            score_id="score-1",
            data_type="BOOLEAN",
            timestamp=FIXED_TIMESTAMP,  # the id AND the timestamp's date identify the row
        )

    post(True)
    client.flush()
    assert langfuse_standin.score_posts["score-1"] == 1
    stored = langfuse_standin.scores["score-1"]
    assert stored["value"] == 1.0
    assert stored["dataType"] == "BOOLEAN"
    assert stored["traceId"] == trace_id

    post(False)
    client.flush()
    assert langfuse_standin.score_posts["score-1"] == 2
    assert len(langfuse_standin.score_rows) == 1
    assert langfuse_standin.scores["score-1"]["value"] == 0.0


def test_score_reposted_with_a_new_date_becomes_a_second_row(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    trace_id = client.create_trace_id(seed="score-date")
    for day in (1, 2):
        client.create_score(
            name="quality",
            value=0.5,
            trace_id=trace_id,
            score_id="score-2",
            data_type="NUMERIC",
            timestamp=datetime(2026, 1, day, tzinfo=UTC),
        )
        client.flush()
    assert [row.id for row in langfuse_standin.score_rows] == ["score-2", "score-2"]
    assert len(langfuse_standin.scores) == 1


def test_rejected_scores_get_a_207_and_are_not_stored(
    langfuse_standin: LangfuseStandIn,
    make_langfuse: LangfuseFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    langfuse_standin.reject_scores(lambda item: item["name"] == "bad", "quota")
    client = make_langfuse()
    trace_id = client.create_trace_id(seed="partial")
    for name in ("good", "bad"):
        client.create_score(name=name, value=1.0, trace_id=trace_id, score_id=name, data_type="NUMERIC")
    with caplog.at_level(logging.ERROR, logger="langfuse"):
        client.flush()

    assert set(langfuse_standin.scores) == {"good"}
    assert [r.status for r in langfuse_standin.requests_to("/api/public/scores")] == [207]
    assert "accepted 1 and rejected 1 of 2 scores" in caplog.text  # the SDK only logs it


def test_score_batch_items_are_validated_per_item(langfuse_standin: LangfuseStandIn) -> None:
    good = {"id": "ok", "traceId": "t" * 32, "name": "n", "value": 1, "dataType": "BOOLEAN"}
    bad_boolean = good | {"id": "half", "value": 0.5}
    naive_timestamp = good | {"id": "naive", "timestamp": "2026-01-01T00:00:00"}
    with http(langfuse_standin) as client:
        reply = client.post("/api/public/scores", json=[good, bad_boolean, naive_timestamp])
        single = client.post("/api/public/scores", json=good | {"id": "single"})
        all_good = client.post("/api/public/scores", json=[good])

    assert reply.status_code == 207
    body = reply.json()
    assert (body["accepted"], body["rejected"]) == (1, 2)
    assert [error.keys() for error in body["errors"]] == [{"message"}, {"message"}]
    assert single.status_code == 200
    assert single.json() == {"id": "single"}
    assert all_good.status_code == 202
    assert all_good.json() == {"message": "Accepted"}
    assert langfuse_standin.score_posts == {"ok": 2, "single": 1}


def test_scores_read_back_through_the_v3_api(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    trace_id = client.create_trace_id(seed="read-scores")
    client.create_score(name="verdict", value="pass", trace_id=trace_id, data_type="CATEGORICAL")
    client.create_score(name="ok", value=True, trace_id=trace_id, data_type="BOOLEAN", comment="c")
    client.flush()

    page = client.api.scores.get_many(trace_id=trace_id, fields="details,subject")
    by_name = {score.name: score for score in page.data}
    assert by_name["verdict"].value == "pass"
    assert by_name["ok"].value is True
    assert by_name["ok"].comment == "c"
    assert by_name["ok"].subject is not None
    assert by_name["ok"].subject.id == trace_id


# -- prompts ----------------------------------------------------------------------------------


def test_prompt_versions_labels_and_names_with_a_slash(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    name = "evaluation/quality"
    first = client.create_prompt(name=name, prompt="Rate {{answer}}", labels=["production"])
    second = client.create_prompt(name=name, prompt="Judge {{answer}}", labels=["staging"], tags=["judge"])

    assert (first.version, second.version) == (1, 2)
    assert second.labels == ["staging", "latest"]
    assert client.get_prompt(name, cache_ttl_seconds=0).version == 1  # default label: production
    assert client.get_prompt(name, label="staging", cache_ttl_seconds=0).version == 2
    assert client.get_prompt(name, label="latest", cache_ttl_seconds=0).version == 2
    by_version = client.get_prompt(name, version=1, cache_ttl_seconds=0)
    assert by_version.compile(answer="42") == "Rate 42"
    assert by_version.tags == ["judge"]  # tags belong to every version
    # The SDK percent-encodes the slash: the name travels as one path segment.
    assert langfuse_standin.requests_to("/api/public/v2/prompts/evaluation%2Fquality", "GET")
    with http(langfuse_standin) as raw:
        assert raw.get("/api/public/v2/prompts/evaluation%2Fquality").json()["version"] == 1
        assert raw.get("/api/public/v2/prompts/evaluation/quality").status_code == 404
    langfuse_standin.not_emulated.clear()  # the unencoded path above is not a route, on purpose


def test_update_prompt_moves_labels_between_versions(make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    client.create_prompt(name="agents/research", prompt="v1", labels=["production"])
    client.create_prompt(name="agents/research", prompt="v2")

    updated = client.update_prompt(name="agents/research", version=2, new_labels=["production"])

    assert set(updated.labels) == {"production", "latest"}
    assert client.get_prompt("agents/research", cache_ttl_seconds=0).version == 2
    old = client.get_prompt("agents/research", version=1, cache_ttl_seconds=0)
    assert old.labels == []
    listing = client.api.prompts.list(name="agents/research")
    assert listing.data[0].versions == [1, 2]


def test_missing_prompt_is_a_404(langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    client.create_prompt(name="judge", prompt="x", labels=[])  # only `latest`, no production

    with pytest.raises(NotFoundError):
        client.get_prompt("judge", max_retries=0)
    with pytest.raises(NotFoundError):
        client.get_prompt("judge", version=7, max_retries=0)
    gets = langfuse_standin.requests_to("/api/public/v2/prompts/judge", "GET")
    assert [r.status for r in gets] == [404, 404]


# -- reading observations and traces ----------------------------------------------------------


def test_observations_page_with_a_cursor(make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    trace_id = record_agent_trace(client)
    fields = "core,basic,io,metadata,usage,prompt,time"

    pages = []
    cursor = None
    while True:
        page = client.api.observations.get_many(trace_id=trace_id, fields=fields, limit=2, cursor=cursor)
        pages.append(page.data)
        cursor = page.meta.cursor
        if cursor is None:
            break

    assert [len(data) for data in pages] == [2, 1]
    observations = {o.name: o for data in pages for o in data}
    assert len(observations) == 3
    root = observations["orchestrator"]
    assert root.type == "AGENT"
    assert root.is_root_observation is True
    assert root.input == '{"question": "why?"}'  # raw strings, never parsed
    assert root.output == "because"
    assert root.metadata == {"team": "a"}
    assert observations["search"].parent_observation_id == root.id
    assert observations["answer"].usage_details == {"input": 3}


def test_long_metadata_is_truncated_unless_expanded(make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    with client.start_as_current_observation(name="n", metadata={"long": "y" * 300, "n": 3}) as span:
        trace_id = span.trace_id
    client.flush()

    def metadata(**options: str) -> Any:
        (row,) = client.api.observations.get_many(trace_id=trace_id, fields="metadata", **options).data
        return row.metadata

    truncated = metadata()
    assert truncated["n"] == 3
    assert truncated["long"] == ('"' + "y" * 300)[:200]  # the stored JSON text, cut
    assert metadata(expand_metadata="long")["long"] == "y" * 300


def test_metadata_asked_for_with_input_and_output_is_whole(make_langfuse: LangfuseFactory) -> None:
    """With `io` asked for, the server reads metadata from its full events table: no value is cut."""
    client = make_langfuse()
    with client.start_as_current_observation(name="n", metadata={"long": "y" * 300}) as span:
        trace_id = span.trace_id
    client.flush()

    (row,) = client.api.observations.get_many(trace_id=trace_id, fields="io,metadata").data
    assert row.metadata["long"] == "y" * 300


def test_a_framework_span_s_input_and_output_are_lifted_from_its_attributes(
    make_langfuse: LangfuseFactory,
) -> None:
    """As the server's OTel ingestion does: OpenInference's `input.value` and `output.value` become
    the observation's input and output, and leave its kept attributes."""
    provider = TracerProvider()
    client = make_langfuse(tracer_provider=provider)
    schema = json.dumps({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20)}})
    with provider.get_tracer("openinference.instrumentation.x").start_as_current_span("lookup") as span:
        span.set_attributes(
            {"input.value": '{"q": "vpn"}', "output.value": "found", "tool.parameters": schema}
        )
        trace_id = format(span.get_span_context().trace_id, "032x")
    client.flush()

    (row,) = client.api.observations.get_many(trace_id=trace_id, fields="io,metadata").data
    assert (row.input, row.output) == ('{"q": "vpn"}', "found")
    assert "attributes.input.value" not in row.metadata
    assert row.metadata["attributes.tool.parameters"] == json.loads(schema)  # long, and whole


def test_generation_links_to_the_prompt_version_it_used(make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    client.create_prompt(name="judges/quality", prompt="Judge {{x}}", labels=["production"])
    prompt = client.get_prompt("judges/quality")
    with client.start_as_current_observation(
        name="judge", as_type="generation", prompt=prompt, level="ERROR", status_message="refused"
    ) as generation:
        trace_id = generation.trace_id
    client.flush()

    (row,) = client.api.observations.get_many(trace_id=trace_id, fields="core,basic,prompt").data
    assert (row.prompt_name, row.prompt_version) == ("judges/quality", 1)
    assert row.prompt_id is not None
    assert (row.level, row.status_message) == ("ERROR", "refused")


def test_trace_endpoint_embeds_observations_and_trace_attributes(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    with (
        propagate_attributes(trace_name="ticket-42", session_id="s-1", tags=["eval"], metadata={"run": "r1"}),
        client.start_as_current_observation(name="root", as_type="agent") as root,
    ):
        trace_id = root.trace_id
    client.create_score(name="done", value=1.0, trace_id=trace_id, data_type="NUMERIC")
    client.flush()

    with http(langfuse_standin) as raw:
        trace = raw.get(f"/api/public/traces/{trace_id}").json()
        missing = raw.get(f"/api/public/traces/{'0' * 32}")

    assert (trace["name"], trace["sessionId"], trace["tags"]) == ("ticket-42", "s-1", ["eval"])
    assert trace["metadata"] == {"run": "r1"}
    assert [o["type"] for o in trace["observations"]] == ["AGENT"]
    assert [s["name"] for s in trace["scores"]] == ["done"]
    assert missing.status_code == 404


def test_visibility_delay_hides_data_until_it_has_passed(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    langfuse_standin.visibility_delay = 0.6
    client = make_langfuse()
    trace_id = record_agent_trace(client)

    assert len(langfuse_standin.spans_for(trace_id)) == 3  # delivered ...
    assert client.api.observations.get_many(trace_id=trace_id).data == []  # ... not yet readable

    def readable() -> bool:
        return len(client.api.observations.get_many(trace_id=trace_id).data) == 3

    assert langfuse_standin.wait_for(readable, timeout=5)


def test_duplicate_rows_until_merged(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    trace_id = record_agent_trace(client)
    langfuse_standin.duplicate_observations = 1

    rows = client.api.observations.get_many(trace_id=trace_id, fields="core,time").data
    assert len(rows) == 6
    assert len({row.id for row in rows}) == 3
    langfuse_standin.merge_after = 0.0
    assert len(client.api.observations.get_many(trace_id=trace_id).data) == 3


# -- experiments (Langfuse v4, from span attributes) ------------------------------------------

SINCE = datetime(2020, 1, 1, tzinfo=UTC)


def run_sdk_experiment(client: Langfuse, dataset: str, run_name: str, items: int = 2) -> Any:
    """The SDK's own `run_experiment` on a fresh dataset of `items` items, with one run-level score."""
    client.create_dataset(name=dataset)
    for index in range(items):
        client.create_dataset_item(
            dataset_name=dataset, id=f"{dataset}-{index}", input={"q": index}, expected_output={"a": index}
        )
    result = client.get_dataset(dataset).run_experiment(
        name="standin",
        run_name=run_name,
        description="what the stand-in derives",
        task=lambda *, item, **_: {"answer": item.input["q"]},
        run_evaluators=[lambda *, item_results, **_: Evaluation(name="accuracy", value=0.5)],
    )
    client.flush()
    return result


def test_sdk_run_experiment_becomes_an_experiment_with_its_items(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse(flush_interval=60)  # only flush() sends: the spans, then the run-level score
    result = run_sdk_experiment(client, "ds", "run-1")
    dataset_id = langfuse_standin.datasets["ds"]["id"]

    [experiment] = client.api.experiments.list(from_start_time=SINCE, fields="core,metadata,scores").data
    assert experiment.id == result.experiment_id and experiment.name == "run-1"
    assert experiment.dataset_id == dataset_id and experiment.item_count == 2
    assert experiment.description == "what the stand-in derives"
    assert [(s.name, s.value) for s in experiment.scores or []] == [("accuracy", 0.5)]
    items = client.api.experiments.list_items(
        from_start_time=SINCE, experiment_id=result.experiment_id, fields="core,dataset,io,experimentMetadata"
    ).data
    assert sorted(i.experiment_item_id for i in items) == ["ds-0", "ds-1"]
    for item in items:
        [task] = [s for s in langfuse_standin.spans_for(item.trace_id) if s.name == "experiment-item-task"]
        assert item.id == task.span_id  # the item's root observation: the SDK's task span
        assert item.environment == "sdk-experiment" and item.experiment_dataset_id == dataset_id
        assert item.expected_output == {"a": item.input["q"]} and item.output == {"answer": item.input["q"]}
        assert item.experiment_name == "run-1" and item.metadata is None  # not requested
    assert langfuse_standin.requests_to("/api/public/dataset-run-items") == []  # v4: spans only


def test_experiment_listings_filter_and_page_with_a_cursor(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse(flush_interval=60)
    first, second = run_sdk_experiment(client, "a", "one", 3), run_sdk_experiment(client, "b", "two", 3)
    listed = client.api.experiments.list(from_start_time=SINCE, limit=1)
    assert [e.id for e in listed.data] == [second.experiment_id]  # the latest activity first
    page = client.api.experiments.list(from_start_time=SINCE, limit=1, cursor=listed.meta.cursor)
    assert [e.id for e in page.data] == [first.experiment_id] and page.meta.cursor is None
    assert [e.name for e in client.api.experiments.list(from_start_time=SINCE, name="one").data] == ["one"]
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert client.api.experiments.list(from_start_time=later).data == []
    seen: list[str] = []
    cursor = None
    while True:
        items = client.api.experiments.list_items(
            from_start_time=SINCE, experiment_name="one,two", limit=2, cursor=cursor
        )
        seen += [i.experiment_item_id for i in items.data]
        if not (cursor := items.meta.cursor):
            break
    assert sorted(seen) == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]
    with http(langfuse_standin) as api:
        assert api.get("/api/public/experiments").status_code == 400  # fromStartTime is required
        assert api.get("/api/public/experiment-items", params={"fromStartTime": "x"}).status_code == 400


def test_a_run_level_score_must_name_a_known_experiment(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    result = run_sdk_experiment(make_langfuse(), "ds", "run-1", items=1)
    score = {"name": "pass_rate", "value": 1.0, "dataType": "NUMERIC"}
    with http(langfuse_standin) as api:
        known = api.post("/api/public/scores", json=[score | {"datasetRunId": result.experiment_id}])
        unknown = api.post("/api/public/scores", json=[score | {"datasetRunId": "0123456789abcdef"}])
    assert known.status_code == 202
    assert (
        unknown.status_code == 207 and "Experiment (dataset run) 0123456789abcdef not found" in unknown.text
    )


def test_the_removed_dataset_run_endpoints_answer_404_and_are_recorded(
    langfuse_standin: LangfuseStandIn,
) -> None:
    with http(langfuse_standin) as api:
        created = api.post(
            "/api/public/dataset-run-items", json={"runName": "r", "datasetItemId": "i", "traceId": "t"}
        )
        listed = api.get("/api/public/datasets/ds/runs")
    assert created.status_code == listed.status_code == 404
    assert "removed from Langfuse Cloud on November 16, 2026" in created.json()["message"]
    assert langfuse_standin.removed_calls == [
        "POST /api/public/dataset-run-items",
        "GET /api/public/datasets/ds/runs",
    ]
    assert any(p.startswith("removed endpoint called") for p in langfuse_standin.problems())
    langfuse_standin.removed_calls.clear()  # called on purpose here


# -- project, health, score configs -----------------------------------------------------------


def test_project_health_and_score_configs(make_langfuse: LangfuseFactory) -> None:
    client = make_langfuse()
    assert client.api.health.health().status == "OK"
    assert client.api.projects.get().data[0].id == "standin-project"
    assert client.auth_check() is True

    config = client.api.score_configs.create(name="correct", data_type="BOOLEAN")
    assert [c.label for c in config.categories or []] == ["True", "False"]
    assert client.api.score_configs.get_by_id(config.id).name == "correct"
    assert [c.id for c in client.api.score_configs.get().data] == [config.id]


def test_score_with_an_unknown_config_is_rejected(langfuse_standin: LangfuseStandIn) -> None:
    item = {"traceId": "t" * 32, "name": "n", "value": 1, "configId": "nope"}
    with http(langfuse_standin) as client:
        reply = client.post("/api/public/scores", json=[item])
    assert reply.status_code == 207
    assert "not found" in reply.json()["errors"][0]["message"]


# -- auth and fault switches ------------------------------------------------------------------


def test_wrong_keys_get_a_401(langfuse_standin: LangfuseStandIn) -> None:
    with http(langfuse_standin, keys=(langfuse_standin.public_key, "wrong")) as client:
        reply = client.get("/api/public/projects")
        health = client.get("/api/public/health")  # unauthenticated on the real server too
    assert reply.status_code == 401
    assert "message" in reply.json()
    assert health.status_code == 200


def test_rate_limit_answers_429_with_retry_after(langfuse_standin: LangfuseStandIn) -> None:
    langfuse_standin.rate_limit_next(1, retry_after=2.5)
    with http(langfuse_standin) as client:
        limited = client.get("/api/public/projects")
        after = client.get("/api/public/projects")
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "3"  # delay-seconds are whole seconds
    assert limited.json()["message"]
    assert after.status_code == 200


def test_fail_next_answers_5xx_on_matching_paths_only(langfuse_standin: LangfuseStandIn) -> None:
    langfuse_standin.fail_next(2, status=503, path="/api/public/projects")
    with http(langfuse_standin) as client:
        health = client.get("/api/public/health")
        statuses = [client.get("/api/public/projects").status_code for _ in range(3)]
    assert health.status_code == 200
    assert statuses == [503, 503, 200]


def test_sdk_api_client_retries_a_5xx(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    langfuse_standin.fail_next(1, status=500, path="/api/public/projects")
    assert client.api.projects.get().data
    assert [r.status for r in langfuse_standin.requests_to("/api/public/projects")] == [500, 200]


def test_score_post_is_retried_after_a_5xx_and_stored_once(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    client = make_langfuse()
    langfuse_standin.fail_next(1, status=502, path="/api/public/scores")
    client.create_score(name="n", value=1.0, trace_id="a" * 32, score_id="retry", data_type="NUMERIC")
    client.flush()
    assert [r.status for r in langfuse_standin.requests_to("/api/public/scores")] == [502, 202]
    assert langfuse_standin.score_posts["retry"] == 1


def test_go_down_refuses_connections_and_come_back_restores(
    langfuse_standin: LangfuseStandIn,
) -> None:
    port = langfuse_standin.port
    langfuse_standin.go_down()
    assert langfuse_standin.down
    with http(langfuse_standin) as client, pytest.raises(httpx.ConnectError):
        client.get("/api/public/health")

    langfuse_standin.come_back()
    assert langfuse_standin.port == port
    with http(langfuse_standin) as client:
        assert client.get("/api/public/health").status_code == 200


def test_slow_delays_every_request(langfuse_standin: LangfuseStandIn) -> None:
    langfuse_standin.slow = 0.3
    with http(langfuse_standin) as client:
        started = time.monotonic()
        client.get("/api/public/health")
    assert time.monotonic() - started >= 0.3


# -- the response contract --------------------------------------------------------------------


def test_contract_rejects_a_wrong_response_shape() -> None:
    contract = load_contract()
    prompt: dict[str, Any] = {
        "type": "text",
        "name": "p",
        "version": 1,
        "prompt": "x",
        "config": {},
        "labels": [],
        "tags": [],
    }
    contract.check_response("GET", "/api/public/v2/prompts/{promptName}", 200, prompt)
    wrong_shapes = [
        prompt | {"version": "1"},
        prompt | {"prompt": ["not", "text"]},
        {key: value for key, value in prompt.items() if key != "labels"},
    ]
    for wrong in wrong_shapes:
        with pytest.raises(SchemaMismatchError):
            contract.check_response("GET", "/api/public/v2/prompts/{promptName}", 200, wrong)


def test_contract_checks_observations_nullable_fields_and_dates() -> None:
    contract = load_contract()
    ok = {"data": [_observation("2026-01-01T00:00:00.000Z")], "meta": {"cursor": None}}
    contract.check_response("GET", "/api/public/v2/observations", 200, ok)
    with pytest.raises(SchemaMismatchError, match="date-time"):
        contract.check_response(
            "GET", "/api/public/v2/observations", 200, {"data": [_observation("yesterday")], "meta": {}}
        )


def test_contract_knows_the_sdk_newer_score_responses() -> None:
    contract = load_contract()
    contract.check_response("POST", "/api/public/scores", 202, {"message": "Accepted"})
    contract.check_response("POST", "/api/public/scores", 207, {"accepted": 0, "rejected": 1, "errors": []})
    with pytest.raises(SchemaMismatchError):
        contract.check_response("POST", "/api/public/scores", 207, {"accepted": 1})
    with pytest.raises(SchemaMismatchError):  # errors need a message, whatever openapi.yml says
        contract.check_response("GET", "/api/public/projects", 500, "boom")


def test_standin_records_its_own_schema_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(langfuse_server, "SERVER_VERSION", 4.16)  # a number, not a string
    with LangfuseStandIn() as standin, http(standin) as client:
        reply = client.get("/api/public/health")
    assert reply.status_code == 500
    assert len(standin.schema_errors) == 1
    assert "/api/public/health" in standin.schema_errors[0]


def _observation(start_time: str) -> dict[str, Any]:
    return {
        "id": "a",
        "traceId": None,
        "startTime": start_time,
        "endTime": None,
        "projectId": "p",
        "parentObservationId": None,
        "type": "SPAN",
        "modelId": None,
        "inputPrice": None,
        "outputPrice": None,
        "totalPrice": None,
        "level": None,
    }


def test_span_export_is_retried_after_a_503(
    langfuse_standin: LangfuseStandIn, make_langfuse: LangfuseFactory
) -> None:
    langfuse_standin.fail_next(1, status=503, path="/api/public/otel/v1/traces")
    trace_id = record_agent_trace(make_langfuse())
    statuses = [r.status for r in langfuse_standin.requests_to("/api/public/otel/v1/traces")]
    assert statuses == [503, 200]
    assert len(langfuse_standin.spans_for(trace_id)) == 3
