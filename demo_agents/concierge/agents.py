"""The concierge: a supervisor that runs triage, memory, policy and action agents, once per user turn.

    supervisor (AGENT)      metadata after the turn: intent, domain, acts, slots, action (and flow)
    ├── triage (AGENT)      triage-turn > triage-llm: the message's intent, domain, slots, refs
    ├── memory (AGENT)      memory-turn > memory-llm: the accumulated belief state {domain: {slot: value}}
    ├── policy (AGENT)      booking intents only: policy-turn > policy-llm, book or request what is missing
    └── action (AGENT)      action-turn > action-llm, one search or booking tool (TOOL), action-llm answers

The evaluator calls `run(request)` once per user turn with `request.input` (the message),
`request.history`, `request.turn` (0-based) and `request.session_id` (stable for one dialogue run). The
dialogue's memory (belief state, last intent and domain) lives in this process, keyed on the session id,
and starts afresh at turn 0. Every agent gets its prompt from `request.prompts` (so
`--prompt agents/concierge-policy=2` pins it) and talks to the scripted model (model.py): the demo has
no real-model mode.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool

from demo_agents.concierge.model import ScriptedConciergeModel
from demo_agents.concierge.tools import CONCIERGE_TOOLS, NO_MATCH
from demo_agents.research.loop import converse
from evaluator.run import TargetRequest

MAX_SESSIONS = 1024  # dialogues remembered at once; the oldest is forgotten first
AGENTS = ("supervisor", "triage", "memory", "policy", "action")
State = dict[str, dict[str, str]]


@dataclass(kw_only=True)
class Memory:
    """What the concierge remembers of one dialogue between turns (mutable: it is the memory)."""

    state: State = field(default_factory=dict)
    intent: str = ""
    domain: str = ""


class Sessions:
    """Memories by session id, bounded (least recently used forgotten first), safe across threads."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._limit = limit
        self._memories: OrderedDict[str, Memory] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str, *, fresh: bool) -> Memory:
        """The session's memory; a new one when `fresh` (turn 0: a rerun starts over) or unknown."""
        with self._lock:
            memory = Memory() if fresh else self._memories.get(session_id, Memory())
            self._memories[session_id] = memory
            self._memories.move_to_end(session_id)
            while len(self._memories) > self._limit:
                self._memories.popitem(last=False)
            return memory


SESSIONS = Sessions()


@dataclass(frozen=True, kw_only=True)
class TurnState:
    """The state the supervisor reports after a turn (DESIGN.md: Dialogues, the target per turn)."""

    intent: str
    domain: str
    acts: list[str]
    slots: State
    action: str

    def metadata(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "domain": self.domain,
            "acts": self.acts,
            "slots": self.slots,
            "action": self.action,
            "flow": self.action,  # the workflow a single-turn check (and the seed's JSON format) compares
        }


def run(request: TargetRequest) -> str:
    """Answer one user turn; the evaluator calls this inside the turn's root span."""
    session_id = str(getattr(request, "session_id", "") or f"{request.run_id}:{request.scenario_id}")
    memory = SESSIONS.get(session_id, fresh=int(getattr(request, "turn", 0) or 0) == 0)
    return Turn(request=request, memory=memory, model=ScriptedConciergeModel()).supervise()


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One user turn: the request, the dialogue's memory and the model every agent shares."""

    request: TargetRequest
    memory: Memory
    model: ScriptedConciergeModel

    def supervise(self) -> str:
        with self._agent("supervisor") as observation:
            found = self.triage()
            domain = str(found.get("domain", ""))
            self.memory.state = self.remember(found)
            intent = str(found.get("intent", ""))
            self.memory.intent, self.memory.domain = intent, domain or self.memory.domain
            task, missing = self.plan(intent, domain, found)
            context = {
                "task": task,
                "domain": domain,
                "slots": self.memory.state.get(domain, {}),
                "missing": missing,
                "requested": found.get("requested", []),
            }
            reply, acts = self.act(context)
            state = TurnState(intent=intent, domain=domain, acts=acts, slots=self.memory.state, action=task)
            observation.update(output=reply, metadata=state.metadata())
        return reply

    def triage(self) -> dict[str, Any]:
        history = list(getattr(self.request, "history", ()) or ())
        context = {
            "message": self.request.input,
            "previous_intent": self.memory.intent,
            "previous_domain": self.memory.domain,
            "previous_reply": _last_reply(history),
        }
        return self._ask("triage", context)

    def remember(self, found: Mapping[str, Any]) -> State:
        context = {
            "state": self.memory.state,
            "domain": found.get("domain", ""),
            "slots": found.get("slots", {}),
            "refs": found.get("refs", []),
        }
        state = self._ask("memory", context)
        return {
            str(d): {str(k): str(v) for k, v in dict(s).items()}
            for d, s in state.items()
            if isinstance(s, dict)
        }

    def plan(self, intent: str, domain: str, found: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The task for the action agent, and what a request asks for.

        No domain: request it. A booking: what the policy agent decides. A search naming a known venue
        and asking for its details: inform. Otherwise: search.
        """
        if not domain:
            return "request", ["domain"]
        slots = self.memory.state.get(domain, {})
        if intent.startswith("book_"):
            decision = self._ask("policy", {"intent": intent, "domain": domain, "slots": slots})
            missing = [str(s) for s in decision.get("missing", [])]
            return ("book", []) if decision.get("decision") == "book" else ("request", missing)
        if found.get("requested") and slots.get("name"):
            return "inform", []
        return "search", []

    def act(self, context: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The action agent's reply and the dialogue acts it performed (MultiWOZ style)."""
        with self._agent("action") as observation:
            reply = self._converse("action", context, tools=CONCIERGE_TOOLS)
            observation.update(output=reply)
        return reply, dialogue_acts(str(context["task"]), str(context["domain"]), reply)

    def _ask(self, agent: str, context: Mapping[str, Any]) -> dict[str, Any]:
        """One agent's JSON answer, inside its AGENT observation; {} when the reply holds no object."""
        with self._agent(agent) as observation:
            text = self._converse(agent, context)
            observation.update(output=text)
        try:
            value = json.loads(text[text.find("{") : text.rfind("}") + 1])
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    def _agent(self, name: str) -> Any:
        """An AGENT observation around the agent's work; everything inside nests below it."""
        return self.request.langfuse.start_as_current_observation(
            as_type="agent", name=name, input=self.request.input
        )

    def _converse(self, agent: str, context: Mapping[str, Any], tools: Sequence[BaseTool] = ()) -> str:
        return converse(
            self.model,
            self.request.prompts.get(f"agents/concierge-{agent}"),
            {"context": json.dumps(context, sort_keys=True)},
            agent=agent,
            tools=tools,
            callbacks=self.request.callbacks,
        )


def dialogue_acts(task: str, domain: str, reply: str) -> list[str]:
    """The system's acts: <Domain>-Inform, -NoOffer or -Request, Booking-Book or -NoBook.

    None without a domain: asking which domain is a general act, which dialogue metrics leave out.
    """
    if not domain:
        return []
    prefix = domain.capitalize()
    if task == "request":
        return [f"{prefix}-Request"]
    if task == "book":
        return ["Booking-Book"] if "Reference:" in reply else ["Booking-NoBook"]
    return [f"{prefix}-NoOffer"] if NO_MATCH in reply else [f"{prefix}-Inform"]


def _last_reply(history: Sequence[Any]) -> str:
    """The concierge's previous reply in the history ({role, content} mappings or objects); '' if none."""
    for message in reversed(history):
        role = message.get("role") if isinstance(message, Mapping) else getattr(message, "role", "")
        if role == "assistant":
            content = (
                message.get("content") if isinstance(message, Mapping) else getattr(message, "content", "")
            )
            return str(content)
    return ""
