"""What the per-agent judge is shown about one agent of a trace (DESIGN.md, Per-agent analysis): the
user's request, the other agents and the hand-offs between them, what the agent received (its input,
and the context an agent handed it), its tool calls with their arguments and outputs, what it gave
back, and the agents it delegated to with the context it passed.

An agent *delegated* when it handed off (a hand-off from it: `transfer_to_<agent>`, a tool that ran
another agent) or ran another agent inside its own call (a sub-agent called directly). Everything shown
is untrusted text (judge/render.py), each part trimmed to its share of a character budget; the note
says what was trimmed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.judge.render import untrusted
from evaluator.metrics import answer_text, final_answer
from evaluator.trace import AgentCall, ToolCall, Trace

__all__ = ["AgentWork", "Delegation", "agent_variables", "agent_works"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.:-]+")
# Each part's share of the budget: what it received, its steps, its output, its delegations.
_SHARES = {"received": 0.25, "steps": 0.4, "output": 0.2, "handoffs": 0.15}
_TRANSITIONS_SHOWN = 50  # of the trace's hand-offs, in the <team> block


@dataclass(frozen=True, kw_only=True)
class Delegation:
    """Control passed from one agent to another: `via` the hand-off tool (None: the other agent ran
    inside the delegating agent's call), `passed` the hand-off tool's input, `received` the receiving
    agent's input at its call."""

    source: str
    target: str
    via: str | None
    passed: Any
    received: Any


@dataclass(frozen=True, kw_only=True)
class AgentWork:
    """One agent's part in a trace: its calls (observation ids first to last), its tool calls, the
    delegations it made and received, and the run's other agents."""

    name: str
    calls: tuple[AgentCall, ...]
    tools: tuple[ToolCall, ...]
    delegated: tuple[Delegation, ...]
    handed: tuple[Delegation, ...]  # to this agent
    others: tuple[str, ...]
    transitions: tuple[str, ...]  # every hand-off of the trace, "a -> b", in order

    @property
    def observation_id(self) -> str | None:
        """Its first call's observation (where its scores go); None when the trace gives no id."""
        return next((call.id for call in self.calls if call.id), None)


def agent_works(trace: Trace) -> list[AgentWork]:
    """Each agent of the trace (by name, first call first) and its part."""
    by_name: dict[str, list[AgentCall]] = {}
    for agent in trace.agents:
        by_name.setdefault(agent.name, []).append(agent)
    delegations = _delegations(trace)
    transitions = tuple(f"{d.source} -> {d.target}" for d in delegations)
    return [
        AgentWork(
            name=name,
            calls=tuple(calls),
            tools=tuple(t for t in trace.tools if t.agent == name),
            delegated=tuple(d for d in delegations if d.source == name),
            handed=tuple(d for d in delegations if d.target == name),
            others=tuple(other for other in by_name if other != name),
            transitions=transitions,
        )
        for name, calls in by_name.items()
    ]


def _delegations(trace: Trace) -> list[Delegation]:
    """The hand-offs with a source agent, and each agent call nested in another agent's call that no
    hand-off accounts for (a guardrail's agent aside: it checks, it is not delegated to), by time."""
    found: list[Delegation] = []
    times: list[float | None] = []
    for handoff in trace.handoffs:
        if handoff.source is None:
            continue
        start = handoff.start_time if handoff.start_time is not None else float("-inf")
        receiving = next(
            (
                a
                for a in trace.agents
                if a.name == handoff.target and (a.start_time is None or a.start_time >= start)
            ),
            None,
        )
        found.append(
            Delegation(
                source=handoff.source,
                target=handoff.target,
                via=handoff.via,
                passed=handoff.input,
                received=receiving.input if receiving is not None else None,
            )
        )
        times.append(handoff.start_time)
    handed = {(d.source, d.target) for d in found}
    for agent in trace.agents:
        parent = agent.parent
        if parent is None or parent == agent.name or agent.guardrail or (parent, agent.name) in handed:
            continue
        nested = Delegation(source=parent, target=agent.name, via=None, passed=None, received=agent.input)
        found.append(nested)
        times.append(agent.start_time)
    order = sorted(range(len(found)), key=lambda i: (times[i] is not None, times[i] or 0.0))
    return [found[i] for i in order]


# A part as shown: blocks of (trusted markup before, untrusted body, trusted markup after).
_Block = tuple[str, str, str]


def agent_variables(
    question: str, work: AgentWork, agent_names: Sequence[str], budget: int
) -> dict[str, str]:
    """The per-agent prompt's variables for `work`, each part's untrusted text within its share of
    `budget` characters. `agent_names`: the trace's agents (to find an agent's answer in a graph
    state)."""
    shares = {part: int(budget * share) for part, share in _SHARES.items()}
    trimmed: list[str] = []
    outputs = [answer_text(final_answer(c.output, agent_names)) for c in work.calls if c.output is not None]
    parts = {
        "received": _received(work),
        "steps": _steps(work.tools),
        "output": _numbered("call", outputs),
        "handoffs": _handoffs(work.delegated),
    }
    shown = {part: _fit(part, blocks, shares[part], trimmed) for part, blocks in parts.items()}
    return {
        "input": untrusted(question),
        "agent": untrusted(work.name),
        "team": untrusted(_team_text(work)),
        "received": shown["received"] or "(nothing recorded)",
        "steps": shown["steps"] or "(no tool call)",
        "output": shown["output"] or "(nothing recorded)",
        "handoffs": shown["handoffs"] or "(none)",
        "material_note": _note(trimmed, budget),
    }


def _team_text(work: AgentWork) -> str:
    if not work.others:
        return "This agent is the only agent of the run."
    shown = work.transitions[:_TRANSITIONS_SHOWN]
    more = len(work.transitions) - len(shown)
    transitions = (
        "Hand-offs, in order: " + "; ".join(shown) + (f"; and {more} more." if more else ".")
        if shown
        else "No hand-off between agents was recorded."
    )
    return f"Other agents of the run: {', '.join(work.others)}.\n{transitions}"


def _given(value: Any) -> bool:
    return value not in (None, "", {}, [])


def _received(work: AgentWork) -> list[_Block]:
    blocks: list[_Block] = []
    for d in work.handed:
        if _given(d.passed):
            via = f" (via {_safe(d.via)})" if d.via else ""
            blocks.append((f"[handed over by {_safe(d.source)}{via}] ", answer_text(d.passed), "\n"))
    inputs = [answer_text(call.input) for call in work.calls if _given(call.input)]
    return blocks + _numbered("input of call", inputs)


def _steps(tools: Sequence[ToolCall]) -> list[_Block]:
    blocks: list[_Block] = []
    for number, tool in enumerate(tools, start=1):
        arguments = tool.arguments if tool.arguments is not None else tool.input
        outcome = f"error: {tool.error}" if tool.error else f"output: {answer_text(tool.output)}"
        opening = f'<step n="{number}" tool="{_safe(tool.name)}">\n'
        blocks.append((opening, f"arguments: {answer_text(arguments)}\n{outcome}", "\n</step>\n"))
    return blocks


def _handoffs(delegations: Sequence[Delegation]) -> list[_Block]:
    blocks: list[_Block] = []
    for number, d in enumerate(delegations, start=1):
        how = f"through the hand-off tool {d.via}" if d.via else "by running it as a sub-agent"
        lines = [how]
        if _given(d.passed):
            lines.append(f"context passed: {answer_text(d.passed)}")
        if d.received is not None:
            lines.append(f"what {d.target} received: {answer_text(d.received)}")
        opening = f'<handoff n="{number}" to="{_safe(d.target)}">\n'
        blocks.append((opening, "\n".join(lines), "\n</handoff>\n"))
    return blocks


def _numbered(label: str, texts: Sequence[str]) -> list[_Block]:
    if len(texts) == 1:
        return [("", texts[0], "\n")]
    return [(f"[{label} {n}] ", text, "\n") for n, text in enumerate(texts, start=1)]


def _safe(name: str) -> str:
    return _UNSAFE_NAME.sub("_", name)


def _fit(part: str, blocks: Sequence[_Block], budget: int, trimmed: list[str]) -> str:
    """The blocks with at most `budget` characters of untrusted text in all (neutralised; the markup
    around it is this module's and kept whole); what is cut is said in `trimmed`."""
    total = sum(len(body) for _, body, _ in blocks)
    shown: list[str] = []
    left = budget
    for opening, body, closing in blocks:
        if left <= 0:
            break
        kept = body[:left]
        left -= len(kept)
        cut = " [cut]" if len(kept) < len(body) else ""
        shown.append(f"{opening}{untrusted(kept)}{cut}{closing}")
    if total > budget:
        trimmed.append(f"{part} ({budget} of {total} characters shown)")
    return "".join(shown).strip()


def _note(trimmed: Sequence[str], budget: int) -> str:
    if not trimmed:
        return "Everything the trace records about this agent is shown."
    return (
        f"The material was trimmed to a budget of {budget} characters: {'; '.join(trimmed)}. Do not "
        "blame the agent for what may be in the part left out."
    )
