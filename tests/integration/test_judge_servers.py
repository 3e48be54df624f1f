"""The judges against what real OpenAI-compatible servers answer, as the stand-in reproduces it: a model
the server does not serve (llama.cpp's router says so with a 400, Ollama with a 404), unscored with
what happened and the fix, and counted as the endpoint failing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from evaluator.config import LLMEndpoint
from evaluator.judge import JudgeOutcome, Judges, JudgeSettings, OpenAIJudgeModel, RetryPolicy
from evaluator.prompts import PromptLibrary
from tests.builders import TraceBuilder, scenario
from tests.integration.conftest import ROOT
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
            'answered HTTP 404: {"error": {"message": "model \\"judge-model\\" not found, try',
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
