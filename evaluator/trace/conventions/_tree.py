"""The observation tree every convention reads: observations in start order (ancestors before
descendants on equal start times), parents, children and depths, built once per trace in O(n)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from evaluator.trace.model import Observation


@dataclass(frozen=True, kw_only=True)
class Tree:
    ordered: tuple[Observation, ...]  # start order; ties: ancestors first, then the one that ended first
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


def _start_order(obs: Observation, depth: int) -> tuple[float, int, float]:
    """Start time; on a tie (Langfuse keeps milliseconds) the ancestor first, then the one that ended
    first (it most likely started first). A missing start sorts first."""
    start = -1.0 if obs.start_time is None else obs.start_time
    return start, depth, float("inf") if obs.end_time is None else obs.end_time


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
