"""Safe YAML reading: merge keys work as YAML tools read them; a mapping's own keys stay unique."""

from pathlib import Path

from evaluator._yaml import read_yaml


def _read(tmp_path: Path, text: str) -> tuple[object, list[str]]:
    path = tmp_path / "a.yaml"
    path.write_text(text)
    document, problems = read_yaml(path)
    return document, [f"{p.field}: {p.found}" for p in problems]


def test_a_merge_key_brings_in_the_keys_the_mapping_does_not_write_itself(tmp_path: Path) -> None:
    text = """\
turns:
  - user: I need a cheap hotel
    expected: &hotel {domain: hotel, intent: find_hotel, slots: {pricerange: cheap}}
  - user: In the north, please
    expected:
      <<: *hotel
      slots: {pricerange: cheap, area: north}
"""
    document, problems = _read(tmp_path, text)
    assert problems == []
    assert document == {
        "turns": [
            {
                "user": "I need a cheap hotel",
                "expected": {"domain": "hotel", "intent": "find_hotel", "slots": {"pricerange": "cheap"}},
            },
            {
                "user": "In the north, please",
                "expected": {
                    "domain": "hotel",
                    "intent": "find_hotel",
                    "slots": {"pricerange": "cheap", "area": "north"},
                },
            },
        ]
    }


def test_merge_keys_take_a_list_of_mappings_the_first_winning(tmp_path: Path) -> None:
    text = "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  <<: [*a, *b]\n"
    document, problems = _read(tmp_path, text)
    assert problems == [] and document == {
        "a": {"x": 1, "y": 1},
        "b": {"y": 2, "z": 2},
        "c": {"x": 1, "y": 1, "z": 2},
    }


def test_a_key_written_twice_is_refused_even_beside_a_merge_key(tmp_path: Path) -> None:
    _, problems = _read(tmp_path, "a: &a {x: 1}\nb:\n  <<: *a\n  y: 1\n  y: 2\n")
    assert problems == ['line 5, column 3: invalid YAML: duplicate key "y"']
