"""Dialogue scenarios (DESIGN.md, "Dialogues"): the YAML format, the seed's JSON conversation format,
the dialogue lint problems, and the targets' dialogue keys in evaluator.toml."""

import json
from pathlib import Path

import pytest

from evaluator.config import load_config
from evaluator.errors import ConfigError, ScenarioError
from evaluator.scenarios import TargetCatalog, load_scenarios

DIALOGUE = """\
id: hotel-book-missing-nights
target: concierge
tags: [hotel, policy]
policy:
  book_hotel: [name, bookday, bookpeople, bookstay]
goal: {book: [hotel]}
turns:
  - user: I want to book a hotel for 2 people on Saturday
    expected:
      intent: book_hotel
      domain: hotel
      acts: [Hotel-Request]
      slots: {hotel: {bookpeople: "2", bookday: saturday}}
      action: request
      tools: {include: [search_hotels]}
  - user: The Acorn Guest House, but I don't know how many nights yet
    expected:
      intent: [book_hotel, find_hotel]
      slots: {hotel: {name: acorn guest house, bookpeople: 2}}
      action: request
"""
CATALOG = {"concierge": TargetCatalog(agents=("triage",), tools=("search_hotels", "book_hotel"))}


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _problems(paths: list[str], **kwargs: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenarios(paths, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def test_design_dialogue_loads(tmp_path: Path) -> None:
    [loaded] = load_scenarios([str(_write(tmp_path, "d.yaml", DIALOGUE))], targets=CATALOG)
    scenario = loaded.scenario
    assert scenario.is_dialogue and scenario.input == ""
    assert scenario.turns is not None and len(scenario.turns) == 2
    first, second = scenario.turns
    assert first.expected.intent == "book_hotel" and first.expected.acts == ("Hotel-Request",)
    assert first.expected.slots == {"hotel": {"bookpeople": "2", "bookday": "saturday"}}
    assert first.expected.tools.include == ("search_hotels",)
    assert first.expected.single_turn().tools.include == ("search_hotels",)
    assert second.expected.intent == ("book_hotel", "find_hotel")
    assert second.expected.slots == {"hotel": {"name": "acorn guest house", "bookpeople": 2}}
    assert scenario.policy == {"book_hotel": ("name", "bookday", "bookpeople", "bookstay")}
    assert scenario.goal is not None and scenario.goal.book == ("hotel",)


def test_plain_slot_values_keep_their_text_as_yaml_1_2_reads_them(tmp_path: Path) -> None:
    # PyYAML's YAML 1.1 would read `yes` as True, `17:15` as 1035 (base 60) and the day as a date;
    # each would then fail to match the target's "yes", "17:15" and "2026-11-28".
    slots = (
        "{hotel: {parking: yes, internet: no, bookday: 2026-11-28, phone: 01223, stars: 4, price: 2.5},"
        " train: {leaveat: 17:15, bikes: off, pets: true}}"
    )
    text = DIALOGUE.replace('{hotel: {bookpeople: "2", bookday: saturday}}', slots)
    [loaded] = load_scenarios([str(_write(tmp_path, "d.yaml", text))], targets=CATALOG)
    assert loaded.scenario.turns is not None
    assert loaded.scenario.turns[0].expected.slots == {
        "hotel": {
            "parking": "yes",
            "internet": "no",
            "bookday": "2026-11-28",
            "phone": "01223",
            "stars": 4,
            "price": 2.5,
        },
        "train": {"leaveat": "17:15", "bikes": "off", "pets": True},
    }


def test_a_slot_value_that_is_not_one_value_is_one_clear_problem(tmp_path: Path) -> None:
    text = DIALOGUE.replace('{hotel: {bookpeople: "2", bookday: saturday}}', "{hotel: {area: [centre]}}")
    path = _write(tmp_path, "d.yaml", text)
    [problem] = _problems([str(path)], targets=CATALOG)
    assert problem.startswith(
        f"{path}: turns.0.expected.slots.hotel.area: a slot's value is one value (text, a number or "
        "true/false), not list ['centre']; a list of one value is written as that value"
    )


def test_a_slot_written_with_no_value_is_absent_and_policy_on_a_single_turn_says_what_to_do(
    tmp_path: Path,
) -> None:
    text = DIALOGUE.replace('{hotel: {bookpeople: "2", bookday: saturday}}', "{hotel: {area: , stars: 4}}")
    [loaded] = load_scenarios([str(_write(tmp_path, "d.yaml", text))], targets=CATALOG)
    assert loaded.scenario.turns is not None
    assert loaded.scenario.turns[0].expected.slots == {"hotel": {"area": None, "stars": 4}}
    (tmp_path / "single").mkdir()
    policy = _write(
        tmp_path / "single", "f.yaml", "id: f\ntarget: concierge\ninput: hi\npolicy: {book_x: [a]}\n"
    )
    [problem] = _problems([str(policy)], targets=CATALOG)
    assert problem == (
        f"{policy}: policy: policy on a single-turn scenario. Fix: remove policy, or make this a "
        "dialogue: turns (- user: ...) in place of input"
    )


def test_dialogue_lint_problems_are_reported_together(tmp_path: Path) -> None:
    beside = _write(
        tmp_path, "a.yaml", DIALOGUE.replace("tags:", "input: hello\ntags:").replace("hotel-book", "a")
    )
    empty = _write(tmp_path, "b.yaml", "id: b\ntarget: concierge\nturns: []\n")
    typo = _write(
        tmp_path,
        "c.yaml",
        DIALOGUE.replace("action: request\n      tools", "actoin: request\n      tools").replace(
            "hotel-book", "c"
        ),
    )
    no_slot = _write(tmp_path, "d.yaml", DIALOGUE.replace("[name, bookday, bookpeople, bookstay]", "[]"))
    unknown_tool = _write(
        tmp_path, "e.yaml", DIALOGUE.replace("[search_hotels]", "[serch_hotels]").replace("hotel-book", "e")
    )
    policy_alone = _write(tmp_path, "f.yaml", "id: f\ntarget: concierge\ninput: hi\npolicy: {book_x: [a]}\n")
    problems = _problems([str(tmp_path)], targets=CATALOG)
    text = "\n".join(problems)
    assert f"{beside}: input: input beside turns" in text
    assert f"{empty}: turns: a dialogue with no turn" in text
    assert f'{typo}: turns.0.expected.actoin: unknown key "actoin" (did you mean "action"?)' in text
    assert f"{no_slot}: policy.book_hotel: a policy naming no slot" in text
    assert (
        f'{unknown_tool}: turns.0.expected.tools: unknown tool "serch_hotels" for target "concierge" '
        '(did you mean "search_hotels"?)' in text
    )
    assert f"{policy_alone}: policy: policy on a single-turn scenario" in text
    assert len(problems) == 6


def test_a_scenario_without_input_or_turns_says_both(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "id: a\ntarget: t\n")
    [problem] = _problems([str(path)])
    assert f"{path}: input: required field is missing" in problem
    assert "turns" in problem


SEED = [
    {
        "convo_id": 2001,
        "domain": "cooking",
        "available_data": ["recipes"],
        "turns": [
            {
                "turn_count": 1,
                "role": "user",
                "utterance": "Find me a healthy pasta recipe under 500 calories",
            },
            {
                "turn_count": 2,
                "role": "agent",
                "context": {
                    "key_entities": ["recipe"],
                    "slots": {"cuisine_type": "italian", "calorie_max": 500},
                },
                "actions": [{"flow": "read_recipe", "tools": ["recipe_search", "nutrition_lookup"]}],
                "utterance": "Here's a zucchini pasta primavera at 380 calories.",
            },
            {"turn_count": 3, "role": "user", "utterance": "What about the protein content?"},
            {
                "turn_count": 4,
                "role": "agent",
                "context": {"slots": {"recipe_id": "zucchini_primavera", "nutrient": "protein"}},
                "actions": [{"flow": "nutrition_lookup", "tools": ["nutrition_lookup"]}],
                "utterance": "It has 12g of protein per serving.",
            },
        ],
    },
    {"convo_id": "Second Convo", "target": "cook", "turns": [{"role": "user", "utterance": "hi"}]},
]


def test_seed_json_conversations_load_as_dialogues(tmp_path: Path) -> None:
    _write(tmp_path, "suite.json", json.dumps(SEED))
    _write(tmp_path, "d.yaml", DIALOGUE)
    loaded = load_scenarios([str(tmp_path)])
    by_id = {item.scenario.id: item.scenario for item in loaded}
    assert set(by_id) == {"2001", "second-convo", "hotel-book-missing-nights"}
    cooking = by_id["2001"]
    assert cooking.tags == ("cooking",) and cooking.turns is not None
    first, second = cooking.turns
    assert first.user == "Find me a healthy pasta recipe under 500 calories"
    assert first.expected.slots == {"cooking": {"cuisine_type": "italian", "calorie_max": 500}}
    assert first.expected.trajectory is not None
    assert first.expected.trajectory.flow == "read_recipe"
    assert first.expected.trajectory.tools == ("recipe_search", "nutrition_lookup")
    assert first.expected.answer is not None
    assert first.expected.answer.ground_truth == "Here's a zucchini pasta primavera at 380 calories."
    assert second.expected.trajectory is not None and second.expected.trajectory.flow == "nutrition_lookup"
    assert by_id["second-convo"].target == "cook"


def test_bad_seed_json_is_reported_per_conversation(tmp_path: Path) -> None:
    broken = _write(tmp_path, "a.json", "[{")
    bad = _write(
        tmp_path, "b.json", json.dumps([{"turns": []}, {"convo_id": 3, "turns": [{"role": "user"}]}])
    )
    text = "\n".join(_problems([str(tmp_path)]))
    assert f"{broken}: line 1, column 3: invalid JSON" in text
    assert f"{bad}[0]: convo_id: required field is missing" in text
    assert f"{bad}[1]: turns.0.user:" in text


def test_targets_declare_policy_state_keys_and_entities(tmp_path: Path) -> None:
    toml = tmp_path / "evaluator.toml"
    toml.write_text(
        '[targets.concierge]\nentry = "m:f"\nentities = "db.json"\n'
        'policy = {book_hotel = ["name", "bookday"]}\nstate_keys = {slots = "belief_state"}\n'
    )
    target = load_config(toml).settings.targets["concierge"]
    assert target.policy == {"book_hotel": ("name", "bookday")}
    assert target.state_keys == {"slots": "belief_state"}
    assert target.entities == Path("db.json")
    toml.write_text('[targets.c]\nentry = "m:f"\nstate_keys = {slot = "x"}\npolicy = {book_x = []}\n')
    with pytest.raises(ConfigError) as info:
        load_config(toml)
    assert "state_keys" in str(info.value) and "names no slot" in str(info.value)


def test_validate_needs_a_trace_per_turn_of_a_dialogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from evaluator.cli import main

    path = _write(tmp_path, "d.yaml", DIALOGUE)
    config = _write(tmp_path, "evaluator.toml", "")
    trace = _write(tmp_path, "t.json", json.dumps({"id": "t", "observations": []}))
    argv = ["evaluator", "validate", "--config", str(config), "--scenario", str(path), "--trace", str(trace)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    text = " ".join(capsys.readouterr().err.split())
    assert "--trace was given 1 time: 1 trace for the 2 user turns of dialogue hotel-book-missing" in text
    assert "Fix: give --trace once per user turn of the dialogue, in the order of its turns." in text


def test_a_targets_entity_catalog_is_read_from_its_json_file(tmp_path: Path) -> None:
    from evaluator.run.selection import dialogue_settings

    toml = _write(
        tmp_path,
        "evaluator.toml",
        '[targets.a]\nentry = "m:f"\nentities = "db.json"\nstate_keys = {slots = "belief"}\n'
        '[targets.b]\nentry = "m:f"\nentities = "bad.json"\n',
    )
    _write(tmp_path, "db.json", json.dumps(["Acorn Guest House", {"name": "Pizza Hut", "area": "centre"}]))
    _write(tmp_path, "bad.json", json.dumps([{"area": "north"}]))
    config = load_config(toml)
    with pytest.raises(ConfigError) as info:
        dialogue_settings(config)
    assert "[targets.b] entities" in str(info.value) and "not a list of names" in str(info.value)
    # a run of target a alone does not read b's catalog (a copied evaluator.toml, a target not in use)
    assert dialogue_settings(config, {"a"})["a"].entities == ("Acorn Guest House", "Pizza Hut")
    _write(tmp_path, "bad.json", "[]")
    settings = dialogue_settings(load_config(toml))
    assert settings["a"].entities == ("Acorn Guest House", "Pizza Hut")
    assert settings["a"].state_keys == {"slots": "belief"}


def test_a_dialogue_as_a_dataset_item_has_its_user_turns_and_their_expectations(tmp_path: Path) -> None:
    from evaluator.run.experiment import dataset_item

    [loaded] = load_scenarios([str(_write(tmp_path, "d.yaml", DIALOGUE))])
    item = dataset_item(loaded, "scenarios")
    assert item.input == [
        "I want to book a hotel for 2 people on Saturday",
        "The Acorn Guest House, but I don't know how many nights yet",
    ]
    assert item.expected_output["goal"] == {"book": ["hotel"]}
    assert item.expected_output["policy"] == {"book_hotel": ["name", "bookday", "bookpeople", "bookstay"]}
    first = item.expected_output["turns"][0]
    assert first["expected"]["action"] == "request" and first["expected"]["tools"] == {
        "include": ["search_hotels"]
    }


def test_a_turns_agent_tools_reach_the_turns_checks() -> None:
    """A turn's `expected.agent_tools` narrows or widens the target's for that turn, as a single-turn
    scenario's does: the turn is checked as a single-turn scenario with it (it was dropped, though
    lint checked its names)."""
    from evaluator.scenarios import TurnExpected

    turn = TurnExpected.model_validate({"intent": "find_hotel", "agent_tools": {"triage": ["search_hotels"]}})
    assert turn.single_turn().agent_tools == {"triage": ("search_hotels",)}


def test_seed_json_nested_too_deeply_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    deep = _write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    assert f"{deep}: values nested too deeply to read" in "\n".join(_problems([str(tmp_path)]))
