"""Workflow validation: which agents and tools a run included, excluded, missed or should not have used.

The rules, per kind (agents, tools), with C the names called, and the scenario's include/exclude/allow
(DESIGN.md, matching seeds/workflow-and-quality-metrics.md):

- included   = include items in C                       (scenario order)
- missing    = include items not in C                   (scenario order)
- excluded   = exclude items not in C, correctly avoided (scenario order)
- unexpected = items in C that are in exclude, plus, when strict (the default), items in C that are in
               none of include / allow / the entry agents (first-call order)
- pass       = no missing and no unexpected;  overall pass = agents.pass and tools.pass

Entry agents (orchestrators: declared, or known from the framework; trace/build.py) and the agents
guardrails run are always expected (`Trace.always_expected_agents`). No duplicates in any list. An
empty expectation with strict=True therefore fails on any call that is not always expected.

No false avoidance: an excluded name that appears anywhere in the trace (an observation of any type, a
hand-off or its target) without being called as an agent or tool of that kind is not `excluded`
(correctly avoided): it is `unexpected`, with a warning saying where it appeared, because the trace
cannot show that it did not run. The same holds for an excluded name that is one in the trace spelled
another way (`english_agent` for the agent "English agent", as hand-offs name it): it is never
reported avoided. Hand-offs are not tools unless the scenario names their tool in
`expected.tools` (or its trajectory): then they are checked, and sit in the tool path, like any tool.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics.base import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
)
from evaluator.scenarios import Expectation, Expected
from evaluator.trace import Trace, normalize_name

__all__ = ["KindVerdict", "WorkflowValidator", "WorkflowVerdict", "validate_kind"]


@dataclass(frozen=True, kw_only=True)
class KindVerdict:
    """The verdict for one kind (agents or tools)."""

    passed: bool
    included: tuple[str, ...]
    excluded: tuple[str, ...]
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": self.passed,
            "included": list(self.included),
            "excluded": list(self.excluded),
            "missing": list(self.missing),
            "unexpected": list(self.unexpected),
        }

    def comment(self) -> str:
        """'missing: a, b; unexpected: c' ('' when nothing is missing or unexpected)."""
        parts = [
            f"{label}: {', '.join(names)}"
            for label, names in (("missing", self.missing), ("unexpected", self.unexpected))
            if names
        ]
        return "; ".join(parts)


@dataclass(frozen=True, kw_only=True)
class WorkflowVerdict:
    agents: KindVerdict
    tools: KindVerdict
    warnings: tuple[str, ...] = ()  # for the result's `warnings`, not part of this verdict's JSON

    @property
    def passed(self) -> bool:
        return self.agents.passed and self.tools.passed

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.passed, "agents": self.agents.to_json(), "tools": self.tools.to_json()}

    def comment(self) -> str:
        """One line naming what is missing and unexpected ("" when it passed)."""
        parts = [
            f"{kind} {verdict.comment()}"
            for kind, verdict in (("agents", self.agents), ("tools", self.tools))
            if verdict.comment()
        ]
        return " | ".join(parts)

    def scores(self) -> list[ScoreValue]:
        return [
            ScoreValue(name="workflow_pass", value=float(self.passed), comment=self.comment() or None),
            ScoreValue(
                name="workflow_agents_pass",
                value=float(self.agents.passed),
                comment=self.agents.comment() or None,
            ),
            ScoreValue(
                name="workflow_tools_pass",
                value=float(self.tools.passed),
                comment=self.tools.comment() or None,
            ),
        ]

    def problems(self) -> list[str]:
        missing = [*self.agents.missing, *self.tools.missing]
        unexpected = [*self.agents.unexpected, *self.tools.unexpected]
        return [
            f"{label} {', '.join(names)}"
            for label, names in (("missing", missing), ("unexpected", unexpected))
            if names
        ]


def validate_kind(
    called: Sequence[str],
    expectation: Expectation,
    always_expected: Collection[str] = (),
    present: Collection[str] = (),
) -> KindVerdict:
    """Apply the rules above to one kind; `called` in call order, repeats allowed. `present`: every
    name seen in the trace; an excluded name among them is never reported avoided."""
    called_set = set(called)
    include, exclude = expectation.include, expectation.exclude
    expected = {*include, *expectation.allow, *always_expected}
    unexpected = [
        name
        for name in dict.fromkeys(called)
        if name in exclude or (expectation.strict and name not in expected)
    ]
    seen = [n for n in dict.fromkeys(exclude) if n not in called_set and _seen(n, called, present)]
    unexpected += seen
    missing = tuple(dict.fromkeys(n for n in include if n not in called_set))
    return KindVerdict(
        passed=not missing and not unexpected,
        included=tuple(dict.fromkeys(n for n in include if n in called_set)),
        excluded=tuple(dict.fromkeys(n for n in exclude if n not in called_set and n not in seen)),
        missing=missing,
        unexpected=tuple(unexpected),
    )


def _seen(name: str, called: Collection[str], present: Collection[str]) -> bool:
    """Whether the trace shows `name`, as it is spelled or spelled another way."""
    return name in present or spelled_as(name, [*called, *present]) is not None


def spelled_as(name: str, names: Collection[str]) -> str | None:
    """The name among `names` that is `name` spelled another way ("English agent" for
    `english_agent`), or None."""
    normal = normalize_name(name)
    return next((n for n in names if n != name and normalize_name(n) == normal), None)


def named_tools(expected: Expected) -> set[str]:
    """Every tool name a scenario mentions: a hand-off tool among them is checked as a tool."""
    trajectory = expected.trajectory.tools if expected.trajectory is not None else ()
    tools = expected.tools
    return {*tools.include, *tools.exclude, *tools.allow, *trajectory}


def called_tools(expected: Expected, trace: Trace) -> list[str]:
    """The tool path this scenario checks: the tools, plus the hand-offs whose tool it names."""
    return trace.tool_path_naming(named_tools(expected))


def _workflow_passed(document: Mapping[str, Any]) -> float | None:
    """1 when the workflow verdict passed, else 0 (an `error` result counts as 0). A result that ran to
    its end without a workflow verdict of its own is not measured, not a 0; nor is a dialogue's, whatever
    its status (each turn has its own verdict: one that ended an error is no more a 0 than one that
    passed)."""
    workflow = document.get("workflow")
    if document.get("kind") == "dialogue" or (workflow is None and document.get("status") != "error"):
        return None
    passed = workflow.get("pass") if isinstance(workflow, dict) else None
    return 1.0 if document.get("status") != "error" and passed is True else 0.0


class WorkflowValidator(MetricBase):
    """Checks a trace's agents and tools against a scenario's expectations (the `workflow` metric).
    A run that raised or timed out scores `workflow_pass` = 0 (it never finished its workflow)."""

    key = "workflow"
    definitions = (
        ScoreDefinition(
            name="workflow_pass",
            data_type="BOOLEAN",
            description="All expected agents and tools called, none unexpected (comment: what failed)",
        ),
        ScoreDefinition(
            name="workflow_agents_pass",
            data_type="BOOLEAN",
            description="No agent missing, no unexpected agent (entry agents are always expected)",
        ),
        ScoreDefinition(
            name="workflow_tools_pass", data_type="BOOLEAN", description="No tool missing, no unexpected tool"
        ),
    )
    figures = (
        Figure(
            name="workflow_pass_rate",
            value=_workflow_passed,
            rate=True,
            label="workflow",
            chart="Workflow passed (right agents and tools)",
            gate=Gate(label="workflow pass rate", threshold=2.0, setting="workflow_pass_rate_drop"),
        ),
    )

    def error_scores(self, message: str) -> list[ScoreValue]:
        return [ScoreValue(name="workflow_pass", value=0.0, comment=f"error: {message}")]

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        score = scores.get("workflow_pass")
        return None if score is None else {"pass": bool(score.get("value"))}

    def evaluate(self, context: MetricContext) -> WorkflowVerdict:
        """Every scenario gets a workflow verdict (an empty expectation is strict: see above)."""
        return self.validate(context.scenario.expected, context.trace)

    def validate(self, expected: Expected, trace: Trace) -> WorkflowVerdict:
        agent_calls, tool_calls = trace.agent_names, called_tools(expected, trace)
        agents = validate_kind(agent_calls, expected.agents, trace.always_expected_agents, trace.names)
        tools = validate_kind(tool_calls, expected.tools, present=trace.names)
        return WorkflowVerdict(
            agents=agents,
            tools=tools,
            warnings=(
                *_seen_not_called("agent", agents, agent_calls, trace.convention),
                *_seen_not_called("tool", tools, tool_calls, trace.convention),
                *_missing_spelled_otherwise("agent", agents, agent_calls),
                *_missing_spelled_otherwise("tool", tools, tool_calls),
            ),
        )


def _missing_spelled_otherwise(kind: str, verdict: KindVerdict, called: Sequence[str]) -> list[str]:
    """A warning per missing name that ran spelled another way: the verdict stands (names match as
    written), but the fix is the scenario's spelling, not the system."""
    return [
        f'{kind} "{name}" is missing, and "{spelled}" ran (the same name spelled another way). Fix: name '
        f'it "{spelled}", as the trace does.'
        for name in verdict.missing
        if (spelled := spelled_as(name, called)) is not None
    ]


_IF_IT_IS = {  # what makes a name the trace holds a call of its kind
    "agent": "If it is an agent, say so in the target's configuration (agent_observations or "
    "agent_pattern; README, Tracing your system).",
    "tool": 'If it is a tool, trace it as one: @observe(as_type="tool"), or your framework\'s tool '
    "(README, Tracing your system).",
}


def _seen_not_called(kind: str, verdict: KindVerdict, called: Sequence[str], convention: str) -> list[str]:
    """A warning per excluded name found in the trace but not as a call of this kind."""
    a = "an" if kind == "agent" else "a"
    warnings = []
    for name in verdict.unexpected:
        if name in called:
            continue
        spelled = spelled_as(name, called)
        warnings.append(
            f'excluded {kind} "{name}" ran as "{spelled}" (the same name spelled another way): it is '
            f'reported unexpected, not avoided. Fix: name it "{spelled}", as the trace does.'
            if spelled is not None
            else f'excluded {kind} "{name}" appears in the trace, though not as {a} {kind} call the '
            f"{convention} convention recognises: it is reported unexpected, not avoided. {_IF_IT_IS[kind]}"
        )
    return warnings
