"""Posting a score batch: a 400 (or 413) refuses the whole batch for what may be one bad score, so the
batch is bisected down to the scores at fault, which come back as rejected (not retried as an outage);
the others are accepted. A 207 that names the items it refused (by id, by index) is not bisected: an
item refused for its content is rejected at once, one refused for a passing reason posted again alone,
once."""

import json
from collections.abc import Callable
from typing import Any, cast

import httpx
import pytest
from pydantic import SecretStr

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi
from evaluator.langfuse.scores import LangfuseScores
from evaluator.langfuse.settings import LangfuseSettings
from evaluator.results import JudgeStatus, Score, evaluate
from evaluator.storage import Store, deliver
from tests.builders import scenario, trace_of

BASE_URL = "http://langfuse.invalid"


def _scores(count: int) -> list[Score]:
    return [
        Score(
            id=f"score-{i:02d}",
            trace_id=f"{i:032x}",
            name="workflow_pass",
            value=1.0,
            data_type="BOOLEAN",
            comment=None,
            timestamp="2026-11-23T00:00:00.000Z",
        )
        for i in range(count)
    ]


def _sink(status: int, bad: set[str], posts: list[list[str]]) -> LangfuseScores:
    """Scores posted to a server that refuses a whole batch holding a bad id with `status`."""

    def answer(request: httpx.Request) -> httpx.Response:
        ids = [item["id"] for item in json.loads(request.content)]
        posts.append(ids)
        if bad & set(ids):
            return httpx.Response(status, json={"message": f"Invalid score(s): {sorted(bad & set(ids))}"})
        return httpx.Response(202, json={"message": "Accepted"})

    settings = LangfuseSettings(
        public_key="pk-lf-test", secret_key=SecretStr("sk-lf-test"), base_url=BASE_URL
    )
    api = LangfuseApi(client=cast(Any, None), settings=settings)  # posting scores needs no SDK client
    api._http = httpx.Client(base_url=BASE_URL, transport=httpx.MockTransport(answer))
    return LangfuseScores(api)


@pytest.mark.parametrize("status", [400, 413])
def test_a_refused_batch_is_bisected_to_the_scores_at_fault(status: int) -> None:
    posts: list[list[str]] = []
    scores = _scores(16)
    rejected = _sink(status, {"score-05"}, posts).post_scores(scores, deadline=Deadline(10))
    assert set(rejected) == {"score-05"}
    assert str(status) in rejected["score-05"]
    accepted = {i for ids in posts for i in ids if "score-05" not in ids}
    assert accepted == {s.id for s in scores} - {"score-05"}
    assert len(posts) <= 1 + 2 * 4  # the batch, then two halves per level down to one score


def test_one_bad_score_does_not_hold_the_outbox() -> None:
    store = Store(None)
    scores = _scores(120)
    result = evaluate(
        scenario(), trace_of(["orchestrator"], []), judge_status=JudgeStatus(status="skipped", reason="t")
    )
    store.record("run-1", result, scores, destination="here")
    posts: list[list[str]] = []
    report = deliver(
        store,
        _sink(400, {"score-07"}, posts),
        "here",
        batch_size=50,
        deadline=Deadline(10),
        now=lambda: "now",
    )
    assert report.sent == 119 and set(report.rejected) == {"score-07"} and report.unsent == 0
    assert report.error is None


def _answering(
    answer: Callable[[list[dict[str, Any]]], httpx.Response], posts: list[list[str]]
) -> LangfuseScores:
    """Scores posted to a server that answers each batch with `answer(items)`."""

    def reply(request: httpx.Request) -> httpx.Response:
        items = json.loads(request.content)
        posts.append([item["id"] for item in items])
        return answer(items)

    settings = LangfuseSettings(
        public_key="pk-lf-test", secret_key=SecretStr("sk-lf-test"), base_url=BASE_URL
    )
    api = LangfuseApi(client=cast(Any, None), settings=settings)
    api._http = httpx.Client(base_url=BASE_URL, transport=httpx.MockTransport(reply))
    return LangfuseScores(api)


def _ingestion_style(bad: str, status: int) -> Callable[[list[dict[str, Any]]], httpx.Response]:
    """207 to every batch, as the ingestion API answers: `successes` and `errors` with id and status."""

    def answer(items: list[dict[str, Any]]) -> httpx.Response:
        ok = [{"id": i["id"], "status": 201} for i in items if i["id"] != bad]
        errors = [
            {"id": i["id"], "status": status, "message": "invalid value"} for i in items if i["id"] == bad
        ]
        return httpx.Response(207, json={"successes": ok, "errors": errors})

    return answer


def test_a_207_naming_ids_as_the_ingestion_api_does_is_not_bisected() -> None:
    posts: list[list[str]] = []
    scores = _scores(50)
    rejected = _answering(_ingestion_style("score-07", 400), posts).post_scores(scores, deadline=Deadline(10))
    assert rejected == {"score-07": "HTTP 400: invalid value"}
    assert len(posts) == 1  # named, and refused for its content: not posted again


def test_a_207_naming_an_index_is_not_bisected() -> None:
    posts: list[list[str]] = []

    def answer(items: list[dict[str, Any]]) -> httpx.Response:
        errors = [{"index": 3, "message": "value must be 0 or 1"}] if len(items) > 3 else []
        return httpx.Response(
            207, json={"accepted": len(items) - len(errors), "rejected": len(errors), "errors": errors}
        )

    rejected = _answering(answer, posts).post_scores(_scores(16), deadline=Deadline(10))
    assert rejected == {"score-03": "value must be 0 or 1"} and len(posts) == 1


def test_a_207_that_names_nothing_is_bisected() -> None:
    posts: list[list[str]] = []

    def answer(items: list[dict[str, Any]]) -> httpx.Response:
        bad = any(i["id"] == "score-05" for i in items)
        errors = [{"message": "one score is invalid"}] if bad else []
        return httpx.Response(
            207, json={"accepted": len(items) - len(errors), "rejected": len(errors), "errors": errors}
        )

    rejected = _answering(answer, posts).post_scores(_scores(16), deadline=Deadline(10))
    assert rejected == {"score-05": "one score is invalid"}
    assert 1 < len(posts) <= 1 + 2 * 4


def test_an_item_refused_twice_for_a_passing_reason_is_an_outage() -> None:
    posts: list[list[str]] = []
    scores = _scores(10)
    with pytest.raises(LangfuseUnavailableError) as info:
        _answering(_ingestion_style("score-02", 503), posts).post_scores(scores, deadline=Deadline(10))
    assert info.value.status == 503 and "score-02" in str(info.value)
    assert posts == [[s.id for s in scores], ["score-02"]]  # the batch, then the refused score alone
