"""Tiny targets for runner tests: each records agents and tools through the injected client."""

from __future__ import annotations

import asyncio
import threading
import time

from langchain_core.tools import tool

from evaluator.run import TargetRequest


class Gauge:
    """How many targets run at once, and the most seen."""

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.active -= 1


gauge = Gauge()


@tool
def lookup(query: str) -> str:
    """Look a query up."""
    return f"found {query}"


def _work(request: TargetRequest) -> str:
    with request.langfuse.start_as_current_observation(as_type="agent", name="orchestrator") as orch:
        orch.update(metadata={"flow": "lookup"})
        with request.langfuse.start_as_current_observation(as_type="agent", name="worker"):
            return str(lookup.invoke({"query": request.input}, config={"callbacks": list(request.callbacks)}))


def good(request: TargetRequest) -> str:
    return _work(request)


def by_input(request: TargetRequest) -> str:
    """Behaviour chosen by the input: 'raise', 'hang', 'sleep:<s>', else work."""
    if request.input == "raise":
        _work(request)
        raise RuntimeError("the agent crashed")
    if request.input == "hang":
        time.sleep(60)
    with gauge:
        if request.input.startswith("sleep:"):
            time.sleep(float(request.input.split(":")[1]))
        return _work(request)


def uses_prompt(request: TargetRequest) -> str:
    prompt = request.prompts.get("agents/toy")
    return prompt.compile_text(question=request.input) + _work(request)


async def async_target(request: TargetRequest) -> str:
    await asyncio.sleep(0.01)
    return _work(request)
