"""Trace conventions: how agents, tools and hand-offs are recognised in the traces frameworks write
(DESIGN.md, Trace model). Detected per trace; a target's configuration can name one."""

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, Roles, TraceConvention
from evaluator.trace.conventions.detect import CONVENTIONS, conventions_for, forced_convention_warnings
from evaluator.trace.conventions.genai import GenAI
from evaluator.trace.conventions.langfuse_types import LangfuseTypes
from evaluator.trace.conventions.langgraph import LangGraph
from evaluator.trace.conventions.openinference import OpenInference
from evaluator.trace.conventions.rules import (
    BUILTIN_HANDOFF_PATTERNS,
    CONVENTION_NAMES,
    DEFAULT_RULES,
    TraceRules,
)

__all__ = [
    "BUILTIN_HANDOFF_PATTERNS",
    "CONVENTIONS",
    "CONVENTION_NAMES",
    "DEFAULT_RULES",
    "GenAI",
    "LangGraph",
    "LangfuseTypes",
    "OpenInference",
    "Role",
    "Roles",
    "TraceConvention",
    "TraceRules",
    "Tree",
    "conventions_for",
    "forced_convention_warnings",
]
