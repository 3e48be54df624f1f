"""Tokens and cost where each source reports them; not reported is None, never 0."""

from __future__ import annotations

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
