"""The bundled dialogue scenarios: well-formed (DESIGN.md's dialogue format), documented, and with the
per-turn outcomes scenarios/concierge/README.md promises.

The evaluator does not run dialogues yet, so each scenario is played here, in-process, turn by turn, and
each turn's reported state (read from its trace as DESIGN.md says) is compared with the turn's `expected`
key by key: intent and acts as sets, domain, slots as a whole (JGA), action, policy compliance, tools and
answer. The figures are the demo's promises, not the evaluator's metrics.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.demo.concierge_tracing import TracedTurn, traced_dialogue
from tests.demo.tracing import REPO

SCENARIOS = REPO / "scenarios" / "concierge"
TOP_KEYS = {"id", "description", "tags", "target", "policy", "goal", "turns"}
EXPECTED_KEYS = {"intent", "domain", "acts", "slots", "action", "agents", "tools", "answer"}
V2 = {"agents/concierge-policy": 2}
# JSON scenario -> its agent turns that policy v1 gets wrong (v2 gets none wrong)
JSON_V1_MISMATCHES = {"concierge-seed-hotel-book-no-nights": [0]}

# scenario id -> ({turn: failing checks} with policy v1 (production), the same with policy v2)
OUTCOMES: dict[str, tuple[dict[int, list[str]], dict[int, list[str]]]] = {
    "concierge-hotel-book-missing-nights": ({1: ["action", "acts", "answer", "policy", "tools"]}, {}),
    "concierge-hotel-book-complete": ({}, {}),
    "concierge-hotel-book-abandoned": (
        {0: ["action", "acts", "policy", "tools"], 1: ["action", "acts", "policy", "tools"]},
        {},
    ),
    "concierge-restaurant-search-then-book": ({}, {}),
    "concierge-restaurant-book-missing-time": ({}, {}),
    "concierge-restaurant-to-hotel-same-area": ({1: ["answer", "slots"]}, {1: ["answer", "slots"]}),
    "concierge-restaurant-to-hotel-same-price": ({}, {}),
    "concierge-hotel-to-restaurant-same-area": ({}, {}),
    "concierge-restaurant-to-hotel-book": ({1: ["slots"], 2: ["slots"]}, {1: ["slots"], 2: ["slots"]}),
    "concierge-info-phone": ({}, {}),
    "concierge-info-address-after-search": ({}, {}),
    "concierge-restaurant-no-offer": ({}, {}),
    "concierge-vague-then-hotel": ({}, {}),
    "concierge-restaurant-then-hotel-booking": ({1: ["action", "acts", "policy", "tools"]}, {}),
}


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def turn_problems(scenario: dict[str, Any], index: int, turn: TracedTurn) -> list[str]:
    """The expected keys this turn's reported state, tools or reply did not match, sorted."""
    expected, state = scenario["turns"][index]["expected"], turn.state()
    intents = expected.get("intent")
    domain = expected.get("domain") or (intents.rpartition("_")[2] if isinstance(intents, str) else None)
    checks = {
        "intent": intents is None or _as_set(intents) == _as_set(state.get("intent")),
        "domain": domain is None or domain == state.get("domain"),
        "acts": "acts" not in expected or _acts(expected["acts"]) == _acts(state.get("acts", [])),
        "slots": "slots" not in expected or expected["slots"] == state.get("slots"),
        "action": "action" not in expected or expected["action"] == state.get("action"),
        "policy": _compliant(scenario.get("policy", {}), state),
        "tools": _included(expected.get("tools", {}), turn.named("tool")),
        "agents": _included(expected.get("agents", {}), turn.named("agent")),
        "answer": all(
            t.lower() in turn.reply.lower() for t in expected.get("answer", {}).get("contains", ())
        ),
    }
    return sorted(key for key, ok in checks.items() if not ok)


def _as_set(value: object) -> set[str]:
    return {str(v) for v in value} if isinstance(value, list) else {str(value)}


def _acts(acts: list[str]) -> set[str]:
    return {a for a in acts if not a.lower().startswith("general-")}


def _compliant(policy: dict[str, list[str]], state: dict[str, Any]) -> bool:
    """DESIGN.md: a booking action whose intent the policy guards, in a state lacking a required slot."""
    required = policy.get(str(state.get("intent")), [])
    have = state.get("slots", {}).get(str(state.get("domain")), {})
    return not str(state.get("action", "")).startswith("book") or all(slot in have for slot in required)


def _included(spec: dict[str, list[str]], names: list[str]) -> bool:
    return set(spec.get("include", ())) <= set(names) and not set(spec.get("exclude", ())) & set(names)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenario_file_follows_the_dialogue_format(path: Path) -> None:
    scenario = _load(path)

    assert {"id", "description", "tags", "target", "turns"} <= set(scenario) <= TOP_KEYS
    assert scenario["id"] == path.stem and re.fullmatch(r"concierge-[a-z0-9][a-z0-9-]*", scenario["id"])
    assert scenario["target"] == "concierge" and "concierge" in scenario["tags"]
    assert scenario["turns"] and all(set(t) == {"user", "expected"} for t in scenario["turns"])
    for turn in scenario["turns"]:
        assert set(turn["expected"]) <= EXPECTED_KEYS
        for domain, slots in turn["expected"].get("slots", {}).items():
            assert domain in {"hotel", "restaurant"} and all(isinstance(v, str) for v in slots.values())
    for slots in scenario.get("policy", {}).values():
        assert slots  # DESIGN.md: a policy naming no slot is bad input


def _json_mismatches(conversation: dict[str, Any], pins: dict[str, int] | None) -> list[int]:
    """The agent turns (0-based) whose slots, flow or tools the played dialogue does not match."""
    played = traced_dialogue([t["utterance"] for t in conversation["turns"][::2]], pins=pins)
    mismatched = []
    for index, (turn, agent) in enumerate(zip(played, conversation["turns"][1::2], strict=True)):
        state = turn.state()
        if (
            state["slots"] != {conversation["domain"]: agent["context"]["slots"]}
            or [state["action"]] != [a["flow"] for a in agent["actions"]]
            or turn.named("tool") != [tool for a in agent["actions"] for tool in a["tools"]]
        ):
            mismatched.append(index)
    return mismatched


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.json")), ids=lambda p: p.stem)
def test_json_scenario_follows_the_seed_conversation_format(path: Path) -> None:
    (conversation,) = json.loads(path.read_text(encoding="utf-8"))

    # the seed's keys, plus the target the suite runs it against (a scenario key the loader passes on)
    assert set(conversation) == {"target", "convo_id", "domain", "available_data", "turns"}
    roles = [t["role"] for t in conversation["turns"]]
    assert roles == ["user", "agent"] * (len(roles) // 2)
    for turn in conversation["turns"][1::2]:
        assert {"context", "actions", "utterance"} <= set(turn) and "slots" in turn["context"]
    assert _json_mismatches(conversation, V2) == []
    assert _json_mismatches(conversation, None) == JSON_V1_MISMATCHES.get(path.stem, [])


def test_every_scenario_has_a_documented_outcome() -> None:
    readme = (SCENARIOS / "README.md").read_text(encoding="utf-8")

    assert {p.stem for p in SCENARIOS.glob("*.yaml")} == set(OUTCOMES)
    for path in SCENARIOS.glob("*.*"):
        if path.suffix in {".yaml", ".json"}:
            assert f"`{path.stem}`" in readme
    assert len(OUTCOMES) >= 12


@pytest.mark.parametrize("scenario_id", sorted(OUTCOMES))
@pytest.mark.parametrize("version", [1, 2])
def test_each_turn_meets_or_misses_its_expectations_as_documented(scenario_id: str, version: int) -> None:
    scenario = _load(SCENARIOS / f"{scenario_id}.yaml")
    turns = traced_dialogue([t["user"] for t in scenario["turns"]], pins=V2 if version == 2 else None)

    problems = {i: p for i, turn in enumerate(turns) if (p := turn_problems(scenario, i, turn))}
    assert problems == OUTCOMES[scenario_id][version - 1]
