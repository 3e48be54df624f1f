"""Which scenarios a run runs, and the configuration as the run's parts take it: the prompt pins
(`--prompt NAME=VERSION`), the scenarios chosen by path, tag and target (files or `Scenario` objects,
checked alike), what each configured target declares (`catalogs`), how its traces are read
(`trace_rules`, `rules_for`), its dialogues' settings (`dialogue_settings`: `DialogueSettings`) and its
callable (`load_targets`). Bad input raises an `EvaluatorError` before anything runs."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args

from evaluator.config import CONFIG_FILE, NO_CONFIG_FIX, Config, StateKey, TargetConfig
from evaluator.errors import ConfigError, Problem, PromptError, ScenarioError, did_you_mean
from evaluator.prompts import PromptLibrary
from evaluator.run.target import Target, load_target
from evaluator.scenarios import (
    LoadedScenario,
    Scenario,
    TargetCatalog,
    check_given,
    load_scenarios,
    with_tags,
)
from evaluator.trace import TraceRules

__all__ = [
    "DialogueSettings",
    "catalogs",
    "entity_problems",
    "judge_prompt_problems",
    "load_targets",
    "parse_pins",
    "pinned_and_selected",
    "rules_for",
    "select_scenarios",
    "trace_rules",
]


def pinned_and_selected(
    cfg: Config,
    library: PromptLibrary,
    *,
    prompts: Sequence[str],
    scenarios: Sequence[Scenario] | None,
    paths: Sequence[str],
    tags: Sequence[str],
    target: str | None,
    given_targets: Collection[str],
) -> tuple[dict[str, int], list[LoadedScenario]]:
    """The prompt pins and the scenarios to run; what is wrong with either, reported together."""
    pins, problems = parse_pins(prompts, library)
    try:
        if scenarios is not None:
            selected = _given(cfg, scenarios, library, tags=tags, target=target, given_targets=given_targets)
        else:
            selected = select_scenarios(cfg, paths, tags, target, library, given_targets=given_targets)
    except ScenarioError as exc:
        if problems:  # still a ScenarioError, for code that catches one
            raise ScenarioError([*problems, *exc.problems]) from None
        raise
    if problems:
        raise PromptError(problems)
    return pins, selected


def parse_pins(values: Sequence[str], library: PromptLibrary) -> tuple[dict[str, int], list[Problem]]:
    """`NAME=VERSION` pins, each checked against the prompt files; and the problems of those that
    are not (the pin, what is wrong, and the valid names or versions), or that pin a prompt another
    pin pins to another version (which would win is no choice to make silently)."""
    pins: dict[str, int] = {}
    problems: list[Problem] = []
    for value in values:
        name, sep, version = value.partition("=")
        if not sep or not name or not version.isdigit():
            problems.append(
                Problem(
                    source=f"--prompt {value}",
                    field="",
                    found="expected NAME=VERSION",
                    fix="e.g. --prompt agents/research=2",
                )
            )
            continue
        try:
            library.get(name, version=int(version))
        except PromptError as exc:  # about the prompt files: said here about the pin
            problems += [replace(p, source=f"--prompt {value}", field="") for p in exc.problems]
            continue
        if pins.get(name, int(version)) != int(version):
            problems.append(
                Problem(
                    source=f"--prompt {value}",
                    field="",
                    found=f"{name} is pinned to version {pins[name]} too",
                    fix=f"pin {name} once",
                )
            )
            continue
        pins[name] = int(version)
    return pins, problems


def select_scenarios(
    config: Config,
    paths: Sequence[str],
    tags: Sequence[str],
    target: str | None,
    prompts: PromptLibrary,
    *,
    given_targets: Collection[str] = (),
) -> list[LoadedScenario]:
    """The scenarios to run (all of them checked first), optionally all against one target.
    `given_targets`: targets given as callables (run_suite's `targets`), known beside the configured
    ones (they declare no agents or tools to check names against)."""
    if not paths:
        paths = [str(_default_suite(config))]
    loaded = load_scenarios(
        paths,
        targets=None if target else _known_targets(config, given_targets),
        prompts=prompts.catalog(),
        judge_prompt=config.settings.judge.quality_prompt,
        config=config,
    )
    return _chosen(loaded, tags, target, where=", ".join(paths))


def _default_suite(config: Config) -> Path:
    """The folder a run without PATH takes, `scenarios/` beside the configuration (or in the working
    folder, without one); ConfigError when there is none, saying where it was looked for."""
    folder = config.base_dir / "scenarios"
    if folder.is_dir():
        return folder
    why, fix = (f" ({config.not_found})", f"{NO_CONFIG_FIX}, or ") if config.not_found else ("", "")
    raise ConfigError(
        f"no PATH was given and there is no {folder} to run by default{why}. "
        f"Fix: {fix}give the scenario files or folders to run: evaluator run PATH..."
    )


def _chosen(
    loaded: list[LoadedScenario], tags: Sequence[str], target: str | None, *, where: str
) -> list[LoadedScenario]:
    """The scenarios with one of `tags` (all without tags), all run against `target` when given."""
    loaded = with_tags(loaded, tags)
    if not loaded:
        raise ConfigError(
            f"no scenarios match --tag {', '.join(tags)} in {where}. "
            "Fix: check the tag names (they are case-sensitive)."
        )
    if target:
        loaded = [
            LoadedScenario(scenario=s.scenario.model_copy(update={"target": target}), path=s.path)
            for s in loaded
        ]
    return loaded


def _known_targets(config: Config, given_targets: Collection[str]) -> dict[str, TargetCatalog]:
    """The configured targets, and the ones given as callables (which declare no agents or tools)."""
    return {**{name: TargetCatalog() for name in given_targets}, **catalogs(config)}


def _given(
    config: Config,
    scenarios: Sequence[Scenario],
    prompts: PromptLibrary,
    *,
    tags: Sequence[str],
    target: str | None,
    given_targets: Collection[str],
) -> list[LoadedScenario]:
    """Scenarios built in Python, checked as files are, then chosen by tag and given a target as
    files are."""
    if not scenarios:
        raise ConfigError(
            "no scenarios were given. Fix: pass scenarios=[Scenario(...), ...], or leave scenarios unset "
            "and give paths."
        )
    loaded = check_given(
        scenarios,
        targets=None if target else _known_targets(config, given_targets),
        prompts=prompts.catalog(),
        judge_prompt=config.settings.judge.quality_prompt,
        config=config,
    )
    return _chosen(loaded, tags, target, where="the given scenarios")


def catalogs(config: Config) -> dict[str, TargetCatalog]:
    """What each configured target declares, for checking scenario names."""
    return {
        name: TargetCatalog(agents=t.agents, tools=t.tools) for name, t in config.settings.targets.items()
    }


def trace_rules(config: Config) -> dict[str, TraceRules]:
    """How each configured target's traces are read (its convention and what they cannot show)."""
    return {name: rules_for(target) for name, target in config.settings.targets.items()}


def rules_for(target: TargetConfig, convention: str | None = None) -> TraceRules:
    """A target's trace rules; `convention` (validate --convention) overrides the configured one."""
    return TraceRules(
        convention=convention or target.convention,
        entry_agents=target.entry_agents,
        agent_observations=target.agent_observations,
        agent_pattern=target.agent_pattern,
        handoff_patterns=target.handoff_patterns,
        state_keys=state_keys(target),
    )


# Here, not in run.dialogue: every run takes its targets' settings, and one without dialogues does not
# import that module.
@dataclass(frozen=True, kw_only=True)
class DialogueSettings:
    """What a target's configuration says about its dialogues: the policy (a scenario's own replaces
    it), the metadata names of its state keys (canonical key -> name), its entity catalog's names."""

    policy: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    state_keys: Mapping[str, str] = field(default_factory=dict)
    entities: tuple[str, ...] = ()


def dialogue_settings(config: Config, names: Collection[str] | None = None) -> dict[str, DialogueSettings]:
    """What each configured target (of `names`: those a run uses; None: all) says about its dialogues:
    policy, state key names, entity names. A target the run does not use has its entity file left
    unread, so a catalog only it names cannot stop the run."""
    return {
        name: DialogueSettings(
            policy=target.policy,
            state_keys={str(key): value for key, value in target.state_keys.items()},
            entities=_entities(config, name, target.entities) if target.entities is not None else (),
        )
        for name, target in config.settings.targets.items()
        if names is None or name in names
    }


def entity_problems(config: Config, names: Collection[str] | None = None) -> list[Problem]:
    """What is wrong with the `entities` files of the configured targets (of `names`: None, all):
    `lint` checks every target's, a run those of the targets it uses, before anything runs."""
    problems: list[Problem] = []
    for name, target in config.settings.targets.items():
        if target.entities is not None and (names is None or name in names):
            problem = _read_entities(config, name, target.entities)[1]
            problems += [problem] if problem else []
    return problems


_JUDGE_PROMPTS = ("quality_prompt", "correctness_prompt", "agent_prompt")  # [judge] keys naming a prompt


def judge_prompt_problems(config: Config, library: PromptLibrary) -> list[Problem]:
    """The `[judge]` prompt names (quality_prompt, correctness_prompt, agent_prompt) that name no prompt
    in `library` (the project's folder and the package's judge prompts): `lint` checks them, where a run
    finds out only once a judge endpoint is set (exit 2 then)."""
    names = library.names()
    problems: list[Problem] = []
    for key in _JUDGE_PROMPTS:
        name = getattr(config.settings.judge, key)
        if name not in names:
            default = type(config.settings.judge).model_fields[key].default
            problems.append(
                Problem(
                    source=str(config.source or CONFIG_FILE),
                    field=f"[judge] {key}",
                    found=f'"{name}" is no prompt in {config.prompts_dir} nor among the package\'s judge '
                    f"prompts{did_you_mean(name, names)}",
                    fix=f"add {config.prompts_dir / name}/v1.prompt, or correct the name (default: "
                    f"{default})",
                )
            )
    return problems


def _entities(config: Config, name: str, relative: Path) -> tuple[str, ...]:
    """The names of a target's entity catalog (ConfigError naming the configuration, the target's
    field and the fix)."""
    names, problem = _read_entities(config, name, relative)
    if problem:
        raise ConfigError(str(problem))
    return names


def _read_entities(config: Config, name: str, relative: Path) -> tuple[tuple[str, ...], Problem | None]:
    """(names, None) of a target's entity catalog, a JSON list of names or of objects with a `name`;
    ((), the problem) when it cannot be read or is no such list."""
    path = config.path(relative)
    fix = 'give a JSON list of names, or of objects with a "name" (e.g. the bundled database)'
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        found = f"{path} does not exist"
        fix = f"write it, or correct the path (relative to {config.base_dir}), or remove entities"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        found = f"cannot read {path} ({exc})"
    else:
        items = document if isinstance(document, list) else None
        names = [i.get("name") if isinstance(i, dict) else i for i in items or ()]
        if items is not None and all(isinstance(n, str) and n.strip() for n in names):
            return tuple(str(n) for n in names), None
        found = f"{path} is not a list of names"
    field = f"[targets.{name}] entities"
    return (), Problem(source=str(config.source or CONFIG_FILE), field=field, found=found, fix=fix)


def state_keys(target: TargetConfig) -> tuple[str, ...]:
    """The metadata keys the target reports a dialogue turn's state under, in the order of
    STATE_KEYS (intent, domain, acts, slots, action), each renamed by its `state_keys`."""
    return tuple(target.state_keys.get(key, key) for key in get_args(StateKey))


def load_targets(config: Config, names: set[str]) -> dict[str, Target]:
    configured = config.settings.targets
    targets: dict[str, Target] = {}
    for name in sorted(names):
        if name not in configured:
            raise ConfigError(
                f'unknown target "{name}"{did_you_mean(name, configured)}: {config.not_found}. '
                f"Fix: {NO_CONFIG_FIX}."
                if config.not_found
                else f'unknown target "{name}"{did_you_mean(name, configured)}. '
                f"Fix: add [targets.{name}] to {config.source}."
            )
        targets[name] = load_target(configured[name].entry, base_dir=config.base_dir, name=name)
    return targets
