"""The seed's JSON conversation format (seeds/evaluation-and-feedback-spec.md, "Test Case Format") as
dialogue scenarios: a `.json` file in a suite holds one conversation or a list of them.

    {"convo_id": 2001, "domain": "cooking", "turns": [
        {"turn_count": 1, "role": "user", "utterance": "Find me a healthy pasta recipe"},
        {"turn_count": 2, "role": "agent",
         "context": {"key_entities": [...], "slots": {"cuisine_type": "italian"}},
         "actions": [{"flow": "read_recipe", "tools": ["recipe_search", "nutrition_lookup"]}],
         "utterance": "Here's a zucchini pasta primavera ..."}]}

Each user turn becomes a dialogue turn; the agent turn after it is what that turn expects:
`context.slots` the belief state in the conversation's `domain` (the seed's slots are not per domain),
`actions[].flow` the trajectory's flow (the first action's) and `actions[].tools` its tools (every
action's, in order), `utterance` the ground truth of the answer. A user turn with no agent turn after
it expects nothing. Keys the scenario format has (`id`, `target`, `tags`, `policy`, `goal`) are taken
as they are; the seed's other keys (`available_data`, `turn_count`, `key_entities`) are not checked.
The result is a scenario document, validated like a YAML one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evaluator.errors import Problem

__all__ = ["read_conversations"]

_PASSED_ON = ("target", "tags", "description", "policy", "goal")
_ID_CHARS = re.compile(r"[^a-z0-9._-]+")
MAX_JSON_BYTES = 4 * 1024 * 1024


def read_conversations(path: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """(source, scenario document) per conversation of a JSON file (source names the conversation's
    place in the file), or the problems that kept the file from being read."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return [], [_problem(str(path), "", "the file is larger than 4 MB", "split the suite into files")]
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [], [_problem(str(path), "", f"cannot read the file ({exc})", "check the file")]
    except json.JSONDecodeError as exc:
        return [], [
            _problem(
                str(path),
                "",
                f"line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})",
                "fix the JSON",
            )
        ]
    except RecursionError:  # the decoder is recursive: a value nested hundreds of levels deep
        return [], [
            _problem(str(path), "", "values nested too deeply to read", "nest lists and objects less deeply")
        ]
    items = document if isinstance(document, list) else [document]
    converted: list[tuple[str, dict[str, Any]]] = []
    problems: list[Problem] = []
    for index, item in enumerate(items):
        source = f"{path}[{index}]" if isinstance(document, list) else str(path)
        if not isinstance(item, dict):
            problems.append(
                _problem(
                    source,
                    "",
                    "a conversation is not a JSON object",
                    'write {"convo_id": ..., "turns": [...]}',
                )
            )
            continue
        scenario, found = _scenario(item, source)
        problems += found
        if scenario is not None:
            converted.append((source, scenario))
    return converted, problems


def _problem(source: str, field: str, found: str, fix: str) -> Problem:
    return Problem(source=source, field=field, found=found, fix=fix)


def _scenario(item: dict[str, Any], source: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    """One conversation as a scenario document; None with the problems when it has no id or turns."""
    raw_id = item.get("id", item.get("convo_id"))
    turns = item.get("turns")
    problems: list[Problem] = []
    if raw_id is None or str(raw_id).strip() == "":
        problems.append(_problem(source, "convo_id", "required field is missing", "add convo_id: ..."))
    if not isinstance(turns, list):
        problems.append(
            _problem(source, "turns", "required field is missing or not a list", "add turns: [...]")
        )
    if problems:
        return None, problems
    domain = item.get("domain")
    document: dict[str, Any] = {"id": _ID_CHARS.sub("-", str(raw_id).strip().lower()).strip("-._") or "x"}
    document |= {key: item[key] for key in _PASSED_ON if key in item}
    if isinstance(domain, str) and "tags" not in document:
        document["tags"] = [domain]
    document["turns"] = _turns(
        turns if isinstance(turns, list) else [], domain if isinstance(domain, str) else None
    )
    return document, []


def _turns(turns: list[Any], domain: str | None) -> list[dict[str, Any]]:
    """The user turns, each with the expectations of the agent turn that answers it."""
    converted: list[dict[str, Any]] = []
    for turn in turns:
        if not isinstance(turn, dict):
            converted.append({"user": turn})  # the scenario format says what is wrong with it
        elif turn.get("role") == "user":
            converted.append({"user": turn.get("utterance")})
        elif converted and "expected" not in converted[-1]:
            converted[-1]["expected"] = _expected(turn, domain)
    return converted


def _expected(turn: dict[str, Any], domain: str | None) -> dict[str, Any]:
    expected: dict[str, Any] = {}
    context = turn.get("context")
    slots = context.get("slots") if isinstance(context, dict) else None
    if isinstance(slots, dict):
        expected["slots"] = {domain or "default": slots}
    actions = [a for a in turn.get("actions") or () if isinstance(a, dict)]
    if actions:
        trajectory: dict[str, Any] = {"tools": [t for a in actions for t in a.get("tools") or ()]}
        if actions[0].get("flow"):
            trajectory["flow"] = actions[0]["flow"]
        expected["trajectory"] = trajectory
    utterance = turn.get("utterance")
    if isinstance(utterance, str) and utterance.strip():
        expected["answer"] = {"ground_truth": utterance}
    return expected
