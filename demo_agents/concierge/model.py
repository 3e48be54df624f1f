"""The concierge's offline model: `ScriptedConciergeModel`, deterministic rules standing in for an LLM.

Like the research demo's scripted model, it behaves by the instruction sentences in its system prompt
(whitespace-normalised substrings), never by the scenario, so a new prompt version changes what it does
exactly as it would with a real model. Every agent sends it a JSON object as the user message (the
agent's context, see agents.py) and reads a JSON object (triage, memory, policy) or a reply (action).

Sentence in the system prompt                    What the model does
-----------------------------------------------  -------------------------------------------------------
TRIAGE_RULE (concierge-triage v1)                `nlu.understand` on the message: intent, domain, the
                                                 message's slots, refs, requested details, as JSON.
MEMORY_RULE (concierge-memory v1)                Merges the turn's slots into the belief state.
  + PRICE_CARRY_RULE (v1)                        "the same price range": copies pricerange from the
                                                 other domain.
  + AREA_FROM_HOTEL_RULE (v1: the memory flaw)   "the same area": copies area from the hotel, and only
                                                 into a restaurant; asked in a hotel, the area is lost.
POLICY_RULE (concierge-policy v1, v2)            {"decision": "book" | "request", "missing": [...]}: book
                                                 when the domain's required slots are in the state.
  + HOTEL_NAME_DAY_RULE (v1: the policy flaw)    A hotel needs only name and bookday.
  + HOTEL_COMPLETE_RULE (v2: the fix)            A hotel needs name, bookday, bookpeople and bookstay.
  + RESTAURANT_RULE (v1, v2)                     A restaurant needs name, bookday, booktime, bookpeople.
ACTION_RULE (concierge-action v1)                Runs the task: search -> the domain's search tool,
                                                 inform -> search by name, book -> the booking tool,
                                                 request -> no tool; then answers from the results.
(none of the above)                              Replies NO_INSTRUCTIONS_REPLY.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult

from demo_agents.concierge.database import SEARCH_SLOTS, find
from demo_agents.concierge.nlu import understand
from demo_agents.concierge.tools import BOOK_TOOL, NO_MATCH, SEARCH_TOOL
from demo_agents.research.model import ToolBindingChatModel
from demo_agents.research.text import normalize_space

TRIAGE_RULE = "Reply with one JSON object with the keys intent, domain, slots, refs and requested."
MEMORY_RULE = "Reply with the updated belief state as one JSON object."
PRICE_CARRY_RULE = (
    "When the customer asks for the same price range, copy the price range from the other domain."
)
AREA_FROM_HOTEL_RULE = (
    "When the customer asks for a restaurant in the same area, copy the area from the hotel."
)
POLICY_RULE = "Reply with one JSON object with the keys decision (book or request) and missing."
HOTEL_NAME_DAY_RULE = "Book a hotel once you know its name and the day."
HOTEL_COMPLETE_RULE = (
    "Book a hotel only when you know its name, the day, the number of people and the number of nights."
)
RESTAURANT_RULE = "Book a restaurant only when you know its name, the day, the time and the number of people."
ACTION_RULE = "Carry out the task with the tools, then answer the customer in one or two sentences."

NO_INSTRUCTIONS_REPLY = "I have no instructions I recognise for this conversation."
# The slots each policy sentence requires, in the order a reply asks for them.
POLICY_SLOTS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    HOTEL_COMPLETE_RULE: ("hotel", ("name", "bookday", "bookpeople", "bookstay")),
    HOTEL_NAME_DAY_RULE: ("hotel", ("name", "bookday")),
    RESTAURANT_RULE: ("restaurant", ("name", "bookday", "booktime", "bookpeople")),
}
SLOT_WORDS = {
    "name": "its name",
    "bookday": "the day",
    "bookpeople": "the number of people",
    "bookstay": "the number of nights",
    "booktime": "the time",
}
State = dict[str, dict[str, str]]


class ScriptedConciergeModel(ToolBindingChatModel):
    """A deterministic chat model following the concierge prompts' sentences (module docstring)."""

    model: str = "scripted-concierge-demo"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=reply(messages))])


def reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The scripted reply to a conversation: the first rule its system prompt contains decides."""
    system = normalize_space(" ".join(str(m.text) for m in messages if isinstance(m, SystemMessage)))
    humans = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
    context = _json_object(humans[-1]) if humans else {}
    if TRIAGE_RULE in system:
        return _json_reply(triage(context))
    if MEMORY_RULE in system:
        return _json_reply(remember(context, system))
    if POLICY_RULE in system:
        return _json_reply(decide(context, system))
    if ACTION_RULE in system:
        return act(context, [m for m in messages if isinstance(m, ToolMessage)])
    return AIMessage(content=NO_INSTRUCTIONS_REPLY)


def triage(context: Mapping[str, Any]) -> dict[str, Any]:
    found = understand(
        str(context.get("message", "")),
        previous_intent=str(context.get("previous_intent", "")),
        previous_domain=str(context.get("previous_domain", "")),
    )
    return {
        "intent": found.intent,
        "domain": found.domain,
        "slots": dict(found.slots),
        "refs": list(found.refs),
        "requested": list(found.requested),
    }


def remember(context: Mapping[str, Any], system: str) -> State:
    """The belief state after the turn: the turn's slots merged in, references resolved by the rules."""
    state: State = {d: dict(s) for d, s in dict(context.get("state") or {}).items()}
    domain = str(context.get("domain", ""))
    if not domain:
        return state
    current = state.setdefault(domain, {})
    other = next((s for d, s in state.items() if d != domain and s), {})
    refs = set(context.get("refs") or ())
    if "pricerange" in refs and PRICE_CARRY_RULE in system and "pricerange" in other:
        current["pricerange"] = other["pricerange"]
    hotel = state.get("hotel", {})
    if "area" in refs and AREA_FROM_HOTEL_RULE in system and domain == "restaurant" and "area" in hotel:
        current["area"] = hotel["area"]
    current.update({str(k): str(v) for k, v in dict(context.get("slots") or {}).items()})
    return {d: s for d, s in state.items() if s}


def decide(context: Mapping[str, Any], system: str) -> dict[str, Any]:
    """Book when the state has every slot the prompt's sentence for the domain requires."""
    domain = str(context.get("domain", ""))
    have = dict(context.get("slots") or {})
    required = next(
        (slots for rule, (d, slots) in POLICY_SLOTS.items() if d == domain and rule in system), ()
    )
    missing = [slot for slot in required if not have.get(slot)]
    return {"decision": "request" if missing else "book", "missing": missing}


def act(context: Mapping[str, Any], results: Sequence[ToolMessage]) -> AIMessage:
    """First turn: the tool call the task needs (none to request); then the answer from its result."""
    task, domain = str(context.get("task", "")), str(context.get("domain", ""))
    slots = {str(k): str(v) for k, v in dict(context.get("slots") or {}).items()}
    if not results and domain in SEARCH_TOOL and task in ("search", "inform", "book"):
        name, args = tool_request(task, domain, slots)
        return AIMessage(content="", tool_calls=[tool_call(name=name, args=args, id=f"call_{task}_{domain}")])
    result = str(results[-1].text) if results else ""
    return AIMessage(content=answer(task, domain, slots, result, context))


def tool_request(task: str, domain: str, slots: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    if task == "book":
        keep = ("name", "bookday", "bookpeople", "bookstay" if domain == "hotel" else "booktime")
        return BOOK_TOOL[domain], {k: slots[k] for k in keep if slots.get(k)}
    if task == "inform":
        return SEARCH_TOOL[domain], {"name": slots.get("name", "")}
    return SEARCH_TOOL[domain], {k: slots[k] for k in SEARCH_SLOTS[domain] if slots.get(k)}


def answer(task: str, domain: str, slots: Mapping[str, str], result: str, context: Mapping[str, Any]) -> str:
    if task == "request":
        missing = [SLOT_WORDS.get(str(s), str(s)) for s in context.get("missing") or ()]
        if not domain:
            return "Are you looking for a hotel or a restaurant?"
        known = find(slots.get("name", ""), domain)
        venue = known.name if known else f"the {domain}"
        return f"To book {venue} I still need {_and(missing)}."
    if task == "book":
        return f"Your booking is confirmed. {result}" if result.startswith("Booked") else result
    if result.startswith(NO_MATCH) or not result:
        return f"I am sorry, I found no {domain} like that. {result}".strip()
    first = _fields(result.split("\n")[1])
    if task == "inform":
        asked = [str(a) for a in context.get("requested") or ()] or ["address", "phone"]
        details = ", ".join(f"{a} {first.get(a, 'unknown')}" for a in asked)
        return f"{first['name']}: {details}."
    count = int(result.split(" ", 1)[0])
    found = f"{count} {domain}{'s' if count > 1 else ''}"
    return f"I found {found}. I recommend {first['name']}, in the {first['area']}, {first['pricerange']}."


def _fields(line: str) -> dict[str, str]:
    """A search result line (`Venue.render`) as fields: name, area, pricerange, address, postcode, phone."""
    parts = [p.strip() for p in line.split("|")]
    address, _, postcode = parts[4].removeprefix("address ").rpartition(", ")
    return {
        "name": parts[0],
        "area": parts[1],
        "pricerange": parts[2],
        "address": address,
        "postcode": postcode,
        "phone": parts[5].removeprefix("phone "),
    }


def _and(items: Sequence[str]) -> str:
    if not items:
        return "a few more details"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object in a message; {} when there is none (a real model may wrap it in prose)."""
    start, end = text.find("{"), text.rfind("}")
    try:
        value = json.loads(text[start : end + 1]) if 0 <= start < end else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _json_reply(value: object) -> AIMessage:
    return AIMessage(content=json.dumps(value, sort_keys=True))
