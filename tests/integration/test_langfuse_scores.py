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
