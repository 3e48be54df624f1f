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


def test_aliases_standing_for_more_values_than_a_file_could_hold_are_a_problem_not_the_machine_s_memory(
    tmp_path: Path,
) -> None:
    """A "billion laughs": 1 KB whose lists of aliases stand for 10^9 values; validating it listed a
    problem per value until memory ran out."""
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    document, problems = _read(tmp_path, "id: laughs\n" + "\n".join(levels) + "\ntags: *a8\n")
    [problem] = problems
    assert document is None
    assert problem.startswith(": its aliases (*name) stand for ") and problem.endswith(
        " more values, over 10000"
    )


def test_a_block_shared_by_many_turns_through_an_alias_is_read(tmp_path: Path) -> None:
    turn = "  - user: again\n    expected: *e\n"
    text = "turns:\n  - user: hi\n    expected: &e {intent: book_hotel, slots: {hotel: {area: north}}}\n"
    document, problems = _read(tmp_path, text + turn * 200)
    assert problems == [] and isinstance(document, dict) and len(document["turns"]) == 201


def test_values_nested_deeper_than_the_reader_can_go_are_a_problem_not_a_traceback(tmp_path: Path) -> None:
    """The parser is recursive: 900 nested lists raised RecursionError through `lint` and `run`."""
    document, problems = _read(tmp_path, "tags: " + "[" * 900 + "]" * 900 + "\n")
    assert document is None and problems == [": values nested too deeply to read"]


def test_a_tag_that_would_build_an_object_is_refused_with_the_fix_not_a_syntax_hint(tmp_path: Path) -> None:
    """It was refused safely, but "Fix: correct the YAML syntax there" sent the reader to the syntax."""
    marker = tmp_path / "ran"
    document, problems = _read(tmp_path, f"input: !!python/object/apply:os.system ['touch {marker}']\n")
    assert document is None and not marker.exists()
    [problem] = read_yaml(tmp_path / "a.yaml")[1]
    assert problem.fix == "write a plain value there: tags that build objects (!!python/...) are never read"
    assert problems == [
        "line 1, column 8: invalid YAML: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'"
    ]


def test_a_long_text_named_by_many_aliases_is_a_problem_not_the_machine_s_memory(tmp_path: Path) -> None:
    """Under the values' cap, but not the text's: a 50 KB text named 9,000 times (86 KB of file) stands
    for 450 MB of `contains` strings; a run took 2 GB and more checking them, then ran out of memory."""
    text = "z" * 50_000
    aliases = ", ".join(["*s"] * 9_000)
    document, problems = _read(
        tmp_path, f"id: big\nexpected:\n  answer:\n    contains: [&s {text}, {aliases}]\n"
    )
    [problem] = problems
    assert document is None
    assert problem == (
        ": with its aliases (*name) written out it stands for 450050027 characters of text, over 2097152"
    )


def test_a_long_text_named_a_few_times_is_read(tmp_path: Path) -> None:
    text = "z" * 50_000
    document, problems = _read(tmp_path, f"id: ok\ninput: &s {text}\ndescription: *s\ntags: [*s, *s]\n")
    assert problems == [] and isinstance(document, dict) and document["tags"] == [text, text]
