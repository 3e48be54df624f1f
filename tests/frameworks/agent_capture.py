"""Running a real framework's system in-process under the evaluator's tracing, and keeping what was
captured: the normalized trace and its observations (what the per-agent analysis reads)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from evaluator.langfuse import Tracing
from evaluator.trace import Observation, Trace
from evaluator.trace.capture import observation_from_span


def load_system(tracing: Tracing, module: str) -> ModuleType:
    """Imported as the run imports a target: keyless clients made at import resolve to the capture."""
    with tracing.process_default():
        return importlib.import_module(module)


def capture(
    tracing: Tracing, scenario_id: str, run: Callable[[str], object], text: str
) -> tuple[Trace, list[Observation]]:
    trace_id = tracing.trace_id_for("agent-checks", scenario_id)
    with (
        tracing.process_default(),
        tracing.scenario_run(
            trace_id=trace_id, scenario_id=scenario_id, run_id="agent-checks", tags=[], input=text
        ) as root,
    ):
        run(text)
    root.end()
    captured = tracing.take(trace_id)
    return captured.trace, [observation_from_span(span) for span in captured.spans]
