"""Pydantic's validation errors as problems a user can fix: one per field, in the user's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator._problems import validation_problems
from evaluator.config import ConfigError, load_config
from evaluator.scenarios.model import Scenario


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(min_length=1)
    intent: str | tuple[str, ...] | None = None
    domain: str | None = None
    slots: dict[str, dict[str, str]] = Field(default_factory=dict)


def problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        Turn.model_validate(document)
    return [
        str(p) for p in validation_problems(raised.value, source="t.yaml", model=Turn, fix="see the README")
    ]


@pytest.mark.parametrize("intent", [3, [3]])
def test_a_value_none_of_a_field_s_alternatives_takes_is_one_problem_naming_them(intent: object) -> None:
    kinds = "a text or a list of texts"
    assert problems({"user": "hi", "intent": intent}) == [
        f"t.yaml: intent: {intent!r} is neither {kinds.replace(' or ', ' nor ')}. Fix: give {kinds}"
    ]


def test_texts_and_mappings_say_what_was_found_and_what_to_give() -> None:
    found = problems({"user": "", "domain": ["hotel"], "slots": {"hotel": ["north"]}})

    assert found == [
        "t.yaml: user: '' is empty. Fix: write it out (it cannot be empty)",
        "t.yaml: domain: ['hotel'] is not a text. Fix: give one value",
        "t.yaml: slots.hotel: ['north'] is not a mapping. Fix: give a mapping (name: value, one per line)",
    ]


def test_other_errors_keep_pydantic_s_message_and_the_default_fix() -> None:
    class Score(BaseModel):
        value: float = Field(le=1)

    with pytest.raises(ValidationError) as raised:
        Score.model_validate({"value": 1.5})
    (problem,) = validation_problems(raised.value, source="reply", model=Score, fix="see the README")

    assert str(problem) == "reply: value: 1.5: Input should be less than or equal to 1. Fix: see the README"


def scenario_problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        Scenario.model_validate(document)
    return [str(p) for p in validation_problems(raised.value, source="s.yaml", model=Scenario, fix="-")]


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            {"id": "a", "turns": [{"user": "hi"}], "policy": {"list": "items", "set": 3}},
            [
                "s.yaml: policy.list: 'items' is not a list. Fix: give a list: [\"items\"]",
                "s.yaml: policy.set: 3 is not a list. Fix: give a list: [3]",
            ],
        ),
        (
            {"id": "a", "input": "x", "expected": {"agent_tools": {"str": "search"}}},
            ["s.yaml: expected.agent_tools.str: 'search' is not a list. Fix: give a list: [\"search\"]"],
        ),
    ],
    ids=["policy-actions", "agent-tools-agent"],
)
def test_names_the_user_chose_spelt_like_a_type_are_names_not_a_field_s_alternatives(
    document: dict[str, Any], expected: list[str]
) -> None:
    assert scenario_problems(document) == expected


def test_a_list_of_texts_with_a_bad_item_names_the_item() -> None:
    turn = {"user": "hi", "expected": {"intent": ["book_hotel", 3]}}

    assert scenario_problems({"id": "a", "turns": [turn]}) == [
        "s.yaml: turns.0.expected.intent.1: 3 is not a text. Fix: quote it"
    ]


def test_configuration_tables_named_like_a_type_are_names_not_a_field_s_alternatives(tmp_path: Path) -> None:
    config = tmp_path / "evaluator.toml"
    config.write_text(
        '[targets.list]\nentry = "app:run"\nagents = "researcher"\n\n'
        '[targets.str]\nentry = 3\n\n[compare.thresholds]\nint = "high"\n'
    )

    with pytest.raises(ConfigError) as raised:
        load_config(config)

    assert str(raised.value).splitlines() == [
        f"{config}: targets.list.agents: 'researcher' is not a list. Fix: give a list: [\"researcher\"]",
        f"{config}: targets.str.entry: 3 is not a text. Fix: quote it",
        f"{config}: compare.thresholds.int: 'high': Input should be a valid number, unable to parse string "
        "as a number. Fix: see the configuration section of the README",
    ]


def test_a_validator_s_own_fix_is_the_problem_s_fix_said_once(tmp_path: Path) -> None:
    """`agent_tools` naming an unknown agent ended "... Fix: name the target's agents ... Fix: see the
    configuration section of the README": two fixes, the second saying nothing."""
    config = tmp_path / "evaluator.toml"
    config.write_text(
        '[targets.research]\nentry = "app:run"\nagents = ["research"]\n\n'
        '[targets.research.agent_tools]\nreserch = ["pdf_retrieval"]\n'
    )

    with pytest.raises(ConfigError) as raised:
        load_config(config)

    assert str(raised.value) == (
        f'{config}: targets.research: agent_tools: unknown agent "reserch" (did you mean "research"?). '
        "Fix: name the target's agents and tools as its agents = [...] and tools = [...] declare them "
        "(or add the new ones there)"
    )


def test_a_value_of_evaluator_toml_that_is_not_a_table_says_so_in_toml_s_words(tmp_path: Path) -> None:
    """It said "is not a mapping. Fix: give a mapping (name: value, one per line)": YAML's syntax."""
    config = tmp_path / "evaluator.toml"
    config.write_text("targets = 5\n\n[compare]\nthresholds = 3\n")

    with pytest.raises(ConfigError) as raised:
        load_config(config)

    fix = "Fix: give a table ([name] and key = value lines below it, or {key = value})"
    assert str(raised.value).splitlines() == [
        f"{config}: targets: 5 is not a table. {fix}",
        f"{config}: compare.thresholds: 3 is not a table. {fix}",
    ]


def test_a_key_left_without_a_value_says_so_and_what_to_write() -> None:
    # `user:` with nothing after it (YAML's null): "None is not a text. Fix: quote it" sent the user to
    # quote a value they had not written
    assert problems({"user": None, "slots": None}) == [
        "t.yaml: user: has no value. Fix: write a text there",
        "t.yaml: slots: has no value. Fix: write a mapping (name: value, one per line) there",
    ]
