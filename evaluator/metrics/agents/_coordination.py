"""Coordination between the agents of one trace, deterministically (DESIGN.md, Per-agent analysis).

The *steps* where agents can coordinate badly are the tool calls an agent made and the hand-offs. Three
problems are found in them:

- duplicated work: a tool call with the same tool and the same arguments (equal as JSON objects) as an
  earlier call by another agent (names compared normalized). The later call is the faulty step. A call
  whose arguments are not an object is not compared; one agent repeating its own call is not a
  coordination problem.
- ping-pong: three or more consecutive hand-offs that bounce control between the same two agents
  (A->B, B->A, A->B...) with no tool call between the first and the last. The hand-offs after the
  first are the faulty steps (each hands control straight back).
- context lost: a hand-off whose call passed text (the string values of its arguments, nested ones
  included) and whose receiving agent's first model call was given none of it (each compared with
  whitespace collapsed and case folded, inside every string of the generation's input, JSON strings
  read too). The receiving agent is the first call of the target agent inside the hand-off's call
  (delegation), else the first one that starts at or after it. Not checked (no problem, not a 0)
  when the hand-off passed no text, or the receiving agent's first generation or its input is not in
  the trace: whether the *right* context was passed is the judge's to say, not this rule's.

`rule_score` = 1 - faulty steps / steps, a step faulty once whatever its problems. Null (not measured)
when fewer than two agents ran and nothing was handed off (a single agent has nothing to coordinate),
or when there is no step.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evaluator._json import loads_or
from evaluator.metrics.agents._attribution import enclosing_agents
from evaluator.trace import GENERATION, AgentCall, Handoff, Observation, ToolCall, Trace, normalize_name

CoordinationKind = Literal["duplicated_work", "ping_pong", "context_lost"]
_SHOWN = 80  # characters of passed text or arguments a message shows
_PING_PONG = 3  # consecutive bouncing hand-offs that make a ping-pong
# Arguments compared as JSON with their keys sorted: one encoder for every call, not one per call.
_as_json = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False).encode


@dataclass(frozen=True, kw_only=True, slots=True)
class CoordinationProblem:
    """One coordination problem: the agents involved, a message saying what happened, every
    observation involved (`observation_ids`) and the steps it makes faulty (`faulty`)."""

    kind: CoordinationKind
    agents: tuple[str, ...]
    message: str
    observation_ids: tuple[str, ...]
    faulty: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "agents": list(self.agents),
            "message": self.message,
            "observation_ids": list(self.observation_ids),
        }


@dataclass(frozen=True, kw_only=True)
class Coordination:
    """The coordination steps of one trace and the problems found in them (see the module docstring)."""

    steps: int
    problems: tuple[CoordinationProblem, ...]

    @property
    def rule_score(self) -> float | None:
        if not self.steps:
            return None
        faulty = {step for problem in self.problems for step in problem.faulty}
        return 1.0 - len(faulty) / self.steps

    def to_json(self) -> dict[str, Any]:
        """The `coordination` entry of the result's `per_agent` field; `judge` is the per-agent judge's
        view of coordination, filled in by the judge when it runs (null: not judged)."""
        return {
            "steps": self.steps,
            "problems": [problem.to_json() for problem in self.problems],
            "rule_score": self.rule_score,
            "judge": None,
        }


def coordinate(trace: Trace, observations: Sequence[Observation]) -> Coordination | None:
    """The coordination of `trace` (built from `observations`); None when there is none to measure."""
    if len({normalize_name(a.name) for a in trace.agents}) < 2 and not trace.handoffs:
        return None
    calls = [call for call in trace.tools if call.agent is not None]
    steps = len(calls) + len(trace.handoffs)
    if not steps:
        return None
    problems = (*_duplicated(calls), *_ping_pongs(trace), *_context_lost(trace, observations))
    return Coordination(steps=steps, problems=problems)


def _duplicated(calls: Sequence[ToolCall]) -> Iterator[CoordinationProblem]:
    first_by: dict[tuple[str, str], dict[str, ToolCall]] = {}  # (tool, arguments) -> agent -> its first
    for call in calls:
        if call.arguments is None or call.agent is None:
            continue
        shown = _as_json(call.arguments)
        agent = normalize_name(call.agent)
        seen = first_by.setdefault((call.name, shown), {})
        first = next((c for a, c in seen.items() if a != agent), None)
        seen.setdefault(agent, call)
        if first is None or first.agent is None:
            continue
        yield CoordinationProblem(
            kind="duplicated_work",
            agents=(first.agent, call.agent),
            message=f"{call.agent} called {call.name} with the same arguments as {first.agent} did before "
            f"({_cut(shown)}): one of them did work the other had done",
            observation_ids=(first.id, call.id),
            faulty=(call.id,),
        )


def _ping_pongs(trace: Trace) -> Iterator[CoordinationProblem]:
    positions = sorted(trace.tool_order or range(len(trace.tools)))
    run: list[Handoff] = []
    for handoff in trace.handoffs:
        if run and _bounces(run[-1], handoff) and not _tool_between(run[-1], handoff, positions):
            run.append(handoff)
            continue
        yield from _ping_pong(run)
        run = [handoff]
    yield from _ping_pong(run)


def _bounces(before: Handoff, after: Handoff) -> bool:
    """Whether `after` hands control straight back to the agent that handed it over in `before`."""
    if before.source is None or after.source is None:
        return False
    return normalize_name(after.source) == normalize_name(before.target) and normalize_name(
        after.target
    ) == normalize_name(before.source)


def _tool_between(before: Handoff, after: Handoff, positions: Sequence[int]) -> bool:
    """Whether a tool call lies between two hand-offs in call order (`positions`: the tools', sorted)."""
    index = bisect_right(positions, before.order)
    return index < len(positions) and positions[index] < after.order


def _ping_pong(run: Sequence[Handoff]) -> Iterator[CoordinationProblem]:
    if len(run) < _PING_PONG:
        return
    first = run[0]
    path = " -> ".join([str(first.source), *(h.target for h in run)])
    yield CoordinationProblem(
        kind="ping_pong",
        agents=(str(first.source), first.target),
        message=f"{first.source} and {first.target} handed control back and forth {len(run)} times "
        f"({path}) without a tool call in between",
        observation_ids=tuple(h.id for h in run),
        faulty=tuple(h.id for h in run[1:]),
    )


def _context_lost(trace: Trace, observations: Sequence[Observation]) -> Iterator[CoordinationProblem]:
    passed = [(handoff, texts) for handoff in trace.handoffs if (texts := _passed_texts(handoff.arguments))]
    if not passed:
        return  # nothing was passed as text: no observation is read
    by_id = {o.id: o for o in observations}
    first_generation = _first_generations(observations, trace.agents)
    for handoff, texts in passed:
        receiver = _receiving_call(handoff, trace.agents, by_id)
        generation = first_generation.get(receiver.id) if receiver is not None else None
        if generation is None or generation.input is None:
            continue  # not checked
        given = _normal(" ".join(_strings(generation.input)))
        if any(_normal(text) in given for text in texts):
            continue
        source = handoff.source or "no agent"
        yield CoordinationProblem(
            kind="context_lost",
            agents=tuple(a for a in (handoff.source, handoff.target) if a is not None),
            message=f"{source} handed over to {handoff.target} through {handoff.via} passing "
            f"{_cut(' | '.join(texts))!r}, and none of it reached {handoff.target}'s first model call",
            observation_ids=(handoff.id, generation.id),
            faulty=(handoff.id,),
        )


def _passed_texts(arguments: Mapping[str, Any] | None) -> list[str]:
    """The non-blank string values among a hand-off's arguments, nested ones included."""
    if arguments is None:
        return []
    return [text for text in _values(arguments) if text.strip()]


def _values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _values(item)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a generation's input; a string holding a JSON object or list is read too
    (arguments of earlier calls, OpenTelemetry attributes)."""
    if isinstance(value, str):
        yield value
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            yield from _strings(loads_or(stripped, None))
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _first_generations(
    observations: Iterable[Observation], agents: Sequence[AgentCall]
) -> dict[str, Observation]:
    """Each agent call's earliest generation of its own (by start time; none known sorts last)."""
    owners = enclosing_agents(observations, agents)
    found: dict[str, Observation] = {}
    for obs in observations:
        owner = owners.get(obs.id) if obs.type == GENERATION else None
        if owner is None:
            continue
        current = found.get(owner)
        if current is None or _start(obs) < _start(current):
            found[owner] = obs
    return found


def _start(obs: Observation) -> float:
    return obs.start_time if obs.start_time is not None else float("inf")


def _receiving_call(
    handoff: Handoff, agents: Sequence[AgentCall], by_id: Mapping[str, Observation]
) -> AgentCall | None:
    """The call of the hand-off's target agent that received it: the first inside the hand-off's own
    call (delegation), else the first that starts at or after the hand-off."""
    target = normalize_name(handoff.target)
    named = [a for a in agents if normalize_name(a.name) == target]
    inside = next((a for a in named if _within(a.id, handoff.id, by_id)), None)
    if inside is not None or handoff.start_time is None:
        return inside
    start = handoff.start_time
    return next((a for a in named if a.start_time is not None and a.start_time >= start), None)


def _within(obs_id: str, ancestor: str, by_id: Mapping[str, Observation]) -> bool:
    seen = {obs_id}
    found = by_id.get(obs_id)
    parent = found.parent_id if found is not None else None
    while parent is not None and parent not in seen:
        if parent == ancestor:
            return True
        seen.add(parent)
        above = by_id.get(parent)
        parent = above.parent_id if above is not None else None
    return False


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
