"""Which conventions read a trace: the detected framework conventions (or the configured one), then
Langfuse types for every observation they do not claim."""

from __future__ import annotations

from evaluator.trace.conventions._tree import Tree
from evaluator.trace.conventions.base import Role, TraceConvention
from evaluator.trace.conventions.genai import GenAI
from evaluator.trace.conventions.langfuse_types import LangfuseTypes
from evaluator.trace.conventions.langgraph import LangGraph
from evaluator.trace.conventions.openinference import OpenInference
from evaluator.trace.conventions.rules import TraceRules

__all__ = ["CONVENTIONS", "assign_roles", "conventions_for", "forced_convention_warnings"]

_FRAMEWORKS: tuple[TraceConvention, ...] = (LangGraph(), OpenInference(), GenAI())
_LANGFUSE = LangfuseTypes()
CONVENTIONS: dict[str, TraceConvention] = {c.name: c for c in (*_FRAMEWORKS, _LANGFUSE)}


def conventions_for(tree: Tree, rules: TraceRules) -> list[TraceConvention]:
    """The framework conventions that apply (detected, or the one configured), Langfuse types last."""
    if rules.convention == "auto":
        chosen = [c for c in _FRAMEWORKS if c.detect(tree)]
    elif rules.convention == _LANGFUSE.name:
        chosen = []
    else:
        chosen = [CONVENTIONS[rules.convention]]
    return [*chosen, _LANGFUSE]


def forced_convention_warnings(tree: Tree, rules: TraceRules) -> list[str]:
    """A warning when the configured framework convention finds no sign of itself in the trace (its
    verdict is then read by Langfuse types alone), naming the conventions the trace does show."""
    forced = CONVENTIONS.get(rules.convention) if rules.convention != "auto" else None
    if forced is None or forced is _LANGFUSE or forced.detect(tree):
        return []
    shown = [c.name for c in _FRAMEWORKS if c.detect(tree)]
    looks = f"it shows {' and '.join(shown)}" if shown else "it shows no framework's"
    return [
        f'the convention "{forced.name}" was given (--convention, or [targets.X] convention) but the '
        f"trace shows no sign of it ({looks}): its agents and tools are read as Langfuse types alone. "
        f"Fix: give {' or '.join(shown) if shown else 'langfuse'}, or leave the convention out to detect it."
    ]


def assign_roles(tree: Tree, conventions: list[TraceConvention], rules: TraceRules) -> dict[str, Role]:
    """Each observation's role: the first convention that claims it decides; configured agent names
    win over every convention."""
    claimed: dict[str, Role | None] = {}
    for convention in conventions:
        for obs_id, role in convention.roles(tree).items():
            claimed.setdefault(obs_id, role)
    if rules.agent_observations or rules.agent_pattern:
        for obs in tree.ordered:
            name = rules.agent_name_for(obs.name)
            if name is not None:
                claimed[obs.id] = Role(kind="agent", name=name)
    return {obs_id: role for obs_id, role in claimed.items() if role is not None}
