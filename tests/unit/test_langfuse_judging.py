"""langfuse/judging.py: each judgement its own trace, in-process too (embedded mode: captured, not
sent): one GENERATION per model call, with model, usage, cost, and a WARNING on an unusable reply."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from langfuse import propagate_attributes
from opentelemetry.sdk.trace import ReadableSpan

from evaluator.errors import ParameterRejectedError
from evaluator.judge import FakeJudgeModel, Judges, ModelReply, RetryPolicy, TokenUsage
from evaluator.langfuse import JudgeTracing, Tracing
from evaluator.prompts import ChatMessage, PromptLibrary
from evaluator.trace import Trace
from tests.builders import TraceBuilder, scenario, served

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
CORRECT = '{"verdict": "CORRECT", "reason": "same"}'


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


@pytest.fixture
def ended(tracing: Tracing, monkeypatch: pytest.MonkeyPatch) -> list[ReadableSpan]:
    """Every span that ends through the capture during the test, in order (the capture's own
    `on_end` still runs; it is restored after the test)."""
    spans: list[ReadableSpan] = []
    original = tracing.collector.on_end

    def keep(span: ReadableSpan) -> None:
        spans.append(span)
        original(span)

    monkeypatch.setattr(tracing.collector, "on_end", keep)
    return spans


def _judge(tracing: Tracing, replies: list[str]) -> tuple[list[Trace], dict[str, object]]:
    captured: list[Trace] = []
    judges = Judges(
        model=FakeJudgeModel(replies, usage=TokenUsage(input=1000, output=100)),
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing, prices=(2.0, 8.0), on_trace=captured.append),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})
    outcome = judges.judge(sc, "It is RESDSQL", TraceBuilder().build(), run_id="run-x")
    return captured, outcome.detail["correctness"]


def test_a_judgement_is_its_own_trace_with_one_generation_per_call(tracing: Tracing) -> None:
    captured, detail = _judge(tracing, ["not json", CORRECT])
    [trace] = captured
    assert trace.id == detail["trace_id"] == JudgeTracing.trace_id_for("run-x", "s-7", "correctness")
    assert trace.name == "judge:s-7"
    assert trace.observation_count == 2  # the request and the repair
    assert detail["calls"] == 2 and detail["status"] == "scored"


def test_generations_carry_model_usage_cost_and_the_unusable_reply(
    tracing: Tracing, ended: list[ReadableSpan]
) -> None:
    _judge(tracing, ["not json", CORRECT])
    first, second = sorted(ended, key=lambda s: s.start_time or 0)
    attributes = dict(first.attributes or {})
    assert attributes["langfuse.observation.type"] == "generation"
    assert attributes["langfuse.observation.model.name"] == "gpt-4o-mini"
    assert json.loads(attributes["langfuse.observation.usage_details"]) == {
        "input": 1000,
        "output": 100,
        "total": 1100,
    }
    cost = json.loads(attributes["langfuse.observation.cost_details"])
    assert cost == pytest.approx({"input": 0.002, "output": 0.0008, "total": 0.0028})
    assert attributes["langfuse.observation.level"] == "WARNING"
    assert "not a valid verdict" in attributes["langfuse.observation.status_message"]
    assert "langfuse.observation.level" not in dict(second.attributes or {})
    assert "langfuse.observation.prompt.name" not in attributes  # a local file is never linked


def test_embedded_and_not_captured_a_judgement_makes_no_spans_and_keeps_its_trace_id(
    tracing: Tracing, ended: list[ReadableSpan]
) -> None:
    """Nobody would ever see them (never sent, not captured): they are not made."""
    judges = Judges(
        model=FakeJudgeModel(["not json", CORRECT]),
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})
    outcome = judges.judge(sc, "It is RESDSQL", TraceBuilder().build(), run_id="run-x")
    detail = outcome.detail["correctness"]
    assert detail["status"] == "scored" and detail["calls"] == 2
    assert detail["trace_id"] == JudgeTracing.trace_id_for("run-x", "s-7", "correctness")
    assert ended == []


def _hide_questions(*, data: object) -> object:
    """A team's `Langfuse(mask=...)`: hides the question in the messages."""
    return json.loads(json.dumps(data).replace("q?", "[masked]"))


@pytest.mark.parametrize(
    ("outcome", "mask"),
    [("succeeded", None), ("unusable", None), ("failed", None), ("succeeded", _hide_questions)],
)
def test_a_generation_has_the_attributes_the_sdks_own_path_writes(
    tracing: Tracing, ended: list[ReadableSpan], monkeypatch: pytest.MonkeyPatch, outcome: str, mask: object
) -> None:
    """The generation is written straight onto the SDK's tracer (a fraction of the SDK path's CPU): its
    attributes and status are those `start_as_current_observation(as_type="generation",
    trace_context=...)` and `update()` write for the same call, inside `propagate_attributes` with the
    judge trace's attributes: environment, release and the client's mask included (span ids aside)."""
    monkeypatch.setattr(tracing.client, "_environment", "ci")
    monkeypatch.setattr(tracing.client, "_release", "v9")
    monkeypatch.setattr(tracing.client, "_mask", mask)
    prompt = served(PromptLibrary(PROMPTS).get("evaluation/quality"))
    messages = prompt.compile_messages(input="q?", answer="a", criteria="c", sources="s", sources_note="n")
    parameters = {"temperature": 0.0, "max_tokens": 600}
    usage, prices = TokenUsage(input=1200, output=80), (2.0, 8.0)
    judge_tracing = JudgeTracing(tracing, prices=prices, on_trace=lambda _: None)
    with (
        judge_tracing.judgement(
            run_id="run-x", scenario_id="s-1", judge="quality", prompt=prompt
        ) as judgement,
        judgement.generation(name=prompt.name, messages=messages, model="m-1", parameters=parameters) as ours,
    ):
        trace_id = judgement.trace_id
        if outcome == "failed":
            ours.failed("the judge endpoint is unreachable")
        else:
            ours.succeeded(output='{"score": 4}', usage=usage, model="m-1-served")
        if outcome == "unusable":
            ours.unusable("no JSON object")
    assert trace_id is not None
    tracing.collector.open(trace_id)
    with (
        propagate_attributes(
            trace_name="judge:s-1",
            session_id="run-x",
            tags=["run-x", "judge", "judge:quality"],
            metadata={
                "scenario_id": "s-1",
                "run_id": "run-x",
                "judge": "quality",
                "judge_prompt": f"{prompt.name}@v{prompt.version}",
            },
        ),
        tracing.client.start_as_current_observation(
            name=prompt.name,
            as_type="generation",
            input=[m.model_dump() for m in messages],
            model="m-1",
            model_parameters=dict(parameters),
            prompt=prompt.link,
            trace_context={"trace_id": trace_id},
        ) as sdk,
    ):
        if outcome == "failed":
            sdk.update(level="ERROR", status_message="the judge endpoint is unreachable")
        else:
            sdk.update(
                output='{"score": 4}',
                model="m-1-served",
                usage_details={"input": 1200, "output": 80, "total": 1280},
                cost_details={"input": 0.0024, "output": 0.00064, "total": 0.0024 + 0.00064},
            )
        if outcome == "unusable":
            sdk.update(level="WARNING", status_message="the reply is not a valid verdict: no JSON object")
    tracing.collector.take(trace_id)
    lean, reference = ended
    assert lean.name == reference.name == prompt.name
    assert lean.context.trace_id == reference.context.trace_id
    assert dict(lean.attributes or {}) == dict(reference.attributes or {})
    assert (lean.status.status_code, lean.status.description) == (
        reference.status.status_code,
        reference.status.description,
    )
    attributes = dict(lean.attributes or {})
    assert "langfuse.observation.prompt.name" in attributes  # the served version, linked
    assert attributes["langfuse.environment"] == "ci"
    assert ("[masked]" in str(attributes["langfuse.observation.input"])) is (mask is not None)


def test_the_judge_trace_keeps_its_own_attributes_inside_a_callers_propagated_ones(
    tracing: Tracing, ended: list[ReadableSpan]
) -> None:
    """Judged inside a team's `propagate_attributes` (another trace name, session and tags), the judge's
    generation still names its own trace, session and tags."""
    prompt = PromptLibrary(PROMPTS).get("evaluation/quality")
    judge_tracing = JudgeTracing(tracing, on_trace=lambda _: None)
    with (
        propagate_attributes(trace_name="theirs", session_id="their-session", tags=["theirs"]),
        judge_tracing.judgement(
            run_id="run-x", scenario_id="s-1", judge="quality", prompt=prompt
        ) as judgement,
        judgement.generation(name=prompt.name, messages=prompt.messages, model="m", parameters={}),
    ):
        pass
    [span] = ended
    attributes = dict(span.attributes or {})
    assert attributes["langfuse.trace.name"] == "judge:s-1"
    assert attributes["session.id"] == "run-x"
    assert list(attributes["langfuse.trace.tags"]) == ["run-x", "judge", "judge:quality"]


class _NoReply:
    """An awaitable judge model whose requests get no reply: each waits until it is cancelled."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    def complete(self, messages: Sequence[ChatMessage], **options: Any) -> ModelReply:
        raise AssertionError("asked on the event loop only")

    async def acomplete(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str,
        temperature: float,
        response_format: Mapping[str, Any] | None,
        timeout: float,
        max_tokens: int | None = None,
    ) -> ModelReply:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("never replied")

    async def aclose(self) -> None:
        return None


def test_a_judgement_cancelled_mid_request_ends_its_generation_where_it_began(
    tracing: Tracing, ended: list[ReadableSpan], caplog: pytest.LogCaptureFixture
) -> None:
    """Ctrl-C cancels a judgement whose request is in flight: its generation is ended then, in the
    judgement's own task (its trace handed over with it), not left to the garbage collector, which
    ended it later from another thread or context, where OpenTelemetry cannot detach the context the
    generation made current ("Failed to detach context", a traceback per judgement in flight)."""
    captured: list[Trace] = []
    model = _NoReply()
    judges = Judges(
        model=model,
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing, on_trace=captured.append),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})

    async def cancelled() -> None:
        judging = asyncio.create_task(judges.ajudge(sc, "It is RESDSQL", TraceBuilder().build(), run_id="r"))
        await model.asked.wait()
        judging.cancel()
        with pytest.raises(asyncio.CancelledError):
            await judging

    with caplog.at_level(logging.ERROR):
        asyncio.run(cancelled())
        gc.collect()  # what the cancelled task left behind, finalized here: in another context
    assert "Failed to detach context" not in caplog.text
    [generation] = ended
    assert generation.end_time is not None
    [trace] = captured
    assert trace.id == JudgeTracing.trace_id_for("r", "s-7", "correctness") and trace.observation_count == 1


def test_a_generation_shows_the_parameters_the_endpoint_took_not_those_it_refused(
    tracing: Tracing, ended: list[ReadableSpan]
) -> None:
    """The endpoint refused the prompt's temperature (a reasoning model): the generation that met it
    and every later one show what was sent in the end, the prompt's max_tokens without a temperature."""
    judges = Judges(
        model=FakeJudgeModel(
            [ParameterRejectedError("no temperature", param="temperature"), CORRECT, CORRECT]
        ),
        prompts=PromptLibrary(PROMPTS),
        tracer=JudgeTracing(tracing, on_trace=lambda _: None),
        retry=RetryPolicy(sleep=lambda _: None),
    )
    sc = scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}})
    for answer in ("It is RESDSQL", "It is DAIL-SQL"):
        assert judges.judge(sc, answer, TraceBuilder().build(), run_id="run-x").status.status == "scored"
    shown = [json.loads(str((s.attributes or {})["langfuse.observation.model.parameters"])) for s in ended]
    assert shown == [{"max_tokens": 300}, {"max_tokens": 300}]
