"""langfuse/judging.py, connected with `keep`: each judgement's trace is kept for the store, by
scenario, with the spans Langfuse is sent (the Langfuse stand-in), so that `sync` can send it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from evaluator.judge import FakeJudgeModel, Judges, MemoryVerdictCache, RetryPolicy
from evaluator.judge.metric import PromptRef
from evaluator.judge.replies import CorrectnessReply
from evaluator.langfuse import JudgeTracing, Tracing
from evaluator.langfuse.settings import LangfuseSettings
from evaluator.metrics import MetricContext
from evaluator.prompts import PromptLibrary
from tests.builders import TraceBuilder, scenario
from tests.standin.langfuse_server import LangfuseStandIn

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
CORRECT = '{"verdict": "CORRECT", "reason": "same"}'
CONTEXT = MetricContext(
    scenario=scenario(id="s-7", expected={"answer": {"ground_truth": "DIN-SQL"}}),
    trace=TraceBuilder().build(),
    answer="DIN-SQL",
)


@pytest.fixture
def tracing(langfuse_standin: LangfuseStandIn) -> Iterator[Tracing]:
    public_key, secret_key = langfuse_standin.new_keys()
    settings = LangfuseSettings(
        public_key=public_key, secret_key=SecretStr(secret_key), base_url=langfuse_standin.base_url
    )
    tracing = Tracing.connected(settings)
    yield tracing
    tracing.shutdown()


def _vote(judges: Judges, answer: str = "DIN-SQL") -> None:
    """One judgement of a team's judge named `vote` (its trace id: run-x / s-7 / vote)."""
    judges.ask(
        "vote",
        CONTEXT,
        run_id="run-x",
        prompt=PromptRef(name="evaluation/correctness"),
        variables={"input": "q", "answer": answer, "ground_truth": "DIN-SQL"},
        reply_type=CorrectnessReply,
    )


def test_a_judge_asked_twice_under_one_name_keeps_one_trace_with_both_generations(
    tracing: Tracing, langfuse_standin: LangfuseStandIn
) -> None:
    """Its trace id derives from (run, scenario, judge), so both judgements are one trace: the store
    gets one row holding both generations (two rows with one id would keep only the last)."""
    kept = JudgeTracing(tracing, keep=True)
    judges = Judges(
        model=FakeJudgeModel([CORRECT, CORRECT]),
        prompts=PromptLibrary(PROMPTS),
        tracer=kept,
        retry=RetryPolicy(sleep=lambda _: None),
    )
    _vote(judges)
    _vote(judges)  # a judge of the team's that asks twice (a vote, say)
    (only,) = kept.take_kept("s-7")
    assert only.trace_id == JudgeTracing.trace_id_for("run-x", "s-7", "vote")
    assert only.span_count == 2 == len(json.loads(only.spans))
    assert kept.take_kept("s-7") == []  # taken once
    assert tracing.flush(10)
    assert len({s.span_id for s in langfuse_standin.spans_for(only.trace_id)}) == 2


def test_a_judgement_ending_after_its_result_went_on_is_cached_linking_no_trace(tracing: Tracing) -> None:
    """Ctrl-C settles a result while a judgement in a thread still runs: its trace ends too late to be
    stored with the result, so `sync` could never send it, and the verdict cache must not name it."""
    kept = JudgeTracing(tracing, keep=True)
    cache = MemoryVerdictCache()
    judges = Judges(
        model=FakeJudgeModel([CORRECT, CORRECT]),
        prompts=PromptLibrary(PROMPTS),
        tracer=kept,
        retry=RetryPolicy(sleep=lambda _: None),
        cache=cache,
    )
    _vote(judges, "in time")
    assert len(kept.take_kept("s-7")) == 1  # the result goes on, with the judgement that had ended
    _vote(judges, "too late")
    assert kept.take_kept("s-7") == []  # nothing kept that no one will take
    trace_id = JudgeTracing.trace_id_for("run-x", "s-7", "vote")
    assert sorted(str(e["trace_id"]) for e in cache.entries.values()) == sorted([trace_id, "None"])
