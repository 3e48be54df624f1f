"""Scenario loading: the format, and every kind of bad input reported together with a fix."""

from pathlib import Path

import pytest

from evaluator.errors import ScenarioError
from evaluator.scenarios import TargetCatalog, load_scenarios

GOOD = """\
id: research-pdf-only
description: Answerable from the PDF corpus alone
tags: [research, smoke]
target: research
input: "What is the state of the art in text-to-SQL?"
expected:
  agents: {include: [research], exclude: [clarification]}
  tools:  {include: [pdf_retrieval], exclude: [web_search]}
  trajectory: {flow: research, tools: [pdf_retrieval]}
  answer:
    criteria: |
      Names a specific approach and cites its accuracy.
    contains: ["Spider"]
judge: {prompt: evaluation/quality, version: 1}
"""
CATALOG = {
    "research": TargetCatalog(
        agents=("orchestrator", "research", "clarification"), tools=("pdf_retrieval", "web_search")
    )
}


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _problems(paths: list[str], **kwargs: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenarios(paths, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def test_design_example_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD)
    [loaded] = load_scenarios(
        [str(path)], targets=CATALOG, prompts={"evaluation/quality": {1: ("production",)}}
    )
    scenario = loaded.scenario
    assert loaded.path == path
    assert scenario.expected.tools.exclude == ("web_search",)
    assert scenario.expected.tools.strict is True
    assert scenario.expected.trajectory is not None and scenario.expected.trajectory.flow == "research"
    assert scenario.judge is not None and scenario.judge.version == 1


def test_folder_recursive_glob_and_tags(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", GOOD)
    _write(tmp_path, "sub/b.yml", GOOD.replace("research-pdf-only", "b").replace("smoke", "slow"))
    _write(tmp_path, "sub/notes.txt", "ignored")
    assert [s.scenario.id for s in load_scenarios([str(tmp_path)])] == ["research-pdf-only", "b"]
    assert [s.scenario.id for s in load_scenarios([str(tmp_path / "sub" / "*.yml")])] == ["b"]
    assert [s.scenario.id for s in load_scenarios([str(tmp_path)], tags=["slow"])] == ["b"]
    assert load_scenarios([str(tmp_path)], tags=["nothing"]) == []


def test_unknown_key_did_you_mean(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("exclude: [web_search]", "exlude: [web_search]"))
    [problem] = _problems([str(path)])
    assert f'{path}: expected.tools.exlude: unknown key "exlude" (did you mean "exclude"?)' in problem
    assert "Fix: use one of: include, exclude, allow, strict" in problem


def test_all_problems_in_all_files_reported_together(tmp_path: Path) -> None:
    bad_yaml = _write(tmp_path, "1.yaml", "id: [unclosed\n")
    missing = _write(tmp_path, "2.yaml", "id: x\ntarget: research\n")
    unknown = _write(
        tmp_path,
        "3.yaml",
        GOOD.replace("target: research", "target: reserch").replace("research-pdf-only", "three"),
    )
    bad_agent = _write(
        tmp_path,
        "4.yaml",
        GOOD.replace("include: [pdf_retrieval]", "include: [pdf_retreival]").replace(
            "research-pdf-only", "four"
        ),
    )
    problems = _problems([str(tmp_path)], targets=CATALOG)
    text = "\n".join(problems)
    assert f"{bad_yaml}: line 2, column 1: invalid YAML" in text
    assert f"{missing}: input: required field is missing" in text
    assert f'{unknown}: target: unknown target "reserch" (did you mean "research"?)' in text
    assert (
        f'{bad_agent}: expected.tools: unknown tool "pdf_retreival" for target "research" (did you mean '
        f'"pdf_retrieval"?)' in text
    )
    assert len(problems) == 4


def test_duplicate_ids(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", GOOD)
    second = _write(tmp_path, "b.yaml", GOOD)
    [problem] = _problems([str(tmp_path)])
    assert problem.startswith(f'{second}: id: "research-pdf-only" is also the id of')


def test_duplicate_yaml_key_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD + "input: again\n")
    [problem] = _problems([str(path)])
    assert 'duplicate key "input"' in problem


def test_include_and_exclude_overlap(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("exclude: [clarification]", "exclude: [research]"))
    [problem] = _problems([str(path)])
    assert "expected.agents: research is both in include and in exclude" in problem


def test_bad_id_and_not_a_mapping_and_missing_path(tmp_path: Path) -> None:
    bad_id = _write(tmp_path, "a.yaml", GOOD.replace("research-pdf-only", "Research PDF"))
    listing = _write(tmp_path, "b.yaml", "- just\n- a list\n")
    problems = _problems([str(bad_id), str(listing), str(tmp_path / "nope")])
    assert any("id: 'Research PDF' is not a valid id" in p for p in problems)
    assert any("the file is not a YAML mapping" in p for p in problems)
    assert any("nope: no such file or folder" in p for p in problems)


def test_unsafe_yaml_tag_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "id: !!python/object/apply:os.system ['echo pwned']\n")
    [problem] = _problems([str(path)])
    assert "invalid YAML" in problem


def test_size_cap(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD + "# " + "x" * (1024 * 1024) + "\n")
    [problem] = _problems([str(path)])
    assert "bytes" in problem and "under" in problem


def test_unknown_judge_prompt(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("evaluation/quality", "evaluation/qualty"))
    [problem] = _problems([str(path)], prompts={"evaluation/quality": {1: ("production",)}})
    assert 'judge.prompt: unknown prompt "evaluation/qualty" (did you mean "evaluation/quality"?)' in problem


def test_judge_version_and_label_together(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("version: 1}", "version: 1, label: production}"))
    [problem] = _problems([str(path)])
    assert "give either version or label" in problem


def test_trajectory_needs_its_tools(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "a.yaml",
        GOOD.replace("trajectory: {flow: research, tools: [pdf_retrieval]}", "trajectory: {flow: research}"),
    )
    [problem] = _problems([str(path)])
    assert "expected.trajectory.tools: required field is missing" in problem


def test_a_key_that_is_not_a_plain_value(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "? [a, b]\n: 1\n")
    [problem] = _problems([str(path)])
    assert "invalid YAML" in problem and "a key must be a plain value" in problem


PROMPTS = {"evaluation/quality": {1: ("production",), 2: ("candidate",)}}


@pytest.mark.parametrize(
    ("judge", "problem"),
    [
        ("{prompt: evaluation/quality, version: 7}", "judge.version: no version 7 of evaluation/quality"),
        ("{version: 7}", "judge.version: no version 7 of evaluation/quality"),  # the configured prompt's
        (
            "{prompt: evaluation/quality, label: candidat}",
            'judge.label: no version of evaluation/quality has label "candidat" (did you mean "candidate"?)',
        ),
    ],
)
def test_a_judge_version_or_label_that_does_not_exist(tmp_path: Path, judge: str, problem: str) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("{prompt: evaluation/quality, version: 1}", judge))
    [found] = _problems([str(path)], prompts=PROMPTS, judge_prompt="evaluation/quality")
    assert found.startswith(f"{path}: {problem}") and "Fix:" in found


@pytest.mark.parametrize("judge", ["{version: 2}", "{label: candidate}", "{prompt: evaluation/quality}"])
def test_a_judge_version_or_label_that_exists(tmp_path: Path, judge: str) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("{prompt: evaluation/quality, version: 1}", judge))
    assert load_scenarios([str(path)], prompts=PROMPTS, judge_prompt="evaluation/quality")


def test_a_folder_without_scenarios_says_so(tmp_path: Path) -> None:
    [problem] = _problems([str(tmp_path)])
    assert problem.startswith(f"{tmp_path}: no scenario files here")


def test_a_single_value_where_a_list_belongs_says_how_to_write_the_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", GOOD.replace("tags: [research, smoke]", "tags: research"))
    [problem] = _problems([str(path)])
    assert problem == f"{path}: tags: 'research' is not a list. Fix: give a list: [\"research\"]"


def test_an_unclosed_quote_says_where_it_began(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", 'id: x\ntarget: t\ninput: "unclosed\nexpected: {}\n')
    [problem] = _problems([str(path)])
    assert "while scanning a quoted scalar that began at line 3, column 8" in problem


def test_every_problem_of_a_file_at_once_an_unknown_key_hides_no_misspelt_name(tmp_path: Path) -> None:
    text = (
        GOOD.replace("research-pdf-only", "Research PDF")
        .replace("exclude: [web_search]", "exlude: [web_search]")
        .replace("include: [pdf_retrieval]", "include: [pdf_retreival]")
        .replace("exclude: [clarification]", "exclude: [clarificaton]")
        .replace("version: 1}", "version: 7}")
    )
    path = _write(tmp_path, "a.yaml", text)
    problems = _problems([str(path)], targets=CATALOG, prompts={"evaluation/quality": {1: ("production",)}})
    text = "\n".join(problems)
    assert f"{path}: id: 'Research PDF' is not a valid id" in text
    assert f'{path}: expected.tools.exlude: unknown key "exlude"' in text
    assert f'{path}: expected.tools: unknown tool "pdf_retreival" for target "research"' in text
    assert f'{path}: expected.agents: unknown agent "clarificaton" for target "research"' in text
    assert f"{path}: judge.version: no version 7 of evaluation/quality" in text
    assert len(problems) == 5


def test_a_file_without_its_target_reports_its_format_problems_only(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", "id: x\ninput: hi\nexpected: {tools: {include: [nope]}, typo: 1}\n")
    problems = _problems([str(path)], targets=CATALOG)
    assert sorted(p.split(": ")[1] for p in problems) == ["expected.typo", "target"]


def test_an_unknown_target_is_one_problem_for_all_the_files_naming_it(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        text = GOOD.replace("research-pdf-only", name).replace(": research\n", ": reserch\n")
        _write(tmp_path, f"s/{name}.yaml", text)
    [problem] = _problems([str(tmp_path)], targets=CATALOG)
    assert problem.startswith(f'{tmp_path / "s"} (3 files): target: unknown target "reserch" (did you mean')
