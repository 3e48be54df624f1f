"""The observation tree every convention reads: observations in start order (ancestors before
descendants on equal start times), parents, children and depths, built once per trace in O(n).

Start order is read at the resolution Langfuse stores times in, milliseconds, on every source: in-process
capture knows nanoseconds, but a verdict drawn in-process must equal the one drawn from the stored trace
(`validate --trace-id`, `run --verify-langfuse`). So calls that start within one millisecond (parallel
tool calls, a scripted model's whole run) are ordered by what both sides know, the same way on both:
the ancestor first, then the one that ended in an earlier millisecond (a call that ended before the
other began came first: real order, where it is knowable), then by name, then by id (both sides have
the span id as the observation id). Order across milliseconds is the clock's, as before. The cost: two
calls that start and end within the same milliseconds come out by name, even in-process, where the
nanoseconds knew better; the order of such calls cannot be read back from Langfuse, and a verdict that
changed with the source would be worse than one that is by the alphabet.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from evaluator.trace.model import Observation


@dataclass(frozen=True, kw_only=True)
class Tree:
    ordered: tuple[Observation, ...]  # start order by the millisecond; ties: see the module docstring
    by_id: dict[str, Observation]
    children: dict[str, list[Observation]]  # in start order
    depth: dict[str, int]

    @classmethod
    def of(cls, observations: Iterable[Observation]) -> Tree:
        """Bad input degrades: a parent id that is not in the trace makes a root; a cycle is cut."""
        items = list(observations)
        by_id = {o.id: o for o in items}
        depth = _depths(items, by_id)
        ordered = tuple(sorted(items, key=lambda o: _start_order(o, depth[o.id])))
        children: dict[str, list[Observation]] = {}
        for obs in ordered:
            if obs.parent_id in by_id:
                children.setdefault(obs.parent_id, []).append(obs)
        return cls(ordered=ordered, by_id=by_id, children=children, depth=depth)

    def parent(self, obs: Observation) -> Observation | None:
        parent = self.by_id.get(obs.parent_id) if obs.parent_id else None
        return parent if parent is not None and self.depth[parent.id] < self.depth[obs.id] else None

    def ancestors(self, obs: Observation) -> Iterator[Observation]:
        current = self.parent(obs)
        while current is not None:
            yield current
            current = self.parent(current)

    def descendants(self, obs: Observation) -> Iterator[Observation]:
        stack = list(reversed(self.children.get(obs.id, [])))
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(self.children.get(current.id, [])))

    @property
    def roots(self) -> list[Observation]:
        return [o for o in self.ordered if self.parent(o) is None]


def _start_order(obs: Observation, depth: int) -> tuple[float, int, float, str, str]:
    """The start millisecond; on a tie the ancestor first, then the one that ended in an earlier
    millisecond, then by name and id (see the module docstring). A missing start sorts first, a
    missing end last."""
    return _millisecond(obs.start_time, -1.0), depth, _millisecond(obs.end_time, math.inf), obs.name, obs.id


def _millisecond(seconds: float | None, missing: float) -> float:
    """The millisecond a time falls in, as Langfuse truncates it. A stored time (an exact millisecond
    as float seconds) floors to itself; an in-process one within a fraction of a microsecond of a
    millisecond's end may float into the next: rare, and it changes an order only if another call
    started within that same fraction of a microsecond."""
    return missing if seconds is None else float(math.floor(seconds * 1000))


def _depths(items: list[Observation], by_id: dict[str, Observation]) -> dict[str, int]:
    """Each observation's depth (roots 0), memoised so the pass is linear; a cycle counts as a root."""
    depth: dict[str, int] = {}
    for obs in items:
        path: list[Observation] = []
        seen: set[str] = set()
        current: Observation | None = obs
        while current is not None and current.id not in depth and current.id not in seen:
            path.append(current)
            seen.add(current.id)
            current = by_id.get(current.parent_id) if current.parent_id else None
        base = depth[current.id] + 1 if current is not None and current.id in depth else 0
        for offset, item in enumerate(reversed(path)):
            depth[item.id] = base + offset
    return depth
