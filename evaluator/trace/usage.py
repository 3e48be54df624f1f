"""Tokens and cost a generation reported, where each source keeps them. Not reported is None, never 0.

- OpenTelemetry GenAI (pydantic-ai): `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens`
  on the model request span, and `operation.cost` when pydantic-ai could price the call.
- OpenInference: `llm.token_count.total`, else `llm.token_count.prompt` + `llm.token_count.completion`;
  `llm.cost.total` when the instrumentation prices the call.
These stay among a third-party observation's attributes (`Observation.attributes`), so `usage_of` reads
them from any source. The Langfuse SDK's own generations (LangChain's `CallbackHandler`, `@observe`)
keep usage in span attributes the captured observation does not hold (`langfuse.observation.usage_details`,
`...cost_details`), and Langfuse's API in fields of the observation row (`usageDetails`, `costDetails`,
`totalCost`, asked for with the `usage` field group): `usage_from_langfuse` reads either, for a caller
that has the span or the row. The SDK's span keeps the usage as the integration passed it: Langfuse's
keys (`input`, `output`, `total`, ...), or OpenAI's usage object as it came (the `langfuse.openai`
drop-in, LangChain's handler for an OpenAI model: `prompt_tokens`, `completion_tokens`, `total_tokens`
or the Responses API's `input_tokens`, ..., the cached and reasoning counts nested in `*_details`),
which the server maps to its keys on ingestion; its total is `total_tokens`, never a sum with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from evaluator._json import loads_or
from evaluator.trace.model import Observation

__all__ = ["NOT_REPORTED", "Usage", "usage_from_langfuse", "usage_of"]

USAGE_DETAILS = "langfuse.observation.usage_details"
COST_DETAILS = "langfuse.observation.cost_details"
_GENAI_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
_OPENINFERENCE_TOTAL = "llm.token_count.total"
_OPENINFERENCE_TOKENS = ("llm.token_count.prompt", "llm.token_count.completion")
_COST_ATTRIBUTES = ("operation.cost", "llm.cost.total")
_USAGE_TOTALS = ("total", "total_tokens")  # Langfuse's key; OpenAI's, as the SDK's integrations pass it on
_N = TypeVar("_N", int, float)


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    tokens: int | None = None
    cost: float | None = None  # USD

    def __add__(self, other: Usage) -> Usage:
        return Usage(tokens=_plus(self.tokens, other.tokens), cost=_plus(self.cost, other.cost))


NOT_REPORTED = Usage()


def usage_of(obs: Observation) -> Usage:
    """What a third-party generation's attributes report (NOT_REPORTED when they report nothing)."""
    attrs = obs.attributes
    if not attrs:
        return NOT_REPORTED
    tokens = _number(attrs.get(_OPENINFERENCE_TOTAL))
    if tokens is None:
        keys = _GENAI_TOKENS if _GENAI_TOKENS[0] in attrs else _OPENINFERENCE_TOKENS
        tokens = _sum([_number(attrs.get(keys[0])), _number(attrs.get(keys[1]))])
    cost = _number(attrs.get(_COST_ATTRIBUTES[0]))
    if cost is None:
        cost = _number(attrs.get(_COST_ATTRIBUTES[1]))
    return Usage(tokens=None if tokens is None else int(tokens), cost=cost)


def usage_from_langfuse(fields: Mapping[str, object]) -> Usage:
    """From a Langfuse SDK span's attributes (`langfuse.observation.usage_details` and
    `...cost_details`, JSON text) or a Langfuse API observation row (`usageDetails`, `costDetails`,
    `totalCost`). Tokens: the details' `total` (OpenAI's `total_tokens`), else the sum of the others
    (the nested `*_details` counts are parts of these, never added)."""
    usage = _details(fields.get(USAGE_DETAILS, fields.get("usageDetails")))
    costs = _details(fields.get(COST_DETAILS, fields.get("costDetails")))
    tokens = next((usage[key] for key in _USAGE_TOTALS if key in usage), None)
    if tokens is None:
        tokens = _sum(usage.values())
    cost = costs.get("total", _sum(costs.values()))
    if cost is None:
        cost = _number(fields.get("totalCost"))
    return Usage(tokens=None if tokens is None else int(tokens), cost=cost)


def _details(value: object) -> dict[str, float]:
    if isinstance(value, str):
        value = loads_or(value, None)
    if not isinstance(value, Mapping):
        return {}
    return {str(k): n for k, v in value.items() if (n := _number(v)) is not None}


def _number(value: object) -> float | None:
    """A reported number; strings as Langfuse stores attribute values. Booleans are not numbers, nor
    is a count that is not finite (NaN, Infinity, or past a float's range): it counts nothing."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _sum(values: Iterable[float | None]) -> float | None:
    """The sum of the reported values (None: none reported, or a sum past a float's range)."""
    known = [v for v in values if v is not None]
    total = sum(known) if known else None
    return total if total is None or math.isfinite(total) else None


def _plus(left: _N | None, right: _N | None) -> _N | None:
    if left is None:
        return right
    if right is None:
        return left
    return left + right
