"""`evaluator lint`: check scenario files without running them."""

from __future__ import annotations

from typing import Annotated

import typer

from evaluator.cli._common import Command, ConfigOption, app, out
from evaluator.config import load_config
from evaluator.errors import InputError
from evaluator.prompts import PromptLibrary
from evaluator.reports import threshold_problems
from evaluator.results import builtin_metrics, tool_schema_problems
from evaluator.run import catalogs, entity_problems, judge_prompt_problems
from evaluator.scenarios import load_scenarios

__all__ = ["lint"]


@app.command(cls=Command, short_help="Check scenario files without running them.")
def lint(
    paths: Annotated[list[str], typer.Argument(metavar="PATH", help="Scenario files, folders or globs.")],
    config_path: ConfigOption = None,
) -> None:
    """Check scenario files: format, unknown keys, targets, agent and tool names, judge prompts (name,
    version, label), unique ids; and the configuration's tool_schemas files (per-agent analysis), entities
    files (dialogues), [judge] prompt names and [compare.thresholds] figure names."""
    config = load_config(config_path)
    prompts = PromptLibrary.of_project(config.prompts_dir)
    files = [
        *tool_schema_problems(config),
        *entity_problems(config),
        *config.prompts_dir_problems(),
        *judge_prompt_problems(config, prompts),
        *threshold_problems(config, builtin_metrics(config)),
    ]
    try:
        loaded = load_scenarios(
            paths,
            targets=catalogs(config),
            prompts=prompts.catalog(),
            judge_prompt=config.settings.judge.quality_prompt,
            config=config,
            target_required=False,  # a scenario only for `validate` names no target (README)
        )
    except InputError as exc:
        if not files:
            raise
        raise InputError([*files, *exc.problems]) from None
    if files:
        raise InputError(files)
    untargeted = sum(1 for item in loaded if not item.scenario.target)
    only = f" ({untargeted} with no target: for `validate` only, `run` needs one)" if untargeted else ""
    out.print(f"{len(loaded)} scenario files OK{only}")
