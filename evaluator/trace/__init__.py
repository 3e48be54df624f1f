"""The normalized trace, the conventions that recognise agents, tools and hand-offs in it, and where
traces come from: spans captured in-process (`SpanCollector`, `trace_from_spans`), Langfuse API bodies,
files, and read-back from Langfuse; the tool definitions and the usage (tokens, cost) its observations
record."""

from evaluator.trace.build import build_trace
from evaluator.trace.capture import SpanCollector, detail_from_spans, trace_from_spans
from evaluator.trace.conventions import CONVENTION_NAMES, DEFAULT_RULES, TraceConvention, TraceRules
from evaluator.trace.detail import DetailSource, TraceDetail
from evaluator.trace.model import (
    AGENT,
    GENERATION,
    TOOL,
    AgentCall,
    Handoff,
    Observation,
    ToolCall,
    Trace,
    normalize_name,
)
from evaluator.trace.readback import ReadBack, TraceReader, read_trace
from evaluator.trace.session_readback import (
    SessionListing,
    SessionReader,
    SessionTrace,
    in_turn_order,
    list_session,
    read_session,
)
from evaluator.trace.sources import (
    OBSERVATION_FIELDS,
    detail_from_file,
    detail_from_langfuse_trace,
    detail_from_observations,
    load_trace_file,
    session_ids,
    trace_from_langfuse_trace,
    trace_from_observations,
)
from evaluator.trace.tool_definitions import (
    DEFINING_TYPES,
    ToolDefinition,
    load_tool_schemas,
    parse_definition,
    recorded_definitions,
    tool_schemas_from_document,
)
from evaluator.trace.usage import NOT_REPORTED, Usage, usage_from_langfuse, usage_of

__all__ = [
    "AGENT",
    "CONVENTION_NAMES",
    "DEFAULT_RULES",
    "DEFINING_TYPES",
    "GENERATION",
    "NOT_REPORTED",
    "OBSERVATION_FIELDS",
    "TOOL",
    "AgentCall",
    "DetailSource",
    "Handoff",
    "Observation",
    "ReadBack",
    "SessionListing",
    "SessionReader",
    "SessionTrace",
    "SpanCollector",
    "ToolCall",
    "ToolDefinition",
    "Trace",
    "TraceConvention",
    "TraceDetail",
    "TraceReader",
    "TraceRules",
    "Usage",
    "build_trace",
    "detail_from_file",
    "detail_from_langfuse_trace",
    "detail_from_observations",
    "detail_from_spans",
    "in_turn_order",
    "list_session",
    "load_tool_schemas",
    "load_trace_file",
    "normalize_name",
    "parse_definition",
    "read_session",
    "read_trace",
    "recorded_definitions",
    "session_ids",
    "tool_schemas_from_document",
    "trace_from_langfuse_trace",
    "trace_from_observations",
    "trace_from_spans",
    "usage_from_langfuse",
    "usage_of",
]
