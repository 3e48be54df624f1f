"""`run_suite()`: the one way a suite runs, whoever asks (the CLI, scripts/run_scenarios.py, a notebook).

    from evaluator.run import SuiteOptions, run_suite
    suite = run_suite(["scenarios/research"], SuiteOptions(prompts=["agents/research=2"]))
    suite.passed, suite.results[0].to_json()

It loads the configuration, the scenarios and their targets (selection.py; bad input raises an
`EvaluatorError` before anything runs), connects to Langfuse when the environment has keys (and looks
up the dataset whose experiment the run's traces join: experiment.py), runs the pipeline, stores every
result, writes `output` (before the steps after the run), then spends at most one deadline
(`[langfuse] delivery_deadline_seconds`) on every Langfuse step after the run (_session.py): the
batches still in flight, the span flush, re-sending traces Langfuse has not got whole, the score
sweep, the score configs, the experiment's run-level scores and the SDK's last flush (its shutdown
too in a command; from Python it keeps running for the caller's own client, until the process's
exit: langfuse/lifetime.py). Should the store not take the run's end (its results are all stored by
then), `output` is written and the steps after the run go as far as they can without the store; then
`RunNotStoredError` (a StoreError) carries the run. Should it fail during the run, no scenario starts
after it, those started finish as they would have, and the same follows: `output` holds every result
(its header's `not_stored` names those the store did not take), and `RunNotStoredError` says which.
Progress and warnings go to the callbacks; nothing is printed.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.config import MAX_SECONDS, Config, load_config
from evaluator.errors import ConfigError, InputError, StoreError, StoreMovedError
from evaluator.langfuse import JudgeTracing, LangfuseConnection, Tracing
from evaluator.metrics import MetricSet
from evaluator.prompts import PromptLibrary
from evaluator.results import (
    RUN_KEYWORDS,
    RunInfo,
    ScenarioResult,
    builtin_metrics,
    run_to_json,
    tool_schema_problems,
    with_dialogues,
)
from evaluator.run._gc import collector_tuned_for_run
from evaluator.run._session import Session, check_langfuse
from evaluator.run._signals import StopSignals
from evaluator.run.files import check_output_file, store_files
from evaluator.run.judging import JudgePlan
from evaluator.run.pipeline import NotRecordedError, Pipeline, RunOptions, new_run_id
from evaluator.run.provenance import git_state, model_names, targets_of
from evaluator.run.selection import (
    dialogue_settings,
    entity_problems,
    load_targets,
    pinned_and_selected,
    trace_rules,
)
from evaluator.run.suite import Notice, RunNotStoredError, SuiteOptions, SuiteRun, logged_notice
from evaluator.run.target import Target
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Store, write_whole

__all__ = ["run_suite"]

_DEFAULTS = SuiteOptions()  # every option as the configuration says


def _run_metrics(metrics: MetricSet, selected: Sequence[LoadedScenario]) -> MetricSet:
    """The run's metrics: with the dialogue metric when it runs a dialogue."""
    return with_dialogues(metrics) if any(item.scenario.is_dialogue for item in selected) else metrics


def run_suite(
    paths: Sequence[str] = (),
    options: SuiteOptions = _DEFAULTS,
    *,
    config: Config | Path | None = None,
    scenarios: Sequence[Scenario] | None = None,
    targets: Mapping[str, Target] | None = None,
    on_result: Callable[[ScenarioResult], None] = lambda _: None,
    on_start: Callable[[int], None] = lambda _: None,
    on_notice: Notice = logged_notice,
    metrics: MetricSet | None = None,
) -> SuiteRun:
    """Run scenarios (files, folders, globs; default `scenarios/` beside the configuration) against
    their targets, as `options` say (SuiteOptions: tags, target, prompt pins, concurrency, judges,
    output, ...). `on_start` gets the number of scenarios, `on_result` each result once it is stored.
    The judges run when an endpoint is configured (or `options.judge_model` is given, e.g. a
    `judge.FakeJudgeModel` in tests) and `options.no_judge` is not set. `on_notice` gets what the run
    says along the way (kind "warning", "error" or "note", and the text); by default it is logged on
    the `evaluator.run` logger.

    From Python, `scenarios` may be given as `Scenario` objects instead of files, and `targets` as
    callables by name instead of the configuration's `module:callable` entries. `metrics`: the run's
    metrics (default: the built-in ones of the configuration).

    It blocks until the run is over, running async targets and the judges on an event loop of its
    own: from a coroutine (a notebook cell), call it directly (holding up the caller's loop) or in
    `asyncio.to_thread`.

    Raises `RunNotStoredError` (a StoreError) when the store could not take the run's end, or failed
    during the run (then no scenario started after it, and `not_stored` names the results it did not
    take): its `suite` is the run all the same (every result, Langfuse's side as far as it went)."""
    cfg, library, pins, selected = _selection(config, options, paths, scenarios, targets)
    store, metrics = Store(cfg.store_path), _run_metrics(metrics or builtin_metrics(cfg), selected)
    try:
        _say_if_named_before(store, options.run_name, on_notice)
        connection = LangfuseConnection.from_env()
        tracing = connection.tracing if connection is not None else Tracing.embedded()
        with tracing.process_default():  # targets' import-time clients record into the capture
            callables = {
                **load_targets(cfg, {s.scenario.target for s in selected} - set(targets or {})),
                **(targets or {}),
            }
        reachable = check_langfuse(connection, on_notice)
        run_options = RunOptions(
            concurrency=options.concurrency
            if options.concurrency is not None
            else cfg.settings.run.concurrency,
            timeout_seconds=options.timeout
            if options.timeout is not None
            else cfg.settings.run.timeout_seconds,
            prompt_pins=pins,
            run_id=new_run_id(),
            run_name=options.run_name or "",
            judge_concurrency=options.judge_concurrency or cfg.settings.judge.concurrency,
        )
        session = Session(
            cfg,
            store,
            connection,
            reachable,
            on_notice,
            run_id=run_options.run_id,
            tracing=tracing,
            metrics=metrics,
        )
        git = git_state(cfg.base_dir)
        run_options = replace(
            run_options, experiment_links=session.plan_experiment(selected, run_options, git, library)
        )
        plan = JudgePlan(cfg, no_judge=options.no_judge, model=options.judge_model, metrics=metrics)
        prompt_source = session.prompt_source(library)  # one for the judges and the targets: warned once
        judges = plan.judges(
            [s.scenario for s in selected],
            library=library,
            prompts=prompt_source,
            # kept: the pipeline stores each judge trace with the result it judged (Pipeline.judge_traces)
            tracer=(judge_tracing := JudgeTracing(session.tracing, prices=plan.prices, keep=True)),
            pins=pins,
            cache=store,
            use_cache=not options.no_cache,
            notice=on_notice,
        )
        run_options = replace(run_options, judge_status=plan.unjudged)
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
            metrics=metrics,
            dialogue_settings=dialogue_settings(cfg, {s.scenario.target for s in selected}),
            judge_traces=judge_tracing,
        )
        on_start(len(selected))
        over = threading.Event()  # every scenario is stored: a signal now stops nothing more

        unstorable = threading.Event()  # the store failed during the run: what finishes is not stored
        said = _stopping(
            cfg, connected=connection is not None, over=over, unstorable=unstorable, on_notice=on_notice
        )
        last_words = _exiting_at_once(cfg, connected=connection is not None)
        # The collector stays tuned (run._gc) until the results are written too: their documents allocate
        # as much again, and a full collection once the pipeline let go would walk all it had frozen.
        with (
            StopSignals(on_first=said, last_words=last_words) as stop,  # a second signal exits at once
            collector_tuned_for_run(),
        ):
            session.start()
            try:
                with tracing.process_default():
                    run, results, failed = _run_pipeline(
                        pipeline,
                        selected,
                        run_options,
                        store,
                        on_result=on_result,
                        stop=stop.requested,
                        over=over,
                        on_notice=on_notice,
                        output=options.output,
                        unstorable=unstorable,
                    )
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
                models=model_names(cfg, llm_used=pipeline_llm is not None, judged=judges is not None),
            )
            unstored, written, not_stored = _store_the_end(
                store,
                run,
                results=results,
                metrics=metrics,
                output=options.output,
                on_notice=on_notice,
                failed=failed,
            )
            suite = SuiteRun(
                run=run,
                results=results,
                expected=len(selected),
                store_path=cfg.store_path,
                output=written,
                scenario_targets={s.scenario.id: s.scenario.target for s in selected},
            )
            verify = options.verify_langfuse and not run.interrupted
            suite = session.finish(
                suite,
                selected,
                verify=verify,
                stop=stop.requested,
                stored=unstored is None,
                not_stored=len(not_stored),
            )
            if stop.received is not None and suite.run.signal is None:  # it came once the run was over:
                suite = replace(suite, run=replace(suite.run, signal=stop.received.name))  # whole, as stored
            if unstored is not None:
                raise RunNotStoredError(
                    suite,
                    unstored,
                    kept=[f"--output {written}"] if written else [],
                    not_stored=not_stored,
                )
            return suite
    finally:
        _close(store, on_notice)


def _run_pipeline(
    pipeline: Pipeline,
    selected: Sequence[LoadedScenario],
    options: RunOptions,
    store: Store,
    *,
    on_result: Callable[[ScenarioResult], None],
    stop: threading.Event,
    over: threading.Event,
    on_notice: Notice,
    output: Path | None,
    unstorable: threading.Event,
) -> tuple[RunInfo, list[ScenarioResult], NotRecordedError | None]:
    """The pipeline's run, its results, and the store's failure during it (None: every result is
    stored, and `over` is set): then the results it did not take are here only, to be written to
    --output, shown, and raised with the run. The failure is said at once (and `unstorable` set)."""
    kept = f"the summary and --output {output}" if output is not None else "the summary only (no --output)"

    def unrecorded(_: StoreError, running: int) -> None:
        unstorable.set()
        on_notice(
            "note",
            f"the local store failed during the run (its error follows at the end): no scenario starts "
            f"now; the {running} started and not yet stored finish as they would have, and their results, "
            f"with the others the store does not have, go to {kept}, not to the store.",
        )

    try:
        run, results = pipeline.run(
            selected,
            options,
            on_result=on_result,
            on_start=store.start_run,
            stop=stop,
            all_stored=over,
            on_unrecorded=unrecorded,
        )
    except NotRecordedError as exc:
        return exc.run, exc.results, exc
    over.set()
    return run, results, None


def _selection(
    config: Config | Path | None,
    options: SuiteOptions,
    paths: Sequence[str],
    scenarios: Sequence[Scenario] | None,
    targets: Mapping[str, Target] | None,
) -> tuple[Config, PromptLibrary, dict[str, int], list[LoadedScenario]]:
    """The configuration, its prompt library, the prompt pins and the scenarios to run, every input
    checked (bad input raises before anything runs or is opened)."""
    cfg = config if isinstance(config, Config) else load_config(config)
    library = PromptLibrary.of_project(cfg.prompts_dir)
    _check_arguments(targets, options.run_name, options.timeout)
    pins, selected = pinned_and_selected(
        cfg,
        library,
        prompts=options.prompts,
        scenarios=scenarios,
        paths=paths,
        tags=options.tags,
        target=options.target,
        given_targets=set(targets or {}),
    )
    _check_inputs(cfg, options, {s.scenario.target for s in selected})
    return cfg, library, pins, selected


def _close(store: Store, on_notice: Notice) -> None:
    """The run's store connection closed as the run ends, however it ends: a process that runs suite
    after suite (a notebook, a test session) keeps no database file open per run. Every result was
    committed as it finished; what closing can still fail to write is only the judges' verdicts
    cached since the last result (asked again next time), so that is said, not raised."""
    try:
        store.close()
    except StoreError as exc:
        on_notice("warning", f"the judge verdicts cached at the run's end were not kept: {exc}")


def _check_arguments(
    targets: Mapping[str, Target] | None, run_name: str | None, timeout: float | None
) -> None:
    """Bad input said before the run: targets given in Python that are not callables, a run name
    that is the word naming stored runs by their place (the run could never be named by it), and a
    timeout no wait can take (as `[run] timeout_seconds` is checked)."""
    if timeout is not None and not 0 < timeout <= MAX_SECONDS:
        raise ConfigError(
            f"timeout {timeout!r} is not a number of seconds above 0 and at most {MAX_SECONDS:g} (a week). "
            "Fix: give a timeout in that range."
        )
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


def _say_if_named_before(store: Store, run_name: str | None, on_notice: Notice) -> None:
    """A --run-name a stored run has already: allowed, but by that name the runs are one (compare and
    report take the latest; in Langfuse they are one experiment), so it is said before the run."""
    earlier = store.runs_named(run_name) if run_name else []
    if earlier:
        runs = ", ".join(earlier[-3:]) + (f" and {len(earlier) - 3} older" if len(earlier) > 3 else "")
        on_notice(
            "warning",
            f'--run-name "{run_name}" is the name of a stored run already ({runs}): by that name, '
            "compare and report will mean this run, and in Langfuse runs of one name on one dataset are "
            "one experiment. Fix: "
            f'give each run its own name (e.g. "{run_name}-2"), or name the older run by its id.',
        )


def _check_tracing_enabled() -> None:
    """Refuse to run when the environment turns the Langfuse SDK's tracing off: each scenario's trace
    is read from it (in-process too), so every scenario would end an evaluator error."""
    if os.environ.get("LANGFUSE_TRACING_ENABLED", "true").lower() == "false":
        raise ConfigError(
            "LANGFUSE_TRACING_ENABLED=false turns the Langfuse SDK's tracing off, and a run reads each "
            "scenario's trace from it. Fix: unset LANGFUSE_TRACING_ENABLED (or set it to true) for "
            "evaluator runs."
        )


def _check_inputs(cfg: Config, options: SuiteOptions, targets: set[str]) -> None:
    """Bad input the run would otherwise meet late, refused before anything runs: the --output file,
    the `tool_schemas` files of the targets it uses, the LLM endpoints' base URLs, the SDK's tracing
    turned off."""
    _check_output(options.output, cfg, targets)
    _check_endpoints(cfg, options)
    _check_tracing_enabled()


def _check_endpoints(cfg: Config, options: SuiteOptions) -> None:
    """The LLM endpoints' base URLs from the environment (the judges', when they may run, and the one
    offered to targets): one that is no http:// or https:// URL is bad input now (ConfigError, from the
    configuration), not a run of requests that all fail as if the server were down."""
    if not options.no_judge and options.judge_model is None:
        cfg.judge_endpoint()
    if cfg.settings.llm.targets:
        cfg.llm_endpoint()


def _check_output(output: Path | None, config: Config, targets: set[str]) -> None:
    """Refuse an --output that cannot be written before running, not after (`check_output_file`). The
    same for a broken `tool_schemas` or `entities` file of a target the run uses, and a `[prompts] dir`
    that is no folder (bad input, before anything runs)."""
    problems = [
        *tool_schema_problems(config, targets),
        *entity_problems(config, targets),
        *config.prompts_dir_problems(),
    ]
    if problems:
        raise InputError(problems)
    check_output_file("--output", output, example="results.json", keep=store_files(config))


def _store_the_end(
    store: Store,
    run: RunInfo,
    *,
    results: Sequence[ScenarioResult],
    metrics: MetricSet,
    output: Path | None,
    on_notice: Notice,
    failed: NotRecordedError | None = None,
) -> tuple[StoreError | None, Path | None, list[str]]:
    """The run's end into the store, then --output (before the steps after the run): the store's
    error (None: the end is stored), the --output file written (None: none), and the ids of the
    results the store does not have. Should the store fail to take the end, --output is written all
    the same (the results are kept there), and the run goes on to its steps after the run: the caller
    raises the error once they are done. A store that `failed` during the run is not asked again (it
    would hold totals of results it does not have); nor does one whose file was moved have any result
    (StoreMovedError). The --output header names the results the store does not have (`not_stored`)."""
    documents = [r.to_json() for r in results]
    unstored: StoreError | None = failed.cause if failed is not None else None
    not_stored = failed.not_recorded if failed is not None else []
    if failed is None:
        try:
            store.finish_run(run, results, documents, metrics)
        except StoreMovedError as exc:  # what it took went with the file it had open
            unstored, not_stored = exc, [r.scenario_id for r in results]
        except StoreError as exc:
            unstored = exc
    if output is None:
        return unstored, None, not_stored
    document = run_to_json(run, results, documents, metrics)
    if not_stored:
        document["run"]["not_stored"] = not_stored
    written = _write_output(output, document, on_notice, stored=unstored is None, not_stored=len(not_stored))
    return unstored, output if written else None, not_stored


def _write_output(
    output: Path,
    document: Mapping[str, Any],
    on_notice: Notice,
    *,
    stored: bool = True,
    not_stored: int = 0,
) -> bool:
    """The --output file; should it fail now (checked before the run), the run is stored all the same
    and goes on to Langfuse: said, not raised (False). When the store could not take the run's end
    (`stored` False), the file is where its results are kept: said either way; so are the `not_stored`
    results it does not have (it failed during the run), in the file only."""
    try:
        write_whole(output, json.dumps(document, indent=2, default=str) + "\n")
    except OSError as exc:
        also = "the run is stored all the same" if stored else "nor could the store take the run's end"
        if not_stored:
            also = f"nor does the store have {not_stored} of its results (only the summary shows them)"
        on_notice("error", f"--output {output} could not be written ({exc}); {also}.")
        return False
    if not_stored:
        on_notice(
            "note",
            f"every result of the run is in --output {output}, the {not_stored} the store does not have "
            "among them (its `run.not_stored` names them).",
        )
    elif not stored:
        on_notice("note", f"the run's results are in --output {output} all the same.")
    return True


def _stopping(
    cfg: Config,
    *,
    connected: bool,
    over: threading.Event,
    unstorable: threading.Event,
    on_notice: Notice,
) -> Callable[[signal.Signals], None]:
    """What a first signal says at once: what the run does now (`over`: its scenarios are all done;
    `unstorable`: the store failed during the run), and that a second one exits."""
    deadline = f"{cfg.settings.langfuse.delivery_deadline_seconds:g} s"

    def said(received: signal.Signals) -> None:
        if unstorable.is_set():
            now = (
                "no new scenario starts and the running ones are cut off; what finished is kept for the "
                "summary and --output (the local store failed during the run)"
            )
        elif not over.is_set():
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
