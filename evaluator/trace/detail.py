"""What a normalized `Trace` leaves out and the per-agent analysis reads: the trace's observations (with
their inputs, attributes and parents) and the tokens and cost each generation reported where the
observation does not hold them (the Langfuse SDK's own generations). Made only on demand: building it
costs a second pass over the spans, which a run that checks no agent never pays."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evaluator.trace.model import Observation
from evaluator.trace.usage import Usage

__all__ = ["DetailSource", "TraceDetail"]


@dataclass(frozen=True, kw_only=True)
class TraceDetail:
    """`observations`: the trace's, in the order its source gave them; `usage`: tokens and cost by
    observation id, only for those whose source kept them outside the observation ({} when none)."""

    observations: tuple[Observation, ...]
    usage: Mapping[str, Usage] = field(default_factory=dict)


DetailSource = Callable[[], TraceDetail]  # called at most once per trace, by the metric that needs it
