"""The judges against what real OpenAI-compatible servers answer, as the stand-in reproduces it: a model
the server does not serve (llama.cpp's router says so with a 400, Ollama with a 404), a server still
loading its model (llama.cpp's 503), a server that queues what it cannot work on at once (Ollama,
llama.cpp; `validate`, which asks one judgement at a time, is told the concurrency option is
`evaluator run`'s); each unscored with what happened and the fix, and the run's token figures left not
measured when no call reported any. A thinking model's verdict is its answer, wherever the server
files its thoughts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from evaluator.config import LLMEndpoint
from evaluator.judge import JudgeOutcome, Judges, JudgeSettings, OpenAIJudgeModel, RetryPolicy
from evaluator.prompts import PromptLibrary
from tests.builders import TraceBuilder, scenario
from tests.integration.conftest import ROOT, Cli
from tests.standin.judge_server import JudgeStandIn

PROMPTS = ROOT / "prompts"
MODEL_FIX = "Fix: check [judge] model in evaluator.toml"


@pytest.fixture
def standin() -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as server:
        yield server


def _judge_three(standin: JudgeStandIn, notices: list[str]) -> list[JudgeOutcome]:
    """Three answers judged one after the other (quality, then correctness, each), as a run's do."""
    endpoint = LLMEndpoint(base_url=standin.base_url, model="judge-model", api_key=SecretStr("not-needed"))
    model = OpenAIJudgeModel(endpoint)
    judges = Judges(
        model=model,
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model", timeout_seconds=10),
        retry=RetryPolicy(max_attempts=2, sleep=lambda _: None),
        on_notice=lambda kind, message: notices.append(message),
    )
    sc = scenario(
        input="Which approach leads Spider?",
        expected={"answer": {"criteria": "c", "ground_truth": "DIN-SQL"}},
    )
    builder = TraceBuilder()
    builder.tool("pdf_retrieval", output="DIN-SQL reaches 85.3%")
    try:
        return [judges.judge(sc, "DIN-SQL, at 85.3%", builder.build(), run_id=f"r{i}") for i in range(3)]
    finally:
        model.close()


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        (
            "unknown_model",
            'answered HTTP 400: {"error": {"code": 400, "message": "model \'judge-model\' not found"',
        ),
        (
            "ollama_unknown_model",
            'answered HTTP 404: {"error": {"message": "model \'judge-model\' not found"',
        ),
    ],
)
def test_a_model_the_server_does_not_serve_names_the_fix_and_the_run_stops_asking(
    standin: JudgeStandIn, mode: str, said: str
) -> None:
    """llama.cpp's router answers an unknown model with a 400 (router_validate_model), Ollama with a 404:
    either is the endpoint's configuration, not one request's fault. Each judgement that asked says what
    the server said and the fix, is not retried, and after three of them the run asks no more."""
    standin.mode = mode
    notices: list[str] = []
    outcomes = _judge_three(standin, notices)
    asked = [o.detail[j] for o in outcomes for j in ("quality", "correctness") if o.detail[j]["calls"]]
    assert len(asked) == 3 and len(standin.requests) == 3  # one request each: a 4xx is not retried
    for detail in asked:
        assert detail["status"] == "unscored" and detail["failed"] is True
        assert said in detail["reason"] and MODEL_FIX in detail["reason"], detail["reason"]
    assert outcomes[2].detail["quality"]["reason"].startswith("not asked: "), outcomes[2].detail
    assert len(notices) == 1 and "failed 3 judgements in a row" in notices[0], notices
    assert MODEL_FIX in notices[0]


def test_a_run_whose_calls_reported_no_tokens_says_so_though_some_judgements_were_not_asked(
    demo_project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judgements the run did not ask (it had given up on the endpoint) made no call and cost no
    token; the calls that were made reported none. The run's tokens are not measured (null, 'not
    reported by the endpoint'), as for a run whose every judgement asked, never 0."""
    with JudgeStandIn(mode="ollama_unknown_model") as standin:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", standin.base_url)
        code, text = cli("run", str(ROOT / "scenarios/research"), "--tag", "pdf", "--output", "out.json")
    assert code == 1, text  # the workflow's verdicts, as without judges
    judge = json.loads(Path("out.json").read_text())["run"]["judge"]
    assert judge["unscored"] > judge["calls"] > 0  # some judgements not asked
    assert (judge["input_tokens"], judge["output_tokens"]) == (None, None), judge
    assert "tokens not reported by the endpoint" in text and "tokens 0 in" not in text


def test_a_server_still_loading_its_model_says_so_with_the_fix(standin: JudgeStandIn) -> None:
    """llama.cpp's server answers every request with a 503 "Loading model" until its model is loaded
    (its README, GET /health): retried as a 5xx, then unscored saying the server was still loading and
    to wait until it is ready."""
    standin.mode = "loading"
    notices: list[str] = []
    outcomes = _judge_three(standin, notices)
    first = outcomes[0].detail["quality"]
    assert first["status"] == "unscored" and first["calls"] == 2  # retried, within max_attempts
    assert '"message": "Loading model"' in first["reason"], first["reason"]
    assert "Fix: the judge endpoint is still loading its model" in first["reason"], first["reason"]
    assert len(notices) == 2 and "Fix: the judge endpoint is still loading its model" in notices[-1]


@pytest.mark.parametrize("mode", ["reasoning_split", "thinking"])
def test_a_thinking_model_s_verdict_is_its_answer_not_the_draft_in_its_thinking(
    standin: JudgeStandIn, mode: str
) -> None:
    """llama.cpp (--reasoning-format deepseek, its default) and vLLM (--reasoning-parser) file a thinking
    model's thoughts in `reasoning_content` and its answer in `content`; with the format off (Ollama's
    older /v1, llama.cpp's none) the thoughts come first in `content`, in a <think> block. Either way
    the verdict is the answer's, not the harsher draft the thoughts hold, and no repair is asked."""
    standin.mode = mode
    outcomes = _judge_three(standin, [])
    for outcome in outcomes:
        assert outcome.status.status == "scored", outcome.status.reason
        assert outcome.judged["quality"].to_json()["answer_quality"] == 0.9  # the draft says 0.1
        assert outcome.judged["correctness"].to_json()["verdict"] == "correct"  # the draft: WRONG
    assert len(standin.requests) == 6  # one each, no repair


def test_a_request_that_waited_out_its_timeout_in_the_server_s_queue_names_the_settings() -> None:
    """A local server works on a few requests at once and queues the rest (Ollama: OLLAMA_NUM_PARALLEL,
    default 1; llama.cpp: --parallel), and a request's time in its queue counts towards the timeout:
    eight judgements at once against a server answering one at a time, each in 0.4 s, wait well past a
    1 s timeout. Their reason names the settings that fix it, not only that no answer came."""
    queued = JudgeStandIn(latency=0.4, parallel=1).start()
    endpoint = LLMEndpoint(base_url=queued.base_url, model="judge-model", api_key=SecretStr("not-needed"))
    model = OpenAIJudgeModel(endpoint)
    judges = Judges(
        model=model,
        prompts=PromptLibrary(PROMPTS),
        settings=JudgeSettings(model="judge-model", timeout_seconds=1.0),
        retry=RetryPolicy(max_attempts=1),
    )
    sc = scenario(input="Which approach leads Spider?", expected={"answer": {"criteria": "c"}})
    trace = TraceBuilder().build()

    async def judge_all() -> list[JudgeOutcome]:
        try:
            answers = (judges.ajudge(sc, "DIN-SQL", trace, run_id=f"r{i}") for i in range(8))
            return list(await asyncio.gather(*answers))
        finally:
            await judges.aclose()

    try:
        outcomes = asyncio.run(judge_all())
    finally:
        model.close()
        queued.stop()
    reasons = [o.detail["quality"]["reason"] for o in outcomes if o.status.status == "unscored"]
    timed_out = [r for r in reasons if "did not answer within 1 s" in r]
    assert timed_out, reasons  # at most two of the eight were answered within 1 s
    for reason in timed_out:
        assert "Fix: raise [judge] timeout_seconds, or lower --judge-concurrency" in reason, reason
        assert "OLLAMA_NUM_PARALLEL" in reason and "--parallel" in reason


def test_a_judgement_validate_timed_out_names_the_concurrency_option_as_run_s(
    demo_project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`validate` asks one judgement at a time and takes no --judge-concurrency: a judgement of its
    that timed out says that option is `evaluator run`'s, not one to give `validate`."""
    config = demo_project / "evaluator.toml"
    config.write_text(config.read_text() + "\n[judge]\ntimeout_seconds = 0.5\nmax_attempts = 1\n")
    with JudgeStandIn(latency=1.5) as slow:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", slow.base_url)
        code, text = cli(
            "validate",
            "--scenario",
            str(ROOT / "scenarios/research/research-pdf-only.yaml"),
            "--trace",
            str(ROOT / "examples/traces/research-pdf-only.json"),
            "--json",
        )
    assert code == 1, text
    document, _ = json.JSONDecoder().raw_decode(text)  # the warnings on stderr follow it
    reason = document["judge"]["quality"]["reason"]
    assert "did not answer within 0.5 s" in reason, reason
    assert "--judge-concurrency (of `evaluator run`" in reason, reason
