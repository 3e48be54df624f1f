"""A dialogue target for the per-agent tests: a travel desk whose planner agent searches on every turn
and books on turns 1 and 2 (0-based), with a made-up `nights` argument on turn 1. Its model call
reports 3 + 2 tokens and $0.25 each turn; a writer agent, which uses no tool, answers."""

from __future__ import annotations

from typing import Any

from evaluator.run import TargetRequest


def travel(request: TargetRequest) -> str:
    langfuse = request.langfuse
    calls: list[tuple[str, dict[str, Any]]] = [("search", {"query": request.input})]
    if request.turn == 1:
        calls.append(("book", {"hotel": "acorn", "nights": 3}))  # book is not the planner's; nights invented
    if request.turn == 2:
        calls.append(("book", {"hotel": "acorn"}))
    with langfuse.start_as_current_observation(as_type="agent", name="planner"):
        with langfuse.start_as_current_observation(
            as_type="generation", name="llm", model="m",
            usage_details={"input": 3, "output": 2}, cost_details={"total": 0.25},
        ):  # fmt: skip
            pass
        for tool, arguments in calls:
            with langfuse.start_as_current_observation(as_type="tool", name=tool, input=arguments):
                pass
    with langfuse.start_as_current_observation(as_type="agent", name="writer"):
        pass
    return "booked" if request.turn == 2 else "looking"
