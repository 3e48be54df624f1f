"""`run_suite()`: the one way a suite runs, whoever asks (the CLI, scripts/run_scenarios.py, a notebook).

    from evaluator.run import run_suite
    suite = run_suite(["scenarios/research"], prompts=["agents/research=2"])
    suite.passed, suite.results[0].to_json()

It loads the configuration, the scenarios and their targets (bad input raises an `EvaluatorError`
before anything runs), connects to Langfuse when the environment has keys (and looks up the dataset
whose experiment the run's traces join: run/experiment.py), runs the pipeline, stores every result,
writes `output` (before the steps after the run), then spends at most one deadline
(`[langfuse] delivery_deadline_seconds`) on every Langfuse step after the run: the batches still in
flight, the span flush, re-sending traces Langfuse has not got whole, the score sweep, the score
configs, the experiment's run-level scores and the SDK's shutdown. Progress and warnings go to the
callbacks; nothing is printed.
"""

from __future__ import annotations

import json
import math
import os
import signal
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evaluator._time import Deadline, utc_now
from evaluator.config import NO_CONFIG_FIX, Config, TargetConfig, load_config
from evaluator.errors import (
    ConfigError,
    EvaluatorError,
    LangfuseUnavailableError,
    Problem,
    PromptError,
    ScenarioError,
    did_you_mean,
)
from evaluator.judge import JudgeModel
from evaluator.langfuse import (
    ExperimentLink,
    JudgeTracing,
    LangfuseConnection,
    Tracing,
    experiments_available,
)
from evaluator.prompts import ManagedPrompts, Prompt, PromptLibrary, PromptSource
from evaluator.results import DEFINITIONS, RUN_KEYWORDS, RunInfo, ScenarioResult, run_to_json
from evaluator.run._signals import StopSignals
from evaluator.run.experiment import (
    ExperimentPlan,
    ExperimentReport,
    experiment_metadata,
    plan_experiment,
    report_experiment,
    served_versions,
)
from evaluator.run.judging import JudgePlan, judge_prompt_names
from evaluator.run.pipeline import Pipeline, RunOptions, new_run_id
from evaluator.run.provenance import git_state, model_names, targets_of
from evaluator.run.target import Target, load_target
from evaluator.run.verify import VerifyReport, verify_run
from evaluator.scenarios import (
    LoadedScenario,
    Scenario,
    TargetCatalog,
    check_given,
    load_scenarios,
    with_tags,
)
from evaluator.storage import (
    DeliveryReport,
    DeliveryStatus,
    LiveDelivery,
    SpanDeliveryReport,
    Store,
    deliver,
    deliver_spans,
)
from evaluator.trace import TraceRules

Notice = Callable[[str, str], None]  # (kind: "warning" | "error" | "note", message)
_SLOW_SECONDS = 2.0  # sending after the run says what it waits for once it takes longer than this


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """What a run of a suite did: the run, its results (in the scenarios' order) and, with Langfuse,
    what was delivered and verified."""

    run: RunInfo
    results: list[ScenarioResult]
    expected: int  # scenarios selected
    store_path: Path
    output: Path | None = None
    connected: bool = False
    delivery: DeliveryReport | None = None
    spans: SpanDeliveryReport | None = None
    status: DeliveryStatus | None = None  # what Langfuse acknowledged of this run, what waits
    trace_urls: dict[str, str] = field(default_factory=dict)
    verify: VerifyReport | None = None
    experiment: ExperimentReport | None = None  # the run as a Langfuse experiment, when linked

    @property
    def waiting(self) -> int:
        """Scores of this run still in the outbox."""
        return self.status.scores_waiting if self.status else 0

    @property
    def delivered(self) -> bool:
        """Langfuse acknowledged every span and score of this run (True when not connected)."""
        if not self.connected or self.status is None:
            return not self.connected
        unknown = (self.delivery.unknown if self.delivery else 0) + (self.spans.unknown if self.spans else 0)
        return self.status.complete and not unknown

    @property
    def passed(self) -> bool:
        """Every scenario ran and passed, and (when asked) Langfuse gives the same verdicts."""
        complete = len(self.results) == self.expected and not self.run.interrupted
        verified = self.verify is None or self.verify.ok
        return complete and verified and all(r.status == "passed" for r in self.results)


def run_suite(
    paths: Sequence[str] = (),
    *,
    tags: Sequence[str] = (),
    target: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    no_judge: bool = False,
    judge_concurrency: int | None = None,
    no_cache: bool = False,
    judge_model: JudgeModel | None = None,
    prompts: Sequence[str] = (),
    output: Path | None = None,
    run_name: str | None = None,
    verify_langfuse: bool = False,
    config: Config | Path | None = None,
    scenarios: Sequence[Scenario] | None = None,
    targets: Mapping[str, Target] | None = None,
    on_result: Callable[[ScenarioResult], None] = lambda _: None,
    on_start: Callable[[int], None] = lambda _: None,
    on_notice: Notice = lambda kind, message: None,
) -> SuiteRun:
    """Run scenarios (files, folders, globs; default `scenarios/` beside the configuration) against
    their targets. `prompts` pins versions as "NAME=VERSION". `on_start` gets the number of scenarios,
    `on_result` each result once it is stored. The judges run when an endpoint is configured (or a
    `judge_model` is given, e.g. a `judge.FakeJudgeModel` in tests) and `no_judge` is not set.

    From Python, `scenarios` may be given as `Scenario` objects instead of files, and `targets` as
    callables by name instead of the configuration's `module:callable` entries."""
    cfg = config if isinstance(config, Config) else load_config(config)
    library = PromptLibrary(cfg.prompts_dir)
    _check_arguments(targets, run_name)
    pins, selected = _pinned_and_selected(
        cfg,
        library,
        prompts=prompts,
        scenarios=scenarios,
        paths=paths,
        tags=tags,
        target=target,
        given_targets=set(targets or {}),
    )
    _check_output(output)
    store = Store(cfg.store_path)
    connection = LangfuseConnection.from_env()
    tracing = connection.tracing if connection is not None else Tracing.embedded()
    with tracing.process_default():  # targets' import-time clients record into the capture
        callables = {
            **load_targets(cfg, {s.scenario.target for s in selected} - set(targets or {})),
            **(targets or {}),
        }
    reachable = _check_langfuse(connection, on_notice)
    options = RunOptions(
        concurrency=concurrency if concurrency is not None else cfg.settings.run.concurrency,
        timeout_seconds=timeout if timeout is not None else cfg.settings.run.timeout_seconds,
        prompt_pins=pins,
        run_id=new_run_id(),
        run_name=run_name or "",
        judge_concurrency=judge_concurrency or cfg.settings.judge.concurrency,
    )
    session = _Session(cfg, store, connection, reachable, on_notice, run_id=options.run_id, tracing=tracing)
    git = git_state(cfg.base_dir)
    options = replace(options, experiment_links=session.plan_experiment(selected, options, git, library))
    plan = JudgePlan(cfg, no_judge=no_judge, model=judge_model)
    prompt_source = session.prompt_source(library)  # one for the judges and the targets: warned once
    judges = plan.judges(
        [s.scenario for s in selected],
        library=library,
        prompts=prompt_source,
        tracer=JudgeTracing(session.tracing, prices=plan.prices),
        pins=pins,
        cache=store,
        use_cache=not no_cache,
        notice=on_notice,
    )
    options = replace(options, judge_status=plan.unjudged)
    pipeline_llm = cfg.llm_endpoint() if cfg.settings.llm.targets else None
    pipeline = Pipeline(
        tracer=session.tracing,
        targets=callables,
        prompts=prompt_source,
        recorder=store,
        destination=session.destination,
        llm=pipeline_llm,
        trace_rules=trace_rules(cfg),
        judges=judges,
    )
    on_start(len(selected))
    over = threading.Event()  # every scenario is stored: a signal now stops nothing more

    said = _stopping(cfg, connected=connection is not None, over=over, on_notice=on_notice)
    last_words = _exiting_at_once(cfg, connected=connection is not None)
    with StopSignals(on_first=said, last_words=last_words) as stop:  # a second signal exits at once
        session.start()
        try:
            with tracing.process_default():
                run, results = pipeline.run(
                    selected,
                    options,
                    on_result=on_result,
                    on_start=store.start_run,
                    stop=stop.requested,
                    all_stored=over,
                )
            over.set()
        except BaseException:
            session.stop()
            raise
        finally:
            plan.close()
        if run.interrupted and stop.received is not None:
            run = replace(run, signal=stop.received.name)
        run = replace(
            run,
            targets=targets_of(selected),
            git=git,
            models=model_names(cfg, llm_used=pipeline_llm is not None),
        )
        documents = [r.to_json() for r in results]
        store.finish_run(run, results, documents)
        if output is not None:  # written before the steps after the run
            _write_output(output, run_to_json(run, results, documents), on_notice)
        suite = SuiteRun(
            run=run, results=results, expected=len(selected), store_path=cfg.store_path, output=output
        )
        verify = verify_langfuse and not run.interrupted
        suite = session.finish(suite, selected, verify=verify, stop=stop.requested)
        if stop.received is not None and suite.run.signal is None:  # it came once the run was over:
            suite = replace(suite, run=replace(suite.run, signal=stop.received.name))  # whole, as stored
        return suite


class _Session:
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
    ) -> None:
        self._config = config
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
                "a Langfuse prompt version (run `evaluator prompts push`).",
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
            connection.scores.ensure_score_configs(DEFINITIONS, self._configs_deadline)
        except EvaluatorError as exc:
            self._notice(
                "warning", f"score configs were not checked ({exc}); scores are posted all the same."
            )

    def finish(
        self, suite: SuiteRun, scenarios: Sequence[LoadedScenario], *, verify: bool, stop: threading.Event
    ) -> SuiteRun:
        """Every Langfuse step after the run, within one deadline; then the optional verification."""
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
                "scenarios' traces and scores not sent by then stay in the local outbox for "
                "`evaluator sync`.",
            )

        with _said_if_slow(_SLOW_SECONDS, still_sending):
            spans, delivery = self._send(connection, suite.run.id, deadline)
            experiment = self._report_experiment(connection, suite, deadline)
        urls = {r.scenario_id: url for r in suite.results if (url := connection.trace_url(r.trace_id))}
        report = None
        if verify and not stop.is_set():  # after a signal, no more work than the sending
            by_id = {s.scenario.id: s.scenario for s in scenarios}
            report = verify_run(
                connection.traces,
                by_id,
                suite.results,
                deadline_seconds=limits.verify_deadline_seconds,
                rules=trace_rules(self._config),
            )
        connection.shutdown(deadline.remaining())
        # What the exporter sends from now on is not this run's to acknowledge (a span it could not
        # send in time is confirmed by `sync`, which sends it again); nor is the store kept alive.
        self.tracing.acknowledge_with(None)
        return replace(
            suite,
            connected=True,
            delivery=delivery,
            spans=spans,
            status=self._store.delivery_status(connection.destination, run_id=suite.run.id),
            trace_urls=urls,
            verify=report,
            experiment=experiment,
        )

    def _send(
        self, connection: LangfuseConnection, run_id: str, deadline: Deadline
    ) -> tuple[SpanDeliveryReport, DeliveryReport | None]:
        """The run's spans and scores into Langfuse, within `deadline` (score configs included)."""
        limits = self._config.settings.langfuse
        live_ended = self.live.finish(deadline) if self.live is not None else True
        if not self.tracing.flush(deadline.cap(limits.flush_timeout_seconds)):
            self._notice(
                "warning",
                f"spans were still being sent to Langfuse after {limits.flush_timeout_seconds:g} s; some "
                "traces may be incomplete there.",
            )
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
                batch_size=limits.score_batch_size,
                now=utc_now,
            )
            if live_ended
            else None  # the live posts still in flight own this run's scores: no second request
        )
        if self._configs is not None:
            self._configs_deadline.end_by(deadline)
            self._configs.join(deadline.remaining())
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
        judges = judge_prompt_names(self._config, scenarios)
        try:
            plan = plan_experiment(
                connection.datasets,
                scenarios,
                dataset=datasets.name,
                project_id=connection.project_id(),
                run_name=options.run_name or options.run_id,
                run_id=options.run_id,
                metadata=experiment_metadata(
                    run_id=options.run_id,
                    pins=options.prompt_pins,
                    served=served_versions(
                        library, connection.prompts.fetch_prompt, pins=options.prompt_pins, skip=judges
                    ),
                    judge_prompts=judges,
                    git=git,
                    targets=targets_of(scenarios),
                ),
                deadline=Deadline(self._config.settings.langfuse.read_deadline_seconds),
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
        report = report_experiment(connection.datasets, self._experiment, suite.run, suite.results, deadline)
        if report.error:
            self._notice(
                "warning",
                f"the run-level scores of experiment {report.run_name!r} were not posted: {report.error}.",
            )
        return report


def _check_arguments(targets: Mapping[str, Target] | None, run_name: str | None) -> None:
    """Bad input said before the run: targets given in Python that are not callables, and a run name
    that is the word naming stored runs by their place (the run could never be named by it)."""
    if run_name in RUN_KEYWORDS:
        raise ConfigError(
            f'--run-name "{run_name}" is the word that names a stored run by its place '
            f"({' / '.join(RUN_KEYWORDS)}), so this run could never be named by it. Fix: choose another name."
        )
    wrong = sorted(name for name, target in (targets or {}).items() if not callable(target))
    if wrong:
        raise ConfigError(
            f"targets: {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not callable. Fix: give a "
            "function (or async function) that takes a TargetRequest."
        )


def _pinned_and_selected(
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
    are not (the pin, what is wrong, and the valid names or versions)."""
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
        paths = [str(config.base_dir / "scenarios")]
    loaded = load_scenarios(
        paths,
        targets=None if target else _known_targets(config, given_targets),
        prompts=prompts.catalog(),
        judge_prompt=config.settings.judge.quality_prompt,
        config=config,
    )
    return _chosen(loaded, tags, target, where=", ".join(paths))


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
    )


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


def _check_output(output: Path | None) -> None:
    """Refuse an --output that cannot be written before running, not after; without writing anything
    (a run that stops on bad input leaves no file or folder behind)."""
    if output is None:
        return
    if output.is_dir():
        raise ConfigError(
            f"--output {output} is a folder. Fix: give a file name, e.g. {output / 'results.json'}"
        )
    existing = next(p for p in (output, *output.parents) if p.exists())  # what a write would change
    if existing != output and not existing.is_dir():
        problem = f"{existing} is a file, not a folder"
    elif not os.access(existing, os.W_OK):
        problem = f"{existing} is not writable"
    else:
        return
    raise ConfigError(f"--output {output} cannot be written ({problem}). Fix: choose a writable path.")


def _write_output(output: Path, document: Mapping[str, Any], on_notice: Notice) -> None:
    """The --output file; should it fail now (checked before the run), the run is stored all the same
    and goes on to Langfuse: said, not raised."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(document, indent=2, default=str) + "\n")
    except OSError as exc:
        on_notice("error", f"--output {output} could not be written ({exc}); the run is stored all the same.")


def _check_langfuse(connection: LangfuseConnection | None, on_notice: Notice) -> bool:
    """Wrong keys stop the run before it starts; an unreachable Langfuse only warns."""
    if connection is None:
        return False
    try:
        connection.project_id()
    except LangfuseUnavailableError as exc:
        on_notice(
            "warning",
            f"{exc}. The run goes on; results are stored locally and scores wait in the outbox for "
            "`evaluator sync`; prompts come from the local files (their generations are not linked to "
            "Langfuse prompt versions).",
        )
        return False
    return True


def _stopping(
    cfg: Config, *, connected: bool, over: threading.Event, on_notice: Notice
) -> Callable[[signal.Signals], None]:
    """What a first signal says at once: what the run does now (`over`: its scenarios are all done),
    and that a second one exits."""
    deadline = f"{cfg.settings.langfuse.delivery_deadline_seconds:g} s"

    def said(received: signal.Signals) -> None:
        if not over.is_set():
            now = "no new scenario starts and the running ones are cut off; what finished is stored"
            now += f", then sent to Langfuse within {deadline}" if connected else ""
        else:
            now = "the run was over: every result is stored"
            now += (
                f"; sending it to Langfuse goes on, within {deadline} of the run's end" if connected else ""
            )
        on_notice(
            "note",
            f"stopping on {received.name}: {now}. A second {_SECOND[received]} exits at once; what is "
            "stored stays.",
        )

    return said


_SECOND = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM (or Ctrl-C)"}


def _exiting_at_once(cfg: Config, *, connected: bool) -> str:
    """What a second signal says as it exits (it cannot wait for anything, printing included)."""
    waiting = "; `evaluator sync` sends Langfuse what it has not got" if connected else ""
    return f"stopped at once: what was stored stays in {cfg.store_path}{waiting}.\n"


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
