"""The Langfuse side of one run (`Session`): tracing, live delivery, prompts served by Langfuse, the
run as an experiment, and the steps after the run within one deadline; and the check, before the
run, that Langfuse takes the keys (`check_langfuse`)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from evaluator._time import Deadline, utc_now
from evaluator.config import Config
from evaluator.errors import EvaluatorError, LangfuseAuthError, LangfuseUnavailableError
from evaluator.langfuse import ExperimentLink, LangfuseConnection, Tracing, experiments_available
from evaluator.metrics import MetricSet
from evaluator.prompts import ManagedPrompts, Prompt, PromptLibrary, PromptSource
from evaluator.run.experiment import (
    ExperimentPlan,
    experiment_metadata,
    plan_experiment,
    report_experiment,
    served_versions,
)
from evaluator.run.judging import judge_prompt_names
from evaluator.run.pipeline import RunOptions
from evaluator.run.provenance import targets_of
from evaluator.run.selection import trace_rules
from evaluator.run.suite import ExperimentReport, Notice, SuiteRun
from evaluator.run.verify import verify_run
from evaluator.scenarios import LoadedScenario
from evaluator.storage import DeliveryReport, LiveDelivery, SpanDeliveryReport, Store, deliver, deliver_spans

_SLOW_SECONDS = 2.0  # sending after the run says what it waits for once it takes longer than this


class Session:
    """The Langfuse side of one run: tracing, live delivery, and the steps after the run."""

    def __init__(
        self,
        config: Config,
        store: Store,
        connection: LangfuseConnection | None,
        reachable: bool,
        on_notice: Notice,
        *,
        run_id: str,
        tracing: Tracing,
        metrics: MetricSet,
    ) -> None:
        self._config = config
        self._metrics = metrics
        self._store = store
        self._connection = connection
        self._reachable = reachable
        self._notice = on_notice
        self.tracing = tracing
        self.destination = connection.destination if connection is not None else None
        self.live: LiveDelivery | None = None
        self._configs: threading.Thread | None = None
        self._run_id = run_id
        self._configs_deadline = Deadline(config.settings.langfuse.delivery_deadline_seconds)
        self._experiment: ExperimentPlan | None = None

    def start(self) -> None:
        """Right before the run: acknowledge spans into the store, deliver scores while the run goes
        on, check the score configs beside it (`stop` undoes the first two if the run never finishes)."""
        connection, store = self._connection, self._store
        if connection is None:
            return
        destination = connection.destination
        # The spans Langfuse took, per trace: a trace with all its captured spans taken is in Langfuse.
        self.tracing.acknowledge_with(lambda delivered: store.ack_spans(destination, delivered))
        if self._reachable:
            # From now, not from the session's making: the experiment lookup before the run has its own
            # deadline, and must not use up this one before the check begins.
            self._configs_deadline = Deadline(self._config.settings.langfuse.delivery_deadline_seconds)
            self.live = LiveDelivery(
                store,
                connection.scores,
                destination,
                self._run_id,
                batch_size=self._config.settings.langfuse.score_batch_size,
                now=utc_now,
            )
            self._configs = threading.Thread(
                target=self._ensure_score_configs,
                args=(connection,),
                daemon=True,
                name="evaluator-score-configs",
            )
            self._configs.start()

    def stop(self) -> None:
        """The run raised: nothing more is delivered or acknowledged in the background."""
        if self.live is not None:
            self.live.finish(Deadline(0))
        self.tracing.acknowledge_with(None)

    def prompt_source(self, library: PromptLibrary) -> PromptSource:
        """Prompts from Langfuse (generations link to their versions); a local file, said once, when not."""
        if self._connection is None or not self._reachable:
            return library
        warned: set[str] = set()  # prompts said to come from the local file
        differs: set[str] = set()  # local files said to differ from Langfuse's version
        lock = threading.Lock()

        def on_fallback(ref: str, exc: Exception) -> None:
            with lock:
                if ref in warned:
                    return
                warned.add(ref)
            self._notice(
                "warning",
                f"{exc}. Using the local file {ref} instead: its generations are not linked to "
                f"a Langfuse prompt version{_fallback_fix(exc)}.",
            )

        def on_differs(local: Prompt, served: Prompt) -> None:
            with lock:
                if local.ref in differs:
                    return
                differs.add(local.ref)
            self._notice(
                "warning",
                f"{local.path or local.ref} differs from version {served.version} of {served.name} in "
                "Langfuse; the run uses Langfuse's. Fix: give the change a new version file and run "
                "`evaluator prompts push`.",
            )

        return ManagedPrompts(library, self._connection.prompts.fetch_prompt, on_fallback, on_differs)

    def _ensure_score_configs(self, connection: LangfuseConnection) -> None:
        """Best effort, beside the run: a missing score config only makes the UI plainer."""
        try:
            connection.scores.ensure_score_configs(self._metrics.definitions, self._configs_deadline)
        except EvaluatorError as exc:
            self._notice(
                "warning", f"score configs were not checked ({exc}); scores are posted all the same."
            )

    def finish(
        self,
        suite: SuiteRun,
        scenarios: Sequence[LoadedScenario],
        *,
        verify: bool,
        stop: threading.Event,
        stored: bool = True,
        not_stored: int = 0,
    ) -> SuiteRun:
        """Every Langfuse step after the run, within one deadline; then the optional verification.
        Not `stored` (the store could not take the run's end): only the steps that need no store (the
        batches in flight, the span flush, the score configs, the experiment, the verification, the
        SDK's last flush), and what waits in the outbox is said, not counted (`status` stays None);
        so is what cannot wait there: the scores of the `not_stored` results (the store failed during
        the run)."""
        limits = self._config.settings.langfuse
        connection = self._connection
        if connection is None:  # embedded: nothing to flush, and the tracing serves the next run too
            if verify:
                self._notice("warning", "--verify-langfuse needs Langfuse configured; nothing to verify.")
            return suite
        deadline = Deadline(limits.delivery_deadline_seconds)

        def still_sending() -> None:
            if deadline.remaining() == 0:  # nothing more is sent: there is nothing to wait for
                return
            self._notice(
                "note",
                f"still sending the run to Langfuse at {connection.settings.base_url}, for up to "
                f"{math.ceil(deadline.remaining())} s more ([langfuse] delivery_deadline_seconds); the "
                "traces (the scenarios' and the judges') and scores not sent by then stay in the local "
                "outbox for `evaluator sync`.",
            )

        spans, delivery, experiment, refused = None, None, None, False
        with _said_if_slow(_SLOW_SECONDS, still_sending):
            try:
                spans, delivery = self._send(
                    connection, suite.run.id, deadline, stored=stored, not_stored=not_stored
                )
                experiment = self._report_experiment(connection, suite, deadline)
            except LangfuseAuthError as exc:  # the keys worked when the run began: revoked since
                refused = True
                self._notice(
                    "error",
                    f"{exc} The run's results are stored; its traces and scores not yet in Langfuse stay "
                    "in the local outbox: once the keys are right, `evaluator sync` sends them.",
                )
        urls = {r.scenario_id: url for r in suite.results if (url := connection.trace_url(r.trace_id))}
        report = None
        if verify and not stop.is_set() and not refused:  # after a signal, no more work than the sending
            by_id = {s.scenario.id: s.scenario for s in scenarios}
            report = verify_run(
                connection.traces.within(Deadline(limits.verify_deadline_seconds)),
                by_id,
                suite.results,
                deadline_seconds=limits.verify_deadline_seconds,
                rules=trace_rules(self._config),
            )
        connection.end_of_run(deadline.remaining(), at_exit_seconds=limits.flush_timeout_seconds)
        # What the exporter sends from now on is not this run's to acknowledge (a span it could not
        # send in time is confirmed by `sync`, which sends it again); nor is the store kept alive.
        self.tracing.acknowledge_with(None)
        status = self._store.delivery_status(connection.destination, run_id=suite.run.id) if stored else None
        return replace(
            suite,
            connected=True,
            delivery=delivery,
            spans=spans,
            status=status,
            trace_urls=urls,
            verify=report,
            experiment=experiment,
        )

    def _send(
        self,
        connection: LangfuseConnection,
        run_id: str,
        deadline: Deadline,
        *,
        stored: bool,
        not_stored: int = 0,
    ) -> tuple[SpanDeliveryReport | None, DeliveryReport | None]:
        """The run's spans and scores into Langfuse, within `deadline` (score configs included). Not
        `stored`: the spans the SDK holds only; the outbox is left for `sync` (None, None)."""
        live_ended = self.live.finish(deadline) if self.live is not None else True
        if not stored:  # what the exporter sends now cannot be acknowledged there: `sync` sends it again
            self.tracing.acknowledge_with(None)
        self._flush(deadline)
        if stored:
            spans, delivery = self._sweep(connection, run_id, deadline, live_ended=live_ended)
        else:
            spans, delivery = None, None
            self._notice(
                "warning",
                f"nothing was sent to Langfuse from the local outbox after the run: the store "
                f"{self._store.path} could not take the run's end, and what Langfuse takes is marked "
                "there. The run's scores not sent while it ran, and its traces Langfuse has not "
                "acknowledged whole, wait in that outbox; once the store can be written, `evaluator "
                "sync` sends them." + _unqueued(not_stored),
            )
        if self._configs is not None:
            self._configs_deadline.end_by(deadline)
            self._configs.join(deadline.remaining())
        return spans, delivery

    def _flush(self, deadline: Deadline) -> None:
        """The spans the SDK still holds, out to Langfuse (within the flush timeout and `deadline`)."""
        limits = self._config.settings.langfuse
        if not self.tracing.flush(deadline.cap(limits.flush_timeout_seconds)):
            self._notice(
                "warning",
                f"spans were still being sent to Langfuse after {limits.flush_timeout_seconds:g} s; some "
                "traces may be incomplete there.",
            )

    def _sweep(
        self, connection: LangfuseConnection, run_id: str, deadline: Deadline, *, live_ended: bool
    ) -> tuple[SpanDeliveryReport, DeliveryReport | None]:
        """From the outbox: the traces Langfuse has not got whole, then the scores still waiting."""
        destination = connection.destination
        spans = deliver_spans(
            self._store, connection.spans, destination, deadline=deadline, run_id=run_id, now=utc_now
        )
        delivery = (
            deliver(
                self._store,
                connection.scores,
                destination,
                deadline=deadline,
                run_id=run_id,
                batch_size=self._config.settings.langfuse.score_batch_size,
                now=utc_now,
            )
            if live_ended
            else None  # the live posts still in flight own this run's scores: no second request
        )
        return spans, delivery

    def plan_experiment(
        self,
        scenarios: Sequence[LoadedScenario],
        options: RunOptions,
        git: Mapping[str, Any] | None,
        library: PromptLibrary,
    ) -> Mapping[str, ExperimentLink]:
        """Before the run, within `read_deadline_seconds`: the experiment the run's traces join on the
        configured dataset, and each scenario's link. No links when not connected, not reachable, not
        asked for, or the dataset does not exist; a failed lookup warns, and the run goes on unlinked."""
        datasets, connection = self._config.settings.datasets, self._connection
        if connection is None or not self._reachable or not datasets.link_runs or not scenarios:
            return {}
        if not experiments_available():
            self._notice(
                "warning",
                f"the run is not linked to dataset {datasets.name!r} as an experiment: the installed "
                "Langfuse SDK no longer offers the experiment span attributes the evaluator sets "
                "(langfuse._client.propagation._propagate_attributes). The run goes on unlinked.",
            )
            return {}
        judges = judge_prompt_names(self._metrics, scenarios)
        deadline = Deadline(self._config.settings.langfuse.read_deadline_seconds)

        def metadata() -> Mapping[str, Any]:  # once the dataset is found: each prompt is a request
            served = served_versions(
                library,
                connection.prompts.fetch_prompt,
                pins=options.prompt_pins,
                skip=judges,
                deadline=deadline,
            )
            return experiment_metadata(
                run_id=options.run_id,
                pins=options.prompt_pins,
                served=served,
                judge_prompts=judges,
                git=git,
                targets=targets_of(scenarios),
            )

        try:
            plan = plan_experiment(
                connection.datasets,
                scenarios,
                dataset=datasets.name,
                project_id=connection.project_id(),
                run_name=options.run_name or options.run_id,
                run_id=options.run_id,
                metadata=metadata,
                deadline=deadline,
            )
        except EvaluatorError as exc:
            self._notice(
                "warning",
                f"the run is not linked to dataset {datasets.name!r} as an experiment ({exc}). "
                "The run goes on unlinked.",
            )
            return {}
        if plan is None:
            return {}
        self._experiment = replace(plan, url=connection.experiment_url(plan.experiment.id))
        return plan.links

    def _report_experiment(
        self, connection: LangfuseConnection, suite: SuiteRun, deadline: Deadline
    ) -> ExperimentReport | None:
        """The run-level scores of the run's experiment, within the deadline (when the run has one)."""
        if self._experiment is None or not suite.results:
            return None
        report = report_experiment(
            connection.datasets,
            self._experiment,
            suite.run,
            suite.results,
            deadline,
            outbox=(self._store, connection.destination),
        )
        if report.error:
            self._notice(
                "warning",
                f"the run-level scores of experiment {report.run_name!r} were not posted: {report.error}.",
            )
        return report


def _unqueued(count: int) -> str:
    """What cannot wait in the outbox: the scores of the results the store does not have."""
    if not count:
        return ""
    return (
        f" The scores of the {count} results the store does not have are not in that outbox, nor sent: "
        "nothing can send them later (their traces went to Langfuse as far as the SDK sent them, "
        "without scores); run those scenarios again once the store can be written."
    )


def check_langfuse(connection: LangfuseConnection | None, on_notice: Notice) -> bool:
    """Wrong keys stop the run before it starts; an unreachable Langfuse only warns."""
    if connection is None:
        return False
    try:
        connection.project_id()
    except LangfuseUnavailableError as exc:
        on_notice(
            "warning",
            f"{exc}. The run goes on; results are stored locally, and its traces and scores are sent "
            "after the run if Langfuse answers then, else wait in the outbox for `evaluator sync`; prompts "
            "come from the local files (their generations are not linked to Langfuse prompt versions).",
        )
        return False
    return True


@contextmanager
def _said_if_slow(seconds: float, say: Callable[[], None]) -> Iterator[None]:
    """`say()` once, from a timer thread, if the block is still running after `seconds`."""
    timer = threading.Timer(seconds, say)
    timer.daemon = True
    timer.name = "evaluator-slow-notice"
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _fallback_fix(exc: Exception) -> str:
    """What gets Langfuse to serve a prompt next time: pushing it only when Langfuse said it has no such
    version (404); a served version the evaluator cannot compile says its own fix (PromptError)."""
    if not isinstance(exc, LangfuseUnavailableError):
        return ""
    if exc.status == 404:
        return " (run `evaluator prompts push`)"
    if exc.status in (401, 403):
        return " (check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY: Langfuse refused them)"
    return " (Langfuse did not serve it: check that Langfuse is up, then run again)"
