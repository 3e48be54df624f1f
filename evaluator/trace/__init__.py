"""The normalized trace, and where traces come from: spans captured in-process, Langfuse API bodies,
files, and read-back from Langfuse."""

from evaluator.trace.model import AGENT, TOOL, AgentCall, Observation, ToolCall, Trace, build_trace
from evaluator.trace.readback import ReadBack, TraceReader, read_trace
from evaluator.trace.sources import load_trace_file, trace_from_langfuse_trace, trace_from_observations

__all__ = [
    "AGENT",
    "TOOL",
    "AgentCall",
    "Observation",
    "ReadBack",
    "ToolCall",
    "Trace",
    "TraceReader",
    "build_trace",
    "load_trace_file",
    "read_trace",
    "trace_from_langfuse_trace",
    "trace_from_observations",
]
