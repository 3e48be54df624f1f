"""Loading scenario files for `run`, `lint` and `validate`.

Loading never stops at the first problem: every problem in every file is collected (file, field, what
was found, the fix, "did you mean" for near misses) and raised together as one ScenarioError.
"""

from __future__ import annotations

import copy
import glob
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import takewhile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluator._problems import validation_problems
from evaluator._yaml import read_yaml
from evaluator.config import CONFIG_FILE, NO_CONFIG_FIX, Config
from evaluator.errors import Problem, ScenarioError, did_you_mean
from evaluator.scenarios.conversations import read_conversations
from evaluator.scenarios.model import Expected, LoadedScenario, Scenario, TargetCatalog

__all__ = ["SCENARIO_SUFFIXES", "PromptCatalog", "check_given", "expand_paths", "load_scenarios", "with_tags"]

SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")  # .json: the seed's conversation format
PromptCatalog = Mapping[str, Mapping[int, Collection[str]]]  # prompt name -> version -> its labels
_ID_FIX = "use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit"
# What a required field the file got wrong stands in for, so that the rest of the file is still checked.
_PLACEHOLDERS = {"id": "placeholder"}
_KIND_FIX = "a single-turn scenario has input; a dialogue has turns (- user: ...), never both"
_UnknownTargets = dict[str, list[Path]]  # an unknown target name -> the files naming it


def expand_paths(paths: Iterable[str]) -> tuple[list[Path], list[Problem]]:
    """Files, folders (recursively) and globs to a sorted, de-duplicated list of scenario files."""
    found: dict[Path, None] = {}
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            matches = sorted(p for p in path.rglob("*") if p.suffix in SCENARIO_SUFFIXES)
        elif path.is_file():
            matches = [path]
        else:
            matches = sorted(
                Path(m)
                for m in glob.glob(raw, recursive=True)
                if Path(m).is_file() and Path(m).suffix in SCENARIO_SUFFIXES
            )
        if not matches and not path.exists() and not glob.has_magic(raw):
            problems.append(
                Problem(source=raw, field="", found="no such file or folder", fix="check the path")
            )
        elif not matches:
            problems.append(
                Problem(
                    source=raw,
                    field="",
                    found="no scenario files here",
                    fix="give a .yaml file, a folder of them, or a glob",
                )
            )
        found.update(dict.fromkeys(matches))
    return list(found), problems


def load_scenarios(
    paths: Sequence[str],
    *,
    targets: Mapping[str, TargetCatalog] | None = None,
    tags: Collection[str] = (),
    prompts: PromptCatalog | None = None,
    judge_prompt: str | None = None,
    config: Config | None = None,
    target_required: bool = True,
) -> list[LoadedScenario]:
    """Load and check scenario files; raise ScenarioError with every problem found.

    `targets`: the configured targets (None: do not check target names). `tags`: keep only scenarios
    having at least one of these tags. `prompts`: the prompt files, to check `judge:` against (None:
    skip), where `judge_prompt` is the one a `judge:` without `prompt` means (the configured quality
    prompt); checking targets, a scenario without one is a problem unless not `target_required` (`lint`:
    a scenario only for `validate` needs none; `validate`, which runs none, does not check them).
    `config`: where `targets` come from, named by the problem of an unknown target (which is one
    problem for all the files naming it).

    A file that breaks the format (an unknown key, a bad id) still has the names in the rest of it
    checked: every problem of a file is reported at once."""
    files, problems = expand_paths(paths)
    loaded: list[LoadedScenario] = []
    unknown: _UnknownTargets = {}
    for path in files:
        for source, scenario, found in _load_file(path):
            file_problems = list(found)
            if scenario is not None:
                file_problems += _checked(
                    scenario,
                    source,
                    targets,
                    prompts,
                    judge_prompt,
                    unknown=unknown,
                    required=target_required,
                )
            problems += file_problems
            if scenario is not None and not file_problems and scenario.target not in unknown:
                loaded.append(LoadedScenario(scenario=scenario, path=path))
    problems += _unknown_target_problems(unknown, targets or {}, config)
    problems += _duplicate_ids(loaded)
    if problems:
        raise ScenarioError(problems)
    return with_tags(loaded, tags)


def with_tags(loaded: Sequence[LoadedScenario], tags: Collection[str]) -> list[LoadedScenario]:
    """The scenarios having at least one of `tags` (all of them when no tag is given)."""
    return [item for item in loaded if not tags or set(item.scenario.tags) & set(tags)]


def check_given(
    scenarios: Sequence[Scenario],
    *,
    targets: Mapping[str, TargetCatalog] | None = None,
    prompts: PromptCatalog | None = None,
    judge_prompt: str | None = None,
    config: Config | None = None,
) -> list[LoadedScenario]:
    """Scenarios built in Python, checked as `load_scenarios` checks files (targets, agent and tool
    names, judge prompts, unique ids); ScenarioError with every problem found."""
    loaded = [LoadedScenario(scenario=s, path=Path(f"<scenarios[{i}]>")) for i, s in enumerate(scenarios)]
    unknown: _UnknownTargets = {}
    problems = [
        p
        for item in loaded
        for p in _checked(item.scenario, item.path, targets, prompts, judge_prompt, unknown=unknown)
    ]
    problems += _unknown_target_problems(unknown, targets or {}, config)
    problems += _duplicate_ids(loaded)
    if problems:
        raise ScenarioError(problems)
    return loaded


def _checked(
    scenario: Scenario,
    path: Path | str,
    targets: Mapping[str, TargetCatalog] | None,
    prompts: PromptCatalog | None,
    judge_prompt: str | None,
    *,
    unknown: _UnknownTargets,
    required: bool = True,
) -> list[Problem]:
    """What is wrong with the names a scenario uses: what its target declares, and (given the prompt
    files) its judge prompt. A target that is not in `targets` is added to `unknown`, said once for
    all the files naming it."""
    problems: list[Problem] = []
    if targets is not None and not scenario.target and required:
        problems.append(
            Problem(
                source=str(path),
                field="target",
                found="required field is missing",
                fix="add target: ... (a target named in evaluator.toml), or pass --target",
            )
        )
    elif targets is not None and scenario.target and scenario.target not in targets:
        unknown.setdefault(scenario.target, []).append(Path(path))
    catalog = (targets or {}).get(scenario.target)
    if catalog is not None:
        problems += _check_catalog(scenario, path, catalog)
    if prompts is not None:
        problems += _check_judge(scenario, path, prompts, judge_prompt)
    return problems


_Loaded = tuple[str, Scenario | None, list[Problem]]  # (source, the scenario or None, its problems)


def _load_file(path: Path) -> list[_Loaded]:
    """Every scenario of a file: one for YAML, one per conversation for the seed's JSON format."""
    if path.suffix == ".json":
        conversations, problems = read_conversations(path)
        found: list[_Loaded] = [(str(path), None, problems)] if problems else []
        return found + [(source, *_validated(doc, source)) for source, doc in conversations]
    document, problems = read_yaml(path)
    if problems:
        return [(str(path), None, problems)]
    if not isinstance(document, dict):
        problem = Problem(
            source=str(path),
            field="",
            found="the file is not a YAML mapping",
            fix="write the scenario as keys: id, target, input, expected, ...",
        )
        return [(str(path), None, [problem])]
    return [(str(path), *_validated(document, str(path)))]


def _validated(document: dict[str, Any], source: str) -> tuple[Scenario | None, list[Problem]]:
    """The scenario of a document, or what is wrong with it (and the rest of it, salvaged)."""
    document, problems = _kind_problems(document, source)
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        return _salvaged(document, exc), problems + validation_problems(
            exc,
            source=source,
            model=Scenario,
            fix="see the scenario format in the README",
            patterns={"id": ("a valid id", _ID_FIX)},
        )
    return scenario, problems  # with problems, only for checking the names in it: never run


def _kind_problems(document: dict[str, Any], source: str) -> tuple[dict[str, Any], list[Problem]]:
    """Whether the document is a single-turn scenario or a dialogue, said per field with a fix (the
    model would only say it of the whole file); the document with what was wrong taken out, so the
    rest of it is still checked."""
    problems: list[Problem] = []
    document = dict(document)
    turns = document.get("turns")
    if "turns" in document and "input" in document:
        problems.append(Problem(source=source, field="input", found="input beside turns", fix=_KIND_FIX))
        document.pop("input")
    elif "turns" not in document and "input" not in document:
        problems.append(
            Problem(
                source=source,
                field="input",
                found="required field is missing",
                fix="add input: ... (or turns: for a dialogue)",
            )
        )
        document["input"] = "placeholder"
    if isinstance(turns, list) and not turns:
        problems.append(
            Problem(
                source=source, field="turns", found="a dialogue with no turn", fix="add turns: - user: ..."
            )
        )
        document["turns"] = [{"user": "placeholder"}]
    for key in ("policy", "goal"):
        if key in document and "turns" not in document:
            problems.append(
                Problem(
                    source=source,
                    field=key,
                    found=f"{key} on a single-turn scenario",
                    fix=f"remove {key}, or make this a dialogue: turns (- user: ...) in place of input",
                )
            )
            document.pop(key)
    return document, problems + _policy_problems(document, source)


def _policy_problems(document: dict[str, Any], source: str) -> list[Problem]:
    """A policy entry that names no slot guards nothing: said, and taken out of `document`."""
    policy = document.get("policy")
    if not isinstance(policy, dict):
        return []
    empty = [action for action, slots in policy.items() if isinstance(slots, list | tuple) and not slots]
    document["policy"] = {action: slots for action, slots in policy.items() if action not in empty}
    return [
        Problem(
            source=source,
            field=f"policy.{action}",
            found="a policy naming no slot",
            fix=f"list the slots {action} needs, e.g. {action}: [name, bookday], or remove it",
        )
        for action in empty
    ]


def _salvaged(document: dict[str, Any], exc: ValidationError) -> Scenario | None:
    """The scenario without the parts the format refused (an unknown key, a bad id stood in for by a
    placeholder), so that the names in the rest are checked too; None when even that is not a
    scenario (no target, say). Only for checking: a file with problems is never run."""
    pruned = copy.deepcopy(document)
    for error in exc.errors():
        keys = [part for part in takewhile(lambda p: isinstance(p, str), error["loc"])]
        _drop(pruned, [str(key) for key in keys])
    for key, value in _PLACEHOLDERS.items():
        pruned.setdefault(key, value)
    if "turns" not in pruned:
        pruned.setdefault("input", "placeholder")
    try:
        return Scenario.model_validate(pruned)
    except ValidationError:
        return None


def _drop(document: dict[str, Any], keys: Sequence[str]) -> None:
    """Remove the value at `keys` (a path of mapping keys) from `document`, if it is there."""
    node: object = document
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if keys and isinstance(node, dict):
        node.pop(keys[-1], None)


def _unknown_target_problems(
    unknown: _UnknownTargets, targets: Collection[str], config: Config | None
) -> list[Problem]:
    """One problem per unknown target, naming the files that name it (their folder and how many, when
    several) and where targets were looked up: the evaluator.toml used, or where none was found."""
    problems: list[Problem] = []
    for name, paths in unknown.items():
        where, fix = _where_targets_are(config)
        problems.append(
            Problem(
                source=str(paths[0]) if len(paths) == 1 else _files(paths),
                field="target",
                found=f'unknown target "{name}"' + did_you_mean(name, targets) + where,
                fix=fix,
            )
        )
    return problems


def _where_targets_are(config: Config | None) -> tuple[str, str]:
    """What to add to an unknown target's problem (where targets were looked up), and its fix."""
    if config is not None and config.not_found:
        return f": {config.not_found}, so no target is configured", NO_CONFIG_FIX
    used = f" in {config.source}" if config is not None else ""
    return (
        used,
        f"name a target from the [targets] table of {CONFIG_FILE}, or add it there (or, from Python, give "
        "it in run_suite's targets=)",
    )


def _files(paths: Sequence[Path]) -> str:
    """Several files as one source: their common folder and how many."""
    try:
        folder = os.path.commonpath([str(p.parent) for p in paths])
    except ValueError:  # relative and absolute paths mixed: no common folder
        return f"{paths[0]} and {len(paths) - 1} more files"
    return f"{folder or '.'} ({len(paths)} files)"


def _check_judge(
    scenario: Scenario, path: Path | str, prompts: PromptCatalog, default: str | None
) -> list[Problem]:
    """`judge:` names a prompt file, and a version or label of it, that exists."""
    spec = scenario.judge
    name = spec and (spec.prompt or default)
    if spec is None or not name:
        return []
    versions = prompts.get(name)
    if versions is None:
        if not spec.prompt:  # the configured prompt is missing: the configuration's problem, said there
            return []
        return [
            Problem(
                source=str(path),
                field="judge.prompt",
                found=f'unknown prompt "{name}"' + did_you_mean(name, prompts),
                fix="name a prompt folder below prompts/, e.g. evaluation/quality",
            )
        ]
    if spec.version is not None and spec.version not in versions:
        return [
            Problem(
                source=str(path),
                field="judge.version",
                found=f"no version {spec.version} of {name}",
                fix=f"use one of {', '.join(map(str, sorted(versions)))}, or add that version's file",
            )
        ]
    labels = {label for held in versions.values() for label in held}
    if spec.label is not None and spec.label not in labels:
        return [
            Problem(
                source=str(path),
                field="judge.label",
                found=f'no version of {name} has label "{spec.label}"' + did_you_mean(spec.label, labels),
                fix="add the label to a version's header (labels: [...]), or ask for a version number",
            )
        ]
    return []


def _check_catalog(scenario: Scenario, path: Path | str, catalog: TargetCatalog) -> list[Problem]:
    """The agent and tool names of `expected` (each turn's, for a dialogue) are the target's."""
    if scenario.turns is None:
        return _check_expected(scenario.expected, "expected", scenario.target, path, catalog)
    return [
        problem
        for index, turn in enumerate(scenario.turns)
        for problem in _check_expected(
            turn.expected, f"turns.{index}.expected", scenario.target, path, catalog
        )
    ]


def _check_expected(
    expected: Expected, field: str, target: str, path: Path | str, catalog: TargetCatalog
) -> list[Problem]:
    problems: list[Problem] = []
    trajectory_tools = expected.trajectory.tools if expected.trajectory else ()
    agent_tools = expected.agent_tools or {}
    checks: list[tuple[str, str, Collection[str], Iterable[str]]] = [
        (
            "agents",
            "agents",
            catalog.agents,
            (*expected.agents.include, *expected.agents.exclude, *expected.agents.allow),
        ),
        (
            "tools",
            "tools",
            catalog.tools,
            (
                *expected.tools.include,
                *expected.tools.exclude,
                *expected.tools.allow,
                *trajectory_tools,
            ),
        ),
        ("agents", "agent_tools", catalog.agents, agent_tools),
        (
            "tools",
            "agent_tools",
            catalog.tools,
            (t for tools in agent_tools.values() for t in tools),
        ),
    ]
    for kind, key, known, names in checks:
        for name in dict.fromkeys(names):
            if known and name not in known:
                problems.append(
                    Problem(
                        source=str(path),
                        field=f"{field}.{key}",
                        found=f'unknown {kind[:-1]} "{name}" for target "{target}"'
                        + did_you_mean(name, known),
                        fix=f"use a name the target declares in evaluator.toml ({', '.join(known)})",
                    )
                )
    return problems


def _duplicate_ids(loaded: Sequence[LoadedScenario]) -> list[Problem]:
    first: dict[str, Path] = {}
    problems: list[Problem] = []
    for item in loaded:
        sid = item.scenario.id
        if sid in first:
            problems.append(
                Problem(
                    source=str(item.path),
                    field="id",
                    found=f'"{sid}" is also the id of {first[sid]}',
                    fix="give every scenario a unique id",
                )
            )
        else:
            first[sid] = item.path
    return problems
