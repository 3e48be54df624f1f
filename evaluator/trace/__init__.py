"""The normalized trace, the conventions that recognise agents, tools and hand-offs in it, and where
traces come from: spans captured in-process (`SpanCollector`, `trace_from_spans`), Langfuse API bodies,
files, and read-back from Langfuse."""

from evaluator.trace.build import build_trace
from evaluator.trace.capture import SpanCollector, trace_from_spans
from evaluator.trace.conventions import CONVENTION_NAMES, DEFAULT_RULES, TraceConvention, TraceRules
from evaluator.trace.model import (
    AGENT,
    TOOL,
    AgentCall,
    Handoff,
    Observation,
    ToolCall,
    Trace,
    normalize_name,
)
from evaluator.trace.readback import ReadBack, TraceReader, read_trace
from evaluator.trace.sources import (
    OBSERVATION_FIELDS,
    load_trace_file,
    trace_from_langfuse_trace,
    trace_from_observations,
)

__all__ = [
    "AGENT",
    "CONVENTION_NAMES",
    "DEFAULT_RULES",
    "OBSERVATION_FIELDS",
    "TOOL",
    "AgentCall",
    "Handoff",
    "Observation",
    "ReadBack",
    "SpanCollector",
    "ToolCall",
    "Trace",
    "TraceConvention",
    "TraceReader",
    "TraceRules",
    "build_trace",
    "load_trace_file",
    "normalize_name",
    "read_trace",
    "trace_from_langfuse_trace",
    "trace_from_observations",
    "trace_from_spans",
]
