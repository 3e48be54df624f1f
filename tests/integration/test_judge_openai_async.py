"""The judges on an event loop (`Judges.ajudge`, what a run's judge stage uses): the real `AsyncOpenAI`
client against the judge stand-in on loopback gives the same verdicts, retries, waits and bounds as
the sync path (tests/integration/test_judge_openai.py), on one loop and without a thread per call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from evaluator.config import LLMEndpoint
from evaluator.judge import JudgeOutcome, Judges, JudgeSettings, OpenAIJudgeModel, RateGate, RetryPolicy
from evaluator.prompts import PromptLibrary
from tests.builders import TraceBuilder, scenario
from tests.standin.judge_server import JudgeStandIn

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
KEY = "sk-judge-secret-0123456789"


@pytest.fixture
def standin() -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as server:
        yield server


async def _no_wait(seconds: float) -> None:
    return None


def _judges(
    standin: JudgeStandIn,
    *,
    attempts: int = 4,
    timeout: float = 10.0,
    on_notice: Callable[[str, str], None] = lambda kind, message: None,
    **retry: Any,
) -> Judges:
    endpoint = LLMEndpoint(base_url=standin.base_url, model="judge-model", api_key=SecretStr(KEY))
    retry.setdefault("asleep", _no_wait)
    return Judges(
        model=OpenAIJudgeModel(endpoint),
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model", timeout_seconds=timeout),
        retry=RetryPolicy(max_attempts=attempts, sleep=lambda _: None, **retry),
        on_notice=on_notice,
    )


def _ajudge(judges: Judges, count: int = 1) -> list[JudgeOutcome]:
    """`count` judgements at once on one loop (in this thread), the model closed on that loop after."""
    sc = scenario(
        input="Which approach leads Spider?",
        expected={"answer": {"criteria": "c", "ground_truth": "DIN-SQL"}},
    )
    builder = TraceBuilder()
    builder.tool("pdf_retrieval", output="DIN-SQL reaches 85.3%")
    trace = builder.build()

    async def judge_all() -> list[JudgeOutcome]:
        try:
            return list(
                await asyncio.gather(
                    *(judges.ajudge(sc, "DIN-SQL, at 85.3%", trace, run_id=f"r{i}") for i in range(count))
                )
            )
        finally:
            await judges.aclose()

    try:
        return asyncio.run(judge_all())
    finally:
        assert isinstance(judges.model, OpenAIJudgeModel)
        judges.model.close()


def test_the_awaited_judges_score_as_the_sync_ones_do_on_one_loop_without_threads(
    standin: JudgeStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.mode = "invalid_then_valid"  # the repair request goes through the same conversation
    judges = _judges(standin)
    assert judges.awaitable

    in_threads: list[str] = []
    real = asyncio.to_thread

    async def to_thread(function: Any, /, *args: object, **kwargs: object) -> object:
        in_threads.append(getattr(function, "__qualname__", repr(function)))
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)
    outcomes = _ajudge(judges, count=4)
    for outcome in outcomes:
        assert outcome.status.status == "scored"
        quality = outcome.judged["quality"].to_json()
        assert (quality["answer_quality"], quality["completeness"]) == (0.9, 0.7)
        assert outcome.judged["correctness"].to_json()["verdict"] == "correct"
        assert outcome.judgements["quality"].calls == 2  # the request and its repair
    assert len(standin.requests) == 16
    # no judgement went to a thread: only the openai client's look at the platform (its first requests)
    assert set(in_threads) == {"get_platform"}


def test_server_errors_are_retried_up_to_the_bound(standin: JudgeStandIn) -> None:
    standin.fail_next(20, status=500)
    (outcome,) = _ajudge(_judges(standin, attempts=3))
    assert [r.status for r in standin.requests] == [500] * 6  # 3 tries for each judge, no more
    detail = outcome.detail["quality"]
    assert detail["status"] == "unscored" and detail["failed"] is True
    assert "after 3 request(s)" in detail["reason"] and "HTTP 500" in detail["reason"]
    assert KEY not in str(outcome.detail)


def test_a_429_is_waited_out_at_the_shared_gate(standin: JudgeStandIn) -> None:
    slept: list[float] = []
    now = [0.0]

    async def asleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    standin.rate_limit_next(1, retry_after=7)
    (outcome,) = _ajudge(_judges(standin, gate=RateGate(clock=lambda: now[0]), asleep=asleep))
    assert outcome.status.status == "scored"
    assert [r.status for r in standin.requests][:2] == [429, 200]
    # the retry's own wait is 0 after a 429; the server's Retry-After is waited at the gate every
    # judge call passes
    assert slept == [0.0, 7.0]


def test_a_slow_reply_times_out_and_is_retried(standin: JudgeStandIn) -> None:
    standin.slow_next(1, seconds=2.0)
    (outcome,) = _ajudge(_judges(standin, timeout=0.3))
    assert outcome.status.status == "scored"
    assert outcome.judgements["quality"].calls == 2


def test_a_server_without_structured_output_gets_plain_requests(standin: JudgeStandIn) -> None:
    standin.reject_response_format = True
    standin.mode = "prose"
    (outcome,) = _ajudge(_judges(standin))
    assert outcome.status.status == "scored"
    assert ["response_format" in body for body in standin.bodies()] == [True, False, False]


def test_a_reply_that_trickles_in_is_cut_off_at_the_timeout_for_the_whole_reply(
    standin: JudgeStandIn,
) -> None:
    standin.drip = 0.05  # each byte well within the per-read timeout; the whole reply takes over 10 s
    started = time.monotonic()
    (outcome,) = _ajudge(_judges(standin, attempts=1, timeout=1.0))
    assert time.monotonic() - started < 6  # two judges, 1 s each, with a wide margin
    assert outcome.status.status == "unscored"
    assert "did not answer within 1 s" in outcome.detail["quality"]["reason"]


def test_a_page_that_is_not_a_chat_completion_is_unscored_with_the_fix(standin: JudgeStandIn) -> None:
    standin.mode = "html"
    (outcome,) = _ajudge(_judges(standin, attempts=1))
    assert outcome.judged == {} and outcome.status.status == "unscored"
    reason = outcome.detail["quality"]["reason"]
    assert "not a chat completion" in reason and "EVALUATOR_JUDGE_BASE_URL" in reason, reason


def test_a_dead_endpoint_is_given_up_after_three_judgements_in_a_row() -> None:
    endpoint = LLMEndpoint(base_url="http://127.0.0.1:9/v1", model="judge-model", api_key=SecretStr(KEY))
    notices: list[str] = []
    judges = Judges(
        model=OpenAIJudgeModel(endpoint),
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model", timeout_seconds=1.0),
        retry=RetryPolicy(max_attempts=1, asleep=_no_wait),
        on_notice=lambda kind, message: notices.append(message),
    )
    outcomes = _ajudge(judges, count=3)
    reasons = [o.detail["quality"]["reason"] for o in outcomes]
    assert all("unreachable" in r or "not asked" in r for r in reasons), reasons
    assert len(notices) == 1 and "failed 3 judgements in a row" in notices[0]


def test_the_awaited_judges_go_through_the_proxy_the_environment_names(
    standin: JudgeStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async client's own transport (evaluator/judge/async_transport.py) serves direct requests
    only: a proxy the environment names is still used, as httpx uses it."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", standin.base_url.removesuffix("/v1"))  # the stand-in as the proxy
    endpoint = LLMEndpoint(base_url="http://judge.example/v1", model="judge-model", api_key=SecretStr(KEY))
    judges = Judges(
        model=OpenAIJudgeModel(endpoint),
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model"),
        retry=RetryPolicy(max_attempts=1),
    )
    [outcome] = _ajudge(judges)
    assert outcome.status.status == "scored"
    assert standin.requests[0].path == "http://judge.example/v1/chat/completions"  # as a proxy is asked


def test_a_request_under_way_when_the_run_gives_up_on_the_endpoint_is_cancelled(
    standin: JudgeStandIn,
) -> None:
    """Four judgements at once: the first request hangs, the next three get a 500 (no retry), so the
    run gives up on the endpoint. The hanging request is cancelled then, not waited out (20 s here,
    60 s at the defaults), and its judgement says it was not retried."""
    standin.slow_next(1, seconds=30.0)
    standin.fail_next(10, status=500)
    notices: list[str] = []
    judges = _judges(
        standin, attempts=1, timeout=20.0, on_notice=lambda kind, message: notices.append(message)
    )
    started = time.monotonic()
    outcomes = _ajudge(judges, count=4)
    assert time.monotonic() - started < 8  # not the hanging request's 20 s timeout
    cut = [o for o in outcomes if "not retried" in o.detail["quality"]["reason"]]
    assert cut, [o.detail["quality"]["reason"] for o in outcomes]  # the hanging one (and any other under way)
    for outcome in cut:
        quality = outcome.detail["quality"]
        assert quality["status"] == "unscored" and quality["calls"] == 1
        assert "not retried: the judge endpoint failed 3 judgements in a row" in quality["reason"]
        assert outcome.detail["correctness"]["reason"].startswith("not asked:")
    assert len(notices) == 1 and "failed 3 judgements in a row" in notices[0]


def test_a_reasoning_model_refusing_temperature_and_max_tokens_is_asked_without_them_said_once(
    standin: JudgeStandIn,
) -> None:
    """Eight judgements at once on OpenAI's reasoning models' 400s (temperature 0, max_tokens): those
    already sent when the first refusal came are each sent again without what was refused, every later
    request goes without it, and each refusal is said once for the run."""
    standin.reasoning_model = True
    notices: list[str] = []
    outcomes = _ajudge(_judges(standin, on_notice=lambda kind, message: notices.append(message)), count=8)
    assert all(o.status.status == "scored" for o in outcomes), [o.status.reason for o in outcomes]
    answered = [r.body for r in standin.requests if r.status == 200]
    assert len(answered) == 16
    assert all(
        "temperature" not in b and "max_tokens" not in b and b["max_completion_tokens"] for b in answered
    )
    assert len(notices) == 2, notices
    assert sum("max_completion_tokens" in n for n in notices) == 1
    assert sum("send no temperature" in n for n in notices) == 1
