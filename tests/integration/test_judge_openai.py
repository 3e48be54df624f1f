"""The real `openai` client against the judge stand-in on loopback: every reply mode gives the right
scores or the right unscored reason; faults are retried within the bound; a server without structured
output is asked for plain JSON."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from rich.console import Console

from evaluator.config import LLMEndpoint
from evaluator.errors import JudgeUnavailableError
from evaluator.judge import JudgeOutcome, Judges, JudgeSettings, OpenAIJudgeModel, RateGate, RetryPolicy
from evaluator.prompts import ChatMessage, PromptLibrary
from evaluator.reports.console import _print_judge_usage
from evaluator.results import ScenarioResult, judge_usage
from tests.builders import TraceBuilder, scenario
from tests.standin.judge_server import JudgeStandIn, is_repair

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
KEY = "sk-judge-secret-0123456789"


@pytest.fixture
def standin() -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as server:
        yield server


_models: list[OpenAIJudgeModel] = []  # closed after each test: their connections are not left open


@pytest.fixture(autouse=True)
def _close_models() -> Iterator[None]:
    yield
    while _models:
        _models.pop().close()


def _judges(
    standin: JudgeStandIn,
    *,
    attempts: int = 4,
    timeout: float = 10.0,
    on_notice: Callable[[str, str], None] = lambda kind, message: None,
    **retry: Any,
) -> Judges:
    endpoint = LLMEndpoint(base_url=standin.base_url, model="judge-model", api_key=SecretStr(KEY))
    _models.append(OpenAIJudgeModel(endpoint))
    return Judges(
        model=_models[-1],
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model", timeout_seconds=timeout),
        retry=RetryPolicy(max_attempts=attempts, sleep=lambda _: None, **retry),
        on_notice=on_notice,
    )


def _judge(judges: Judges) -> JudgeOutcome:
    sc = scenario(
        input="Which approach leads Spider?",
        expected={"answer": {"criteria": "c", "ground_truth": "DIN-SQL"}},
    )
    builder = TraceBuilder()
    builder.tool("pdf_retrieval", output="DIN-SQL reaches 85.3%")
    return judges.judge(sc, "DIN-SQL, at 85.3%", builder.build(), run_id="r")


@pytest.mark.parametrize(
    "mode", ["valid", "fenced", "prose", "invalid_then_valid", "wrong", "thinking", "quoted", "sparse"]
)
def test_modes_that_score(standin: JudgeStandIn, mode: str) -> None:
    standin.mode = mode
    outcome = _judge(_judges(standin))
    assert outcome.status.status == "scored"
    quality = outcome.judged["quality"].to_json()
    assert (quality["answer_quality"], quality["factual_correctness"], quality["completeness"]) == (
        0.9,
        0.8,
        0.7,
    )
    assert quality["model"] == "judge-model"
    verdict = outcome.judged["correctness"].to_json()["verdict"]
    assert verdict == ("hallucination" if mode == "wrong" else "correct")
    repairs = sum(1 for body in standin.bodies() if any(m["role"] == "assistant" for m in body["messages"]))
    assert repairs == (2 if mode == "invalid_then_valid" else 0)
    expected_tokens = {"invalid_then_valid": 300, "sparse": 0}.get(mode, 150)
    assert outcome.judgements["quality"].usage.total == expected_tokens


def test_a_reply_cut_off_at_the_token_limit_is_not_scored_from_its_draft(standin: JudgeStandIn) -> None:
    standin.mode = "cut_off"  # the draft inside it is a valid object
    outcome = _judge(_judges(standin))
    assert outcome.judged == {} and outcome.status.status == "unscored"
    for judge in ("quality", "correctness"):
        reason = outcome.detail[judge]["reason"]
        assert "cut off at max_tokens = " in reason and "Fix: raise max_tokens" in reason, reason
    assert len(standin.requests) == 2  # no repair: it would be cut off the same way


def test_a_reply_the_content_filter_stopped_is_not_called_empty_nor_repaired(standin: JudgeStandIn) -> None:
    standin.mode = "content_filter"
    outcome = _judge(_judges(standin))
    assert outcome.judged == {} and outcome.status.status == "unscored"
    for judge in ("quality", "correctness"):
        reason = outcome.detail[judge]["reason"]
        assert reason.startswith("the endpoint's content filter stopped the reply"), reason
        assert "Fix: check the judge deployment's content filter" in reason, reason
    assert len(standin.requests) == 2  # no repair: it would be filtered the same way


def test_a_prompt_longer_than_the_model_s_context_names_the_settings_that_shorten_it(
    standin: JudgeStandIn,
) -> None:
    standin.mode = "too_long"
    outcome = _judge(_judges(standin))
    assert outcome.judged == {}
    for judge in ("quality", "correctness"):
        reason = outcome.detail[judge]["reason"]
        assert "HTTP 400: " in reason and "maximum context length is 8192 tokens" in reason, reason
        assert (
            "Fix: the judge prompt is longer than the model's context: lower [judge] source_budget_chars"
            in reason
        )
    assert len(standin.requests) == 2  # one each: a request error is not retried


@pytest.mark.parametrize(
    ("mode", "quality_reason", "correctness_reason"),
    [
        ("invalid", "the reply holds no JSON object", "the reply holds no JSON object"),
        (
            "out_of_range",
            "answer_quality: 1.5: Input should be less than or equal to 1",
            "verdict: 'MAYBE': Input should be 'CORRECT' or 'WRONG'",
        ),
    ],
)
def test_modes_that_end_unscored(
    standin: JudgeStandIn, mode: str, quality_reason: str, correctness_reason: str
) -> None:
    standin.mode = mode
    outcome = _judge(_judges(standin))
    assert outcome.judged == {} and outcome.status.status == "unscored"
    assert outcome.detail["quality"]["reason"].endswith(quality_reason)
    assert outcome.detail["correctness"]["reason"].endswith(correctness_reason)
    assert "after one repair request" in outcome.status.reason
    assert len(standin.requests) == 4  # each judge: the request and one repair
    assert outcome.detail["quality"]["raw_reply"]


def test_server_errors_are_retried_up_to_the_bound(standin: JudgeStandIn) -> None:
    standin.fail_next(20, status=500)
    outcome = _judge(_judges(standin, attempts=3))
    assert [r.status for r in standin.requests] == [500] * 6  # 3 tries for each judge, no more
    detail = outcome.detail["quality"]
    assert detail["status"] == "unscored" and detail["failed"] is True
    assert "after 3 request(s)" in detail["reason"] and "HTTP 500" in detail["reason"]
    assert KEY not in str(outcome.detail)


def test_a_429_is_waited_out_at_the_shared_gate(standin: JudgeStandIn) -> None:
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    standin.rate_limit_next(1, retry_after=7)
    outcome = _judge(_judges(standin, gate=RateGate(clock=lambda: now[0], sleep=sleep)))
    assert outcome.status.status == "scored"
    assert [r.status for r in standin.requests][:2] == [429, 200]
    assert slept == [7.0]  # the server's Retry-After, at the gate every judge call passes


def test_a_slow_reply_times_out_and_is_retried(standin: JudgeStandIn) -> None:
    standin.slow_next(1, seconds=2.0)
    outcome = _judge(_judges(standin, timeout=0.3))
    assert outcome.status.status == "scored"
    assert outcome.judgements["quality"].calls == 2


@pytest.mark.parametrize(
    "refusal",
    [
        True,
        (400, "The provided JSON schema contains features not supported by xgrammar."),  # vLLM
        (500, 'response_format type must be one of "text" or "json_object", but got: json_schema'),
    ],
)
def test_a_server_without_structured_output_gets_plain_requests(
    standin: JudgeStandIn, refusal: bool | tuple[int, str]
) -> None:
    standin.reject_response_format = refusal
    standin.mode = "prose"
    outcome = _judge(_judges(standin))
    assert outcome.status.status == "scored"
    with_format = ["response_format" in body for body in standin.bodies()]
    assert with_format == [True, False, False]  # refused once; plain for the rest of the run
    assert standin.requests[0].status in (400, 500)


def test_requests_carry_the_prompt_parameters_and_the_key_only_in_the_header(standin: JudgeStandIn) -> None:
    _judge(_judges(standin))
    first = standin.requests[0]
    assert first.body["temperature"] == 0 and first.body["model"] == "judge-model"
    assert first.body["response_format"]["json_schema"]["name"] == "quality_verdict"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(first.body)


def test_a_page_that_is_not_a_chat_completion_is_unscored_with_the_fix(standin: JudgeStandIn) -> None:
    standin.mode = "html"
    outcome = _judge(_judges(standin, attempts=1))
    assert outcome.judged == {} and outcome.status.status == "unscored"
    reason = outcome.detail["quality"]["reason"]
    assert "not a chat completion" in reason and "EVALUATOR_JUDGE_BASE_URL" in reason, reason


def test_a_completion_with_no_choice_is_no_reply_not_an_empty_one_to_repair(standin: JudgeStandIn) -> None:
    standin.mode = "no_choices"
    outcome = _judge(_judges(standin, attempts=2))
    detail = outcome.detail["quality"]
    assert detail["status"] == "unscored" and detail["failed"] is True
    assert "replied with no choice (`choices` is empty)" in detail["reason"], detail["reason"]
    assert [is_repair(body) for body in standin.bodies()].count(True) == 0  # nothing to repair
    assert detail["calls"] == 2  # tried again, as a reply that did not come


def test_a_reply_that_trickles_in_is_cut_off_at_the_timeout_for_the_whole_reply(
    standin: JudgeStandIn,
) -> None:
    standin.drip = 0.05  # each byte well within the per-read timeout; the whole reply takes over 10 s
    started = time.monotonic()
    outcome = _judge(_judges(standin, attempts=1, timeout=1.0))
    assert time.monotonic() - started < 6  # two judges, 1 s each, with a wide margin
    assert outcome.status.status == "unscored"
    assert "did not answer within 1 s" in outcome.detail["quality"]["reason"]


def test_the_judges_go_through_the_proxy_the_environment_names(
    standin: JudgeStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", standin.base_url.removesuffix("/v1"))  # the stand-in as the proxy
    endpoint = LLMEndpoint(base_url="http://judge.example/v1", model="judge-model", api_key=SecretStr(KEY))
    _models.append(OpenAIJudgeModel(endpoint))
    judges = Judges(
        model=_models[-1],
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model"),
        retry=RetryPolicy(max_attempts=1),
    )
    assert _judge(judges).status.status == "scored"
    assert standin.requests[0].path == "http://judge.example/v1/chat/completions"  # as a proxy is asked


def test_a_request_is_sent_as_create_would_send_it_without_the_clients_typed_transform(
    standin: JudgeStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body is plain JSON already: the client's per-request typed transform (about 1 ms of CPU a
    request, benchmarks/bench_judges.py) is not run, and the server receives what create() sends."""
    from openai import OpenAI
    from openai.resources.chat.completions import completions

    prompt = PromptLibrary(PROMPTS).get("evaluation/quality")
    messages = prompt.compile_messages(
        input="q", answer="a", criteria="c", sources="(none)", sources_note="n"
    )
    response_format = {"type": "json_schema", "json_schema": dict(prompt.config["json_schema"])}
    with OpenAI(base_url=standin.base_url, api_key=KEY, max_retries=0) as client:
        client.chat.completions.create(
            model="judge-model",
            messages=[m.model_dump() for m in messages],  # type: ignore[misc]
            temperature=0.0,
            max_tokens=600,
            response_format=response_format,  # type: ignore[arg-type]
        )

    def transform(*args: object, **kwargs: object) -> object:
        raise AssertionError("the typed transform ran")

    monkeypatch.setattr(completions, "maybe_transform", transform)
    endpoint = LLMEndpoint(base_url=standin.base_url, model="judge-model", api_key=SecretStr(KEY))
    _models.append(OpenAIJudgeModel(endpoint))
    reply = _models[-1].complete(
        messages,
        model="judge-model",
        temperature=0.0,
        response_format=response_format,
        timeout=10,
        max_tokens=600,
    )
    assert reply.text and reply.model == "judge-model"
    by_create, ours = standin.bodies()
    assert ours == by_create


def test_a_password_in_the_judge_s_base_url_is_never_in_what_the_run_says(standin: JudgeStandIn) -> None:
    host = standin.base_url.split("://", 1)[1]
    endpoint = LLMEndpoint(
        base_url=f"http://proxy-user:URL-SECRET@{host}", model="judge-model", api_key=SecretStr(KEY)
    )
    standin.fail_next(1, 500)
    model = OpenAIJudgeModel(endpoint)
    _models.append(model)
    with pytest.raises(JudgeUnavailableError) as info:
        model.complete(
            [ChatMessage(role="user", content="hi")],
            model="judge-model",
            temperature=0,
            response_format=None,
            timeout=5,
        )
    assert "answered HTTP 500" in str(info.value) and "***@" in str(info.value)
    assert "URL-SECRET" not in str(info.value) and "URL-SECRET" not in repr(endpoint)


@pytest.mark.parametrize("status", [400, 500])  # llama.cpp since its PR 17572, and before it
def test_llama_cpp_failing_to_convert_the_json_schema_gets_plain_requests(
    standin: JudgeStandIn, status: int
) -> None:
    standin.reject_response_format = (status, "JSON schema conversion failed:\nUnrecognized schema: {}")
    standin.mode = "prose"
    outcome = _judge(_judges(standin))
    assert outcome.status.status == "scored"
    assert ["response_format" in body for body in standin.bodies()] == [True, False, False]


@pytest.mark.parametrize(
    "refusal",
    [
        (500, 'Unrecognized schema: {"minimum": 0}'),  # llama.cpp before its PR 17572, without the prefix
        (400, "JSONSchema conversion failed: unsupported keyword"),
        (500, "json-schema to grammar: schema conversion failed"),
        (500, "failed to parse grammar"),
        (422, "Failed to convert the response schema"),
    ],
)
def test_a_schema_or_grammar_the_server_could_not_convert_gets_plain_requests(
    standin: JudgeStandIn, refusal: tuple[int, str]
) -> None:
    """However the server spells the schema ("JSON schema", JSONSchema, json-schema) and whether it
    names the schema or the grammar it failed to make of it, it is a refusal of structured output."""
    standin.reject_response_format = refusal
    standin.mode = "prose"
    outcome = _judge(_judges(standin))
    assert outcome.status.status == "scored"
    assert ["response_format" in body for body in standin.bodies()] == [True, False, False]


def test_an_error_in_a_200_is_the_endpoint_s_error_retried_never_an_empty_reply_repaired(
    standin: JudgeStandIn,
) -> None:
    standin.mode = "error_in_200"
    outcome = _judge(_judges(standin, attempts=2))
    detail = outcome.detail["quality"]
    assert outcome.judged == {} and detail["status"] == "unscored" and detail["failed"] is True
    assert "answered HTTP 200 with an error and no answer: upstream model overloaded" in detail["reason"]
    assert [is_repair(body) for body in standin.bodies()].count(True) == 0
    assert detail["calls"] == 2  # retried, as a 502


def test_a_reply_with_no_choices_is_not_a_chat_completion_never_an_empty_reply_repaired(
    standin: JudgeStandIn,
) -> None:
    standin.mode = "ollama_native"  # a base URL of Ollama's own API: its reply has no `choices`
    outcome = _judge(_judges(standin, attempts=1))
    detail = outcome.detail["quality"]
    assert outcome.judged == {} and detail["status"] == "unscored" and detail["failed"] is True
    assert "not a chat completion" in detail["reason"] and "EVALUATOR_JUDGE_BASE_URL" in detail["reason"]
    assert '(TypeError: it has no `choices`; it began \'{"model"' in detail["reason"], detail["reason"]
    assert [is_repair(body) for body in standin.bodies()].count(True) == 0


def test_a_reply_filed_as_reasoning_is_kept_not_read_and_names_the_fix(standin: JudgeStandIn) -> None:
    standin.mode = "reasoning_field"  # a valid verdict, but in `reasoning_content`
    outcome = _judge(_judges(standin))
    detail = outcome.detail["quality"]
    assert outcome.judged == {} and detail["status"] == "unscored"
    assert detail["reason"].startswith(
        "the endpoint put its output in `reasoning_content` with `content` empty"
    )
    assert "Fix: turn reasoning off for the judge model" in detail["reason"]
    assert '"answer_quality"' in detail["raw_reply"]  # the text is kept
    assert [is_repair(body) for body in standin.bodies()].count(True) == 0  # it would be filed the same


def test_a_reply_filed_as_reasoning_with_content_blank_is_kept_not_read_and_names_the_fix(
    standin: JudgeStandIn,
) -> None:
    standin.mode = "reasoning_blank"  # a valid verdict in `reasoning`, `content` only "\n\n"
    outcome = _judge(_judges(standin))
    detail = outcome.detail["quality"]
    assert outcome.judged == {} and detail["status"] == "unscored"
    assert detail["reason"].startswith("the endpoint put its output in `reasoning` with `content` empty")
    assert "Fix: turn reasoning off for the judge model" in detail["reason"]
    assert '"answer_quality"' in detail["raw_reply"]  # the text is kept
    assert [is_repair(body) for body in standin.bodies()].count(True) == 0


def test_a_server_that_reports_no_usage_leaves_the_tokens_not_measured_never_0(standin: JudgeStandIn) -> None:
    standin.mode = "no_usage"
    outcome = _judge(_judges(standin))
    assert outcome.status.status == "scored"
    assert outcome.detail["quality"]["tokens"] is None and outcome.detail["correctness"]["tokens"] is None
    result = ScenarioResult(
        scenario_id="s",
        trace_id="t",
        status="passed",
        judge_detail=outcome.detail,
        judge_status=outcome.status,
    )
    usage = judge_usage([result])
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (2, None, None)
    console = Console(record=True, width=200)
    _print_judge_usage(console, [result])
    assert "tokens not reported by the endpoint" in console.export_text()
    standin.mode = "valid"
    again = _judge(_judges(standin))
    both = [
        result,
        ScenarioResult(
            scenario_id="r",
            trace_id="u",
            status="passed",
            judge_detail=again.detail,
            judge_status=again.status,
        ),
    ]
    assert (judge_usage(both)["input_tokens"], judge_usage(both)["output_tokens"]) == (
        240,
        60,
    )  # what was reported


def test_a_reply_cut_off_by_a_dropped_connection_is_not_called_unreachable(standin: JudgeStandIn) -> None:
    standin.mode = "close_mid"
    outcome = _judge(_judges(standin, attempts=2))
    reason = outcome.detail["quality"]["reason"]
    assert outcome.judged == {} and "closed the connection before its reply ended" in reason, reason
    assert "unreachable" not in reason
    assert outcome.detail["quality"]["calls"] == 2  # retried, as a reply that did not come


def test_a_page_that_is_not_a_chat_completion_shows_how_it_began(standin: JudgeStandIn) -> None:
    standin.mode = "html"  # a proxy's page, with a 200
    reason = _judge(_judges(standin, attempts=1)).detail["quality"]["reason"]
    assert "it began '<html><body>Welcome to the model server</body></html>'" in reason, reason


def test_a_reasoning_model_refusing_temperature_and_max_tokens_is_asked_without_them_said_once(
    standin: JudgeStandIn,
) -> None:
    """OpenAI's reasoning models (gpt-5, o3, o4-mini...) answer 400 to the judge prompts' temperature 0
    and max_tokens: each refusal is said once, with what the judges send instead, and every request of
    the run after it goes without it (no temperature: the model's default; the limit as
    max_completion_tokens), so the judgements score."""
    standin.reasoning_model = True
    notices: list[str] = []
    judges = _judges(standin, on_notice=lambda kind, message: notices.append(message))
    for _ in range(2):
        outcome = _judge(judges)
        assert outcome.status.status == "scored", outcome.status.reason
    assert [r.status for r in standin.requests] == [400, 400, 200, 200, 200, 200]
    after = standin.bodies()[2:]
    assert all("temperature" not in body and "max_tokens" not in body for body in after)
    assert [body["max_completion_tokens"] for body in after] == [600, 300, 600, 300]  # the prompts'
    assert all("response_format" in body for body in after)  # structured output still asked for
    assert len(notices) == 2, notices
    limit, temperature = notices
    assert "Unsupported parameter: 'max_tokens'" in limit
    assert "send the judge prompts' max_tokens as max_completion_tokens" in limit
    assert "raise max_tokens in the judge prompt's config" in limit
    assert "Unsupported value: 'temperature'" in temperature
    assert "The judges send no temperature for the rest of this run" in temperature


def test_an_endpoint_that_takes_the_parameters_gets_them_as_the_prompt_says(standin: JudgeStandIn) -> None:
    notices: list[str] = []
    _judge(_judges(standin, on_notice=lambda kind, message: notices.append(message)))
    assert [(b["temperature"], b["max_tokens"]) for b in standin.bodies()] == [(0, 600), (0, 300)]
    assert not any("max_completion_tokens" in body for body in standin.bodies()) and notices == []


def test_a_reasoning_model_s_reply_cut_off_names_max_completion_tokens_and_the_fix(
    standin: JudgeStandIn,
) -> None:
    standin.reasoning_model, standin.mode = True, "cut_off"
    reason = _judge(_judges(standin)).detail["quality"]["reason"]
    assert "cut off at max_tokens = 600 in the judge prompt's config (sent as max_completion_tokens" in reason
    assert "Fix: raise max_tokens" in reason, reason


@pytest.mark.parametrize("before", ["", "x" * 232], ids=["whole", "cut-at-the-excerpt"])  # the key at 290
def test_an_error_echoing_the_key_never_puts_it_in_the_reason(standin: JudgeStandIn, before: str) -> None:
    """A proxy (or server) whose error echoes the request's Authorization header: the key is redacted
    before the body is quoted, also where the quote would cut it short."""
    standin.reject_response_format = (401, f"{before}Invalid key. Authorization: Bearer {KEY}")
    reason = _judge(_judges(standin, attempts=1)).detail["quality"]["reason"]
    assert "answered HTTP 401" in reason and KEY[:10] not in reason, reason
    assert "Bearer ***" in reason or before, reason


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"error": {"message": f"bad token {KEY}", "code": 401}},
            "with an error and no answer: bad token ***",
        ),
        ({"detail": f"no route; headers: Authorization: Bearer {KEY}"}, "Authorization: Bearer ***"),
    ],
    ids=["error-in-a-200", "not-a-completion"],
)
def test_a_200_echoing_the_key_never_puts_it_in_the_message(body: dict[str, Any], said: str) -> None:
    model = OpenAIJudgeModel(LLMEndpoint(base_url="http://127.0.0.1:9/v1", model="m", api_key=SecretStr(KEY)))
    _models.append(model)
    with pytest.raises(JudgeUnavailableError) as info:
        model._read(json.dumps(body).encode(), "m")
    assert said in str(info.value) and KEY not in str(info.value), str(info.value)
