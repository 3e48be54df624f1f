"""Run the concierge demo for a whole dialogue, turn by turn, with a real Langfuse client per turn."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from opentelemetry.sdk.trace import ReadableSpan

from demo_agents.concierge import run
from evaluator.run import PromptResolver, TargetRequest
from tests.demo.tracing import PROMPTS, TYPE, memory_client

STATE_KEYS = ("intent", "domain", "acts", "slots", "action")


@dataclass(frozen=True, kw_only=True)
class TracedTurn:
    reply: str
    spans: list[ReadableSpan] = field(repr=False)  # in start order

    def named(self, kind: str) -> list[str]:
        return [s.name for s in self.spans if s.attributes and s.attributes.get(TYPE) == kind]

    def parent_name(self, name: str) -> str | None:
        (span,) = [s for s in self.spans if s.name == name]
        parent_id = span.parent.span_id if span.parent else None
        return next((s.name for s in self.spans if s.context and s.context.span_id == parent_id), None)

    def state(self) -> dict[str, Any]:
        """DESIGN.md's reading: per key, the value of the last observation (by end time) carrying it."""
        found: dict[str, Any] = {}
        for span in sorted(self.spans, key=lambda s: s.end_time or 0):
            for key in STATE_KEYS:
                raw = (span.attributes or {}).get(f"langfuse.observation.metadata.{key}")
                if raw is not None:
                    found[key] = json.loads(str(raw))
        return found


def traced_dialogue(messages: Sequence[str], *, pins: Mapping[str, int] | None = None) -> list[TracedTurn]:
    """Every message as one turn, in order, as the evaluator plays a dialogue: one trace per turn."""
    session_id, history, turns = f"session-{uuid4().hex}", [], []
    for index, message in enumerate(messages):
        turn = _traced_turn(message, index, session_id, tuple(history), pins)
        history += [{"role": "user", "content": message}, {"role": "assistant", "content": turn.reply}]
        turns.append(turn)
    return turns


def _traced_turn(
    message: str,
    index: int,
    session_id: str,
    history: tuple[Mapping[str, str], ...],
    pins: Mapping[str, int] | None,
) -> TracedTurn:
    client, exporter, handlers = memory_client()
    request = TargetRequest(
        input=message,
        scenario_id="concierge-test",
        run_id="run-concierge-test",
        langfuse=client,
        callback_factory=lambda: handlers,
        prompts=PromptResolver(PROMPTS, pins),
        history=history,
        turn=index,
        session_id=session_id,
    )
    try:
        with client.start_as_current_observation(name=f"concierge-test#{index}", as_type="span"):
            reply = run(request)
    finally:
        client.flush()
        client.shutdown()
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    return TracedTurn(reply=reply, spans=spans)
