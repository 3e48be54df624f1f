"""`evaluator datasets push`: a scenario suite as a Langfuse dataset (one item per scenario)."""

from __future__ import annotations

from typing import Annotated

import typer

from evaluator.cli._common import Command, ConfigOption, SuiteArgument, TagOption, app, langfuse, out
from evaluator.config import load_config
from evaluator.errors import ConfigError, LangfuseUnavailableError
from evaluator.prompts import PromptLibrary
from evaluator.run import select_scenarios

__all__ = ["datasets_push"]

_NAME_LIMIT = 200  # DatasetsConfig.name

datasets_app = typer.Typer(help="Scenario suites as Langfuse datasets.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command(
    "push", cls=Command, short_help="Push a suite to Langfuse as a dataset, an item per scenario."
)
def datasets_push(
    paths: SuiteArgument = None,
    tag: TagOption = None,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="Dataset name (default: [datasets] name).")
    ] = None,
    config_path: ConfigOption = None,
) -> None:
    """Create or update the dataset: one item per scenario (input; the expected block as expected output),
    keyed by scenario id, so pushing again creates nothing new. Connected runs then appear as its runs."""
    from evaluator.run import push_suite  # here: the Langfuse SDK loads with its command

    config = load_config(config_path)
    prompts = PromptLibrary.of_project(config.prompts_dir)
    scenarios = select_scenarios(config, paths or [], tag or [], None, prompts)
    dataset = config.settings.datasets.name if name is None else _dataset_name(name)
    with langfuse("datasets push", config) as connection:
        connection.project_id()
        # each request within LANGFUSE_TIMEOUT, as `prompts push`; no deadline for the whole push
        # ([langfuse] delivery_deadline_seconds bounds the sending after a run): a large suite takes
        # a request per item
        report = push_suite(connection.datasets, scenarios, dataset)
    if report.created_dataset:
        out.print(f'Created dataset "{dataset}"', highlight=False, markup=False)
    for action, ids in (("created", report.created), ("updated", report.updated)):
        for scenario_id in ids:
            out.print(f"{action:>9}  {scenario_id}", highlight=False, markup=False)
    not_pushed = f", {len(report.not_pushed)} not pushed" if report.error else ""
    out.print(
        f'Dataset "{dataset}": {len(report.created)} created, {len(report.updated)} updated, '
        f"{len(report.unchanged)} unchanged{not_pushed}",
        highlight=False,
        markup=False,
    )
    if report.error:
        raise LangfuseUnavailableError(
            f"{report.error}. Fix: once Langfuse takes it, run `evaluator datasets push` again: the items "
            "already there are left as they are, and the others are pushed",
            status=report.error.status,
        )


def _dataset_name(name: str) -> str:
    """--name, held to what `[datasets] name` (the dataset a run links to) takes: 1 to 200 characters."""
    if 1 <= len(name) <= _NAME_LIMIT:
        return name
    found = "is empty" if not name else f"has {len(name)} characters"
    raise ConfigError(
        f"datasets push --name {found}: a dataset name, as [datasets] name in evaluator.toml, has 1 to "
        f"{_NAME_LIMIT} characters. Fix: give the name runs are to link to (and set it as [datasets] name), "
        "or leave --name out to push to [datasets] name."
    )
