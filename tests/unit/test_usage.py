"""Tokens and cost where each source reports them; not reported is None, never 0."""

from __future__ import annotations

import json

from evaluator.trace import Observation
from evaluator.trace.usage import Usage, usage_from_langfuse, usage_of


def _obs(type_: str, **fields: object) -> Observation:
    return Observation(id="o", parent_id=None, type=type_, name="x", **fields)  # type: ignore[arg-type]


def test_usage_where_each_source_reports_it_and_none_when_it_does_not() -> None:
    genai = {"gen_ai.usage.input_tokens": "10", "gen_ai.usage.output_tokens": "5", "operation.cost": "0.01"}
    assert usage_of(_obs("GENERATION", attributes=genai)) == Usage(tokens=15, cost=0.01)
    openinference = {"llm.token_count.prompt": "4", "llm.token_count.completion": "3"}
    assert usage_of(_obs("GENERATION", attributes=openinference)) == Usage(tokens=7, cost=None)
    assert usage_of(_obs("GENERATION", attributes={"llm.model_name": "m"})) == Usage()
    sdk = {
        "langfuse.observation.usage_details": '{"input": 2, "output": 1}',
        "langfuse.observation.cost_details": '{"total": 0.5}',
    }
    assert usage_from_langfuse(sdk) == Usage(tokens=3, cost=0.5)
    row = {"usageDetails": {"input": 2, "output": 1, "total": 3}, "costDetails": {}, "totalCost": 0.2}
    assert usage_from_langfuse(row) == Usage(tokens=3, cost=0.2)
    assert usage_from_langfuse({}) == Usage()


def test_openais_usage_object_as_the_sdks_integrations_pass_it_on_counts_its_total_once() -> None:
    """The `langfuse.openai` drop-in and LangChain's handler keep OpenAI's usage as it came (the server
    maps it to Langfuse's keys): `total_tokens` is the total, the nested details are parts of it."""
    chat = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 80},
        "completion_tokens_details": {"reasoning_tokens": 10},
    }
    assert usage_from_langfuse({"langfuse.observation.usage_details": json.dumps(chat)}) == Usage(tokens=120)
    responses = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120, "input_tokens_details": {}}
    assert usage_from_langfuse({"usageDetails": responses}) == Usage(tokens=120)
    assert usage_from_langfuse({"usageDetails": {"prompt_tokens": 100, "completion_tokens": 20}}) == Usage(
        tokens=120
    )
    langfuse_keys = {"input": 20, "output": 10, "total": 120, "input_cache_read": 80, "output_reasoning": 10}
    assert usage_from_langfuse({"usageDetails": langfuse_keys}) == Usage(tokens=120)


def test_a_count_that_is_not_finite_counts_nothing_and_raises_nothing() -> None:
    """NaN, Infinity, a count past a float's range, or a sum past it (int() of it raised OverflowError
    or ValueError: with the per-agent analysis on, the scenario was an evaluator error)."""
    for details in (
        '{"total": NaN}',
        '{"total": "Infinity"}',
        '{"input": 1e400}',
        '{"input": 1e308, "output": 1e308}',
    ):
        assert usage_from_langfuse({"langfuse.observation.usage_details": details}) == Usage(), details
    assert usage_from_langfuse({"usageDetails": {"input": 10**400, "output": 3}}) == Usage(tokens=3)
    genai = {"gen_ai.usage.input_tokens": "nan", "gen_ai.usage.output_tokens": "5", "operation.cost": "inf"}
    assert usage_of(_obs("GENERATION", attributes=genai)) == Usage(tokens=5, cost=None)
