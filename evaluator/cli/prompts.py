"""`evaluator prompts push`: local prompt files into Langfuse prompt management."""

from __future__ import annotations

import typer

from evaluator.cli._common import Command, ConfigOption, app, langfuse, out
from evaluator.config import load_config
from evaluator.errors import Problem, PromptError
from evaluator.prompts import PromptLibrary, push_prompts

__all__ = ["prompts_push"]

prompts_app = typer.Typer(help="Prompt management: local prompt files and Langfuse.", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("push", cls=Command, short_help="Push the prompt files to Langfuse prompt management.")
def prompts_push(config_path: ConfigOption = None) -> None:
    """Push every prompt file under prompts/ to Langfuse, and the package's judge prompts that folder
    does not replace: new versions in order, labels as the files say; content already there is not
    pushed again."""
    config = load_config(config_path)
    library = PromptLibrary.of_project(config.prompts_dir)
    # No evaluator.toml here, or a [prompts] dir without prompt files: the wrong folder. Say so, rather
    # than "0 created" or the package's judge prompts alone.
    wrong = config.not_found or "dir" in config.settings.prompts.model_fields_set
    if wrong and not PromptLibrary(config.prompts_dir).names():
        where = f" ({config.not_found})" if config.not_found else ""
        raise PromptError(
            [
                Problem(
                    source=str(config.prompts_dir),
                    field="",
                    found=f"no prompt files (*.prompt) to push{where}",
                    fix="run the command in your project's folder, pass --config, or set [prompts] dir",
                )
            ]
        )
    with langfuse("prompts push", config) as connection:
        connection.project_id()
        outcomes, problems = push_prompts(library, connection.prompts)
    for outcome in outcomes:
        labels = f" (labels: {', '.join(outcome.labels)})" if outcome.labels else ""
        out.print(f"{outcome.action:>9}  {outcome.ref}{labels}", highlight=False, markup=False)
    created = sum(o.action == "created" for o in outcomes)
    out.print(f"{created} created, {len(outcomes) - created} already in Langfuse")
    if problems:
        raise PromptError(problems)
