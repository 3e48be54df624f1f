"""Posting scores to the Langfuse stand-in: a 400 is halved down to the guilty scores (the rest are
stored), and an answer no retry can mend is not retried."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from evaluator._time import Deadline
from evaluator.langfuse import LangfuseConnection, LangfuseSettings
from evaluator.results import JudgeStatus, Score, evaluate, scores_for
from evaluator.storage import Store, deliver
from tests.builders import scenario, trace_of
from tests.standin.langfuse_server import LangfuseStandIn

TIMESTAMP = "2026-11-22T10:00:00.000Z"


def _score(index: int) -> Score:
    return Score(
        id=f"00000000-0000-4000-8000-{index:012d}",
        trace_id="a" * 32,
        name="workflow_pass",
        value=1.0,
        data_type="BOOLEAN",
        comment=None,
        timestamp=TIMESTAMP,
        metadata={"run_id": "r"},
    )


@pytest.fixture
def connection(langfuse_standin: LangfuseStandIn) -> Iterator[LangfuseConnection]:
    public_key, secret_key = langfuse_standin.new_keys()
    settings = LangfuseSettings(
        public_key=public_key, secret_key=SecretStr(secret_key), base_url=langfuse_standin.base_url
    )
    connection = LangfuseConnection(settings)
    yield connection
    connection.shutdown(5)


def test_a_400_is_halved_until_the_batch_goes(
    connection: LangfuseConnection, langfuse_standin: LangfuseStandIn
) -> None:
    langfuse_standin.fail_next(1, status=400, path="/api/public/scores")
    scores = [_score(i) for i in range(4)]
    assert connection.scores.post_scores(scores) == {}
    assert set(langfuse_standin.scores) == {s.id for s in scores}
    statuses = [r.status for r in langfuse_standin.requests_to("/api/public/scores", "POST")]
    assert statuses == [400, 202, 202]  # the whole batch refused once, then its two halves taken


def test_an_answer_no_retry_can_mend_is_not_retried(
    connection: LangfuseConnection, langfuse_standin: LangfuseStandIn
) -> None:
    store = Store(None)
    result = evaluate(scenario(), trace_of(["a"], []), judge_status=JudgeStatus(status="skipped", reason="-"))
    store.record("r", result, scores_for(result, run_id="r"), destination=connection.destination)
    langfuse_standin.fail_next(1, status=404, path="/api/public/scores")
    report = deliver(
        store, connection.scores, connection.destination, deadline=Deadline(20), now=lambda: TIMESTAMP
    )
    assert report.sent == 0 and report.error is not None and "404" in report.error
    assert len(langfuse_standin.requests_to("/api/public/scores", "POST")) == 1


def _outbox(connection: LangfuseConnection, count: int) -> tuple[Store, list[Score]]:
    store = Store(None)
    result = evaluate(scenario(), trace_of(["a"], []), judge_status=JudgeStatus(status="skipped", reason="-"))
    scores = [_score(i) for i in range(count)]
    store.record("r", result, scores, destination=connection.destination)
    return store, scores


def _one_in_fifty(item: dict[str, object]) -> bool:
    return int(str(item["id"])[-12:]) % 50 == 7


@pytest.mark.parametrize("naming", ["id", "index"])
def test_a_207_naming_its_rejects_costs_no_bisection(
    connection: LangfuseConnection, langfuse_standin: LangfuseStandIn, naming: str
) -> None:
    # One score of every batch of 50 is refused for its content, the error naming it by id or index.
    langfuse_standin.score_errors = naming  # type: ignore[assignment]
    langfuse_standin.reject_scores(_one_in_fifty, "value out of range for score config", status=400)
    store, scores = _outbox(connection, 600)
    report = deliver(
        store, connection.scores, connection.destination, deadline=Deadline(30), force=True,
        now=lambda: TIMESTAMP,
    )  # fmt: skip
    bad = {s.id for s in scores if int(s.id[-12:]) % 50 == 7}
    posts = langfuse_standin.requests_to("/api/public/scores", "POST")
    assert len(posts) == 12  # one POST per batch: the answer named the refused score
    assert report.sent == 588 and report.unsent == 0 and report.error is None
    assert report.rejected == dict.fromkeys(bad, "HTTP 400: value out of range for score config")
    assert set(langfuse_standin.scores) == {s.id for s in scores} - bad
    assert all(n == 1 for n in langfuse_standin.score_posts.values())  # every good score arrived once
    assert (
        store.delivery_status(connection.destination).scores_rejected == 12
    )  # kept in the outbox, marked with the reason


def test_an_item_refused_for_a_passing_reason_is_posted_again_alone(
    connection: LangfuseConnection, langfuse_standin: LangfuseStandIn
) -> None:
    refused: set[str] = set()

    def once(item: dict[str, object]) -> bool:  # a 503 for the item's first post only
        first = _one_in_fifty(item) and item["id"] not in refused
        refused.add(str(item["id"]))
        return first

    langfuse_standin.score_errors = "id"
    langfuse_standin.reject_scores(once, "ClickHouse is busy", status=503)
    store, scores = _outbox(connection, 600)
    report = deliver(
        store, connection.scores, connection.destination, deadline=Deadline(30), force=True,
        now=lambda: TIMESTAMP,
    )  # fmt: skip
    posts = langfuse_standin.requests_to("/api/public/scores", "POST")
    assert len(posts) == 24  # each batch, then its refused score alone
    assert report.sent == 600 and not report.rejected and report.error is None
    assert set(langfuse_standin.scores) == {s.id for s in scores}
    assert all(n == 1 for n in langfuse_standin.score_posts.values())
