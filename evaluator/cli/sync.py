"""`evaluator sync`: send what waits in the local outbox (scores, kept span batches) to Langfuse."""

from __future__ import annotations

from typing import Annotated

import typer

from evaluator._time import Deadline, utc_now
from evaluator.cli._common import EXIT_FAILED, EXIT_PASSED, ConfigOption, app, err, langfuse, out
from evaluator.config import load_config
from evaluator.errors import LangfuseUnavailableError
from evaluator.reports import notice, print_delivery
from evaluator.results import DEFINITIONS
from evaluator.storage import Store, deliver, deliver_spans


@app.command()
def sync(
    retry_rejected: Annotated[
        bool, typer.Option("--retry-rejected", help="Post again the scores Langfuse rejected before.")
    ] = False,
    config_path: ConfigOption = None,
) -> None:
    """Post every score still in the local outbox to Langfuse (each once: ids are deterministic)."""
    config = load_config(config_path)
    store = Store(config.store_path)
    limits = config.settings.langfuse
    report = None
    spans = None
    deadline = Deadline(limits.delivery_deadline_seconds)
    with langfuse("sync", config) as connection:
        destination = connection.destination
        if retry_rejected:
            out.print(f"{store.retry_rejected(destination)} rejected scores are back in the outbox")
        if store.unsent_scores(destination) or store.unsent_span_batches(destination):
            try:
                connection.project_id()
                connection.scores.ensure_score_configs(DEFINITIONS, deadline)
                spans = deliver_spans(store, connection.spans, destination, deadline=deadline, now=utc_now)
                report = deliver(
                    store,
                    connection.scores,
                    destination,
                    deadline=deadline,
                    batch_size=limits.score_batch_size,
                    now=utc_now,
                )
            except LangfuseUnavailableError as exc:
                notice(err, "error", str(exc))
        else:
            out.print("Nothing to send to this Langfuse project.")
    waiting = store.waiting_by_destination()
    here = waiting.pop(destination, 0)
    print_delivery(out, report, waiting=here, elsewhere=sum(waiting.values()), spans=spans)
    rejected = store.count_scores(rejected_only=True)
    if rejected:
        out.print(
            f"{rejected} scores were rejected by Langfuse (see above or earlier runs); "
            "`evaluator sync --retry-rejected` posts them again."
        )
    done = here == 0 and (report is None or report.complete) and not store.unsent_span_batches(destination)
    raise typer.Exit(EXIT_PASSED if done else EXIT_FAILED)
