"""`evaluator sync`: send what waits in the local outbox to Langfuse (unsent traces, then scores)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from evaluator._time import Deadline, utc_now
from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, Command, ConfigOption, app, err, langfuse, out
from evaluator.config import load_config
from evaluator.errors import LangfuseUnavailableError
from evaluator.reports import notice, print_delivery
from evaluator.results import builtin_metrics
from evaluator.storage import Store, deliver, deliver_experiment_scores, deliver_spans

if TYPE_CHECKING:
    from evaluator.langfuse import LangfuseConnection

__all__ = ["sync"]


@app.command(cls=Command, short_help="Send what waits in the local outbox to Langfuse.")
def sync(
    retry_rejected: Annotated[
        bool, typer.Option("--retry-rejected", help="Post again the scores Langfuse rejected before.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Post scores even when Langfuse has not acknowledged their trace's spans.",
        ),
    ] = False,
    config_path: ConfigOption = None,
) -> None:
    """Send what waits in the local outbox for this Langfuse project: traces Langfuse has not got
    whole, then the scores (each once: ids are deterministic), each score only once Langfuse has its
    trace's spans, then the run-level scores of experiments that did not take them. Exit 0 only when
    Langfuse has acknowledged everything for this project."""
    config = load_config(config_path)
    store = Store(config.store_path)
    try:
        limits = config.settings.langfuse
        scores = spans = None
        deadline = Deadline(limits.delivery_deadline_seconds)
        with langfuse("sync", config) as connection:
            destination = connection.destination
            if retry_rejected:
                out.print(f"{store.retry_rejected(destination)} rejected scores are back in the outbox")
            if store.delivery_status(destination).complete:
                _check_keys(connection)  # wrong keys are wrong even when nothing waits for them
                out.print("Nothing waits for this Langfuse project.")
            else:
                try:
                    connection.project_id()
                    if not force:  # the spans first: a score goes once its trace is in Langfuse
                        spans = deliver_spans(
                            store, connection.spans, destination, deadline=deadline, now=utc_now
                        )
                    scores = deliver(
                        store,
                        connection.scores,
                        destination,
                        deadline=deadline,
                        batch_size=limits.score_batch_size,
                        force=force,
                        now=utc_now,
                    )
                    if force:  # the scores first: spans that keep failing must not use up their time
                        spans = deliver_spans(
                            store, connection.spans, destination, deadline=deadline, now=utc_now
                        )
                    posted, failed = deliver_experiment_scores(
                        store, connection.datasets, destination, deadline=deadline, now=utc_now
                    )
                    if posted:
                        runs = "1 run" if posted == 1 else f"{posted} runs"
                        out.print(f"Run-level scores posted to the experiments of {runs}", highlight=False)
                    if failed:
                        notice(err, "warning", f"run-level scores not posted: {failed}")
                    connection.scores.ensure_score_configs(builtin_metrics(config).definitions, deadline)
                except LangfuseUnavailableError as exc:
                    fix = (
                        "Fix: once Langfuse answers (check LANGFUSE_BASE_URL and the network), run "
                        "`evaluator sync` again; what was not sent stays in the outbox."
                    )
                    notice(err, "error", f"{exc}. {fix}")
        status = store.delivery_status(destination)
        elsewhere = sum(n for where, n in store.waiting_by_destination().items() if where != destination)
        print_delivery(out, status, scores=scores, spans=spans, elsewhere=elsewhere)
        unknown = (scores.unknown if scores else 0) + (spans.unknown if spans else 0)
        raise typer.Exit(EXIT_PASSED if status.complete and not unknown else EXIT_FAILED)
    finally:
        store.close()  # its connection, at once (Python 3.13 warns of one left open)


def _check_keys(connection: LangfuseConnection) -> None:
    """Raise LangfuseAuthError when Langfuse refuses the keys; one that cannot be reached is said, not
    an error (there is nothing to send it)."""
    try:
        connection.project_id()
    except LangfuseUnavailableError as exc:
        notice(err, "note", f"the keys were not checked: {exc}")
