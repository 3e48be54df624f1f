"""The `evaluator` command line (contract: DESIGN.md, Command line).

Exit codes: 0 every scenario passed, 1 any scenario failed or errored, 2 bad input or configuration
(a clear message on stderr, no traceback).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from evaluator.config import Config, load_config
from evaluator.delivery import deliver, deliver_spans
from evaluator.errors import (
    ConfigError,
    EvaluatorError,
    InputError,
    LangfuseUnavailableError,
    PromptError,
    did_you_mean,
)
from evaluator.evaluation import evaluate
from evaluator.history import Grouping, aggregate
from evaluator.langfuse_adapter import LangfuseAdapter, LangfuseSettings
from evaluator.prompt_push import push_prompts
from evaluator.prompts import ManagedPrompts, PromptLibrary, PromptSource
from evaluator.readback import read_trace
from evaluator.report import history_table, notice, print_delivery, print_summary, progress_bar, summary_table
from evaluator.results import JudgeStatus, RunInfo, ScenarioResult, run_to_json
from evaluator.runner import JUDGE_NOT_AVAILABLE, Runner, RunOptions, new_run_id, utc_now
from evaluator.scenario import LoadedScenario, load_scenarios
from evaluator.scores import DEFINITIONS, scores_for
from evaluator.store import Store
from evaluator.target import Target, load_target
from evaluator.trace import Trace, load_trace_file
from evaluator.verify import verify_run

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

app = typer.Typer(
    help="Evaluate multi-agent LLM systems through their Langfuse traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Rich assumes 80 columns when output is not a terminal (CI logs, pipes): give tables room there.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

ConfigOption = Annotated[Path | None, typer.Option("--config", help="evaluator.toml to use.")]


def _prompt_pins(values: list[str], library: PromptLibrary) -> dict[str, int]:
    pins: dict[str, int] = {}
    for value in values:
        name, sep, version = value.partition("=")
        if not sep or not version.isdigit():
            raise ConfigError(
                f'--prompt "{value}": expected NAME=VERSION. Fix: e.g. --prompt agents/research=2'
            )
        library.get(name, version=int(version))  # raises naming valid names and versions
        pins[name] = int(version)
    return pins


def _load_targets(config: Config, names: set[str]) -> dict[str, Target]:
    configured = config.settings.targets
    targets: dict[str, Target] = {}
    for name in sorted(names):
        if name not in configured:
            raise ConfigError(
                f'unknown target "{name}"{did_you_mean(name, configured)}. '
                f"Fix: add [targets.{name}] to {config.source or 'evaluator.toml'}."
            )
        targets[name] = load_target(configured[name].entry, base_dir=config.base_dir, name=name)
    return targets


def _select(
    config: Config, paths: list[str], tags: list[str], target: str | None, prompts: PromptLibrary
) -> list[LoadedScenario]:
    if not paths:
        paths = [str(config.base_dir / "scenarios")]
    loaded = load_scenarios(
        paths,
        targets=None if target else config.catalogs(),
        tags=tags,
        prompt_names=prompts.names(),
    )
    if not loaded:
        raise ConfigError(
            f"no scenarios match --tag {', '.join(tags)} in {', '.join(paths)}. "
            "Fix: check the tag names (they are case-sensitive)."
        )
    if target:
        loaded = [
            LoadedScenario(scenario=s.scenario.model_copy(update={"target": target}), path=s.path)
            for s in loaded
        ]
    return loaded


def _run_with_progress(
    runner: Runner,
    scenarios: list[LoadedScenario],
    options: RunOptions,
    store: Store,
    destination: str | None,
) -> tuple[RunInfo, list[ScenarioResult]]:
    """Run with a progress bar on stderr, storing each result and its scores as it finishes."""
    with progress_bar(err) as progress:
        task = progress.add_task("scenarios", total=len(scenarios))

        def on_result(result: ScenarioResult) -> None:
            scores = scores_for(result, run_id=options.run_id)
            store.record(options.run_id, result, scores, destination=destination)
            progress.advance(task)

        return runner.run(scenarios, options, on_result=on_result, on_start=store.start_run)


def _check_output(output: Path | None) -> None:
    """Refuse an --output that cannot be written before running, not after."""
    if output is None:
        return
    if output.is_dir():
        raise ConfigError(
            f"--output {output} is a folder. Fix: give a file name, e.g. {output / 'results.json'}"
        )
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ConfigError(
            f"--output {output} cannot be written ({exc}). Fix: choose a writable path."
        ) from None


@app.command()
def run(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Scenario files, folders or globs (default: scenarios/)."),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Only scenarios with this tag (repeatable).")] = None,
    target: Annotated[str | None, typer.Option(help="Run every scenario against this target.")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, max=256)] = None,
    timeout: Annotated[float | None, typer.Option(min=0.001, help="Per-scenario timeout, seconds.")] = None,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Do not run the LLM judge.")] = False,
    prompt: Annotated[
        list[str] | None, typer.Option(help="Pin a prompt version: NAME=VERSION (repeatable).")
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the run's results JSON here.")] = None,
    run_name: Annotated[str | None, typer.Option(help="A name for this run.")] = None,
    verify_langfuse: Annotated[
        bool,
        typer.Option(
            "--verify-langfuse",
            help="Read every trace back from Langfuse and check it gives the same verdict.",
        ),
    ] = False,
    config_path: ConfigOption = None,
) -> None:
    """Run scenarios against their targets and validate each run's trace."""
    config = load_config(config_path)
    prompts = PromptLibrary(config.prompts_dir)
    pins = _prompt_pins(prompt or [], prompts)
    scenarios = _select(config, paths or [], tag or [], target, prompts)
    targets = _load_targets(config, {s.scenario.target for s in scenarios})
    _check_output(output)
    store = Store(config.store_path)
    settings = config.settings.run
    options = RunOptions(
        concurrency=concurrency if concurrency is not None else settings.concurrency,
        timeout_seconds=timeout if timeout is not None else settings.timeout_seconds,
        prompt_pins=pins,
        run_id=new_run_id(),
        run_name=run_name or "",
        judge_status=JudgeStatus(status="skipped", reason="--no-judge was given")
        if no_judge
        else JUDGE_NOT_AVAILABLE,
    )
    adapter = LangfuseAdapter.from_env()
    destination = adapter.destination if adapter.connected else None
    if destination is not None:  # span batches the SDK cannot deliver are kept for `sync`, not dropped
        adapter.keep_undelivered_spans(
            lambda payload, count: store.keep_span_batch(destination, payload, count, utc_now())
        )
    reachable = _check_langfuse(adapter)
    runner = Runner(
        adapter=adapter,
        targets=targets,
        prompts=_prompt_source(prompts, adapter, reachable),
        llm=config.llm_endpoint() if config.settings.llm.targets else None,
    )
    run_info, results = _run_with_progress(runner, scenarios, options, store, destination)
    store.finish_run(run_info, results)
    print_summary(out, run_info, results, expected_count=len(scenarios))
    if output is not None:  # written before anything is posted
        output.write_text(json.dumps(run_to_json(run_info, results), indent=2, default=str) + "\n")
        out.print(f"Results: {output}", highlight=False)
    out.print(f"Stored in {config.store_path} (run {run_info.id})", highlight=False)
    verified = True
    if adapter.connected:
        _publish(adapter, store, config, run_info.id, results, reachable=reachable)
        if verify_langfuse:
            verified = _verify(adapter, config, scenarios, results)
    elif verify_langfuse:
        notice(err, "warning", "--verify-langfuse needs Langfuse configured; nothing to verify.")
    adapter.shutdown(config.settings.langfuse.flush_timeout_seconds)
    passed = all(r.status == "passed" for r in results) and not run_info.interrupted and verified
    raise typer.Exit(EXIT_PASSED if passed else EXIT_FAILED)


def _prompt_source(library: PromptLibrary, adapter: LangfuseAdapter, reachable: bool) -> PromptSource:
    """Prompts from Langfuse (generations link to their versions); a local file, said once, when not."""
    if not reachable:
        return library
    warned: set[str] = set()
    lock = threading.Lock()

    def on_fallback(ref: str, exc: Exception) -> None:
        with lock:
            if ref in warned:
                return
            warned.add(ref)
        notice(
            err,
            "warning",
            f"{exc}. Using the local file {ref} instead: its generations are not linked to "
            "a Langfuse prompt version (run `evaluator prompts push`).",
        )

    return ManagedPrompts(library, adapter.fetch_prompt, on_fallback)


def _verify(
    adapter: LangfuseAdapter, config: Config, scenarios: list[LoadedScenario], results: list[ScenarioResult]
) -> bool:
    """Read every trace back; say which are missing or give a different verdict."""
    with err.status("Reading the run's traces back from Langfuse..."):
        report = verify_run(
            adapter,
            {s.scenario.id: s.scenario for s in scenarios},
            results,
            deadline_seconds=config.settings.langfuse.verify_deadline_seconds,
        )
    out.print(f"Verified in Langfuse: {len(report.matched)} traces give the same verdict", highlight=False)
    for label, entries in (
        ("different", report.differ),
        ("missing", report.missing),
        ("unsure", report.ambiguous),
    ):
        for scenario_id, reason in entries.items():
            notice(out, label, f"{scenario_id}: {reason}")
    return report.ok


def _check_langfuse(adapter: LangfuseAdapter) -> bool:
    """Wrong keys stop the run before it starts; an unreachable Langfuse only warns."""
    if not adapter.connected:
        return False
    try:
        adapter.project_id()
    except LangfuseUnavailableError as exc:
        notice(
            err,
            "warning",
            f"{exc}. The run goes on; results are stored locally and scores wait in the "
            "outbox for `evaluator sync`.",
        )
        return False
    return True


def _ensure_score_configs(adapter: LangfuseAdapter) -> None:
    """Best effort: a missing score config only makes the UI plainer; it must not hold scores back."""
    try:
        adapter.ensure_score_configs(DEFINITIONS)
    except LangfuseUnavailableError as exc:
        notice(err, "warning", f"score configs were not checked ({exc}); scores are posted all the same.")


def _publish(
    adapter: LangfuseAdapter,
    store: Store,
    config: Config,
    run_id: str,
    results: list[ScenarioResult],
    *,
    reachable: bool,
) -> None:
    """Flush spans, make sure score configs exist, deliver this run's scores; say what is unsent."""
    limits = config.settings.langfuse
    if not adapter.flush(limits.flush_timeout_seconds):
        notice(
            err,
            "warning",
            f"spans were still being sent to Langfuse after {limits.flush_timeout_seconds:g} "
            "s; some traces may be incomplete there.",
        )
    if reachable:
        _ensure_score_configs(adapter)
    spans = (
        deliver_spans(
            store,
            adapter,
            adapter.destination,
            deadline_seconds=limits.delivery_deadline_seconds,
            now=utc_now,
        )
        if store.unsent_span_batches(adapter.destination)
        else None
    )
    report = deliver(
        store,
        adapter,
        adapter.destination,
        run_id=run_id,
        batch_size=limits.score_batch_size,
        deadline_seconds=limits.delivery_deadline_seconds,
        now=utc_now,
    )
    for result in results:
        url = adapter.trace_url(result.trace_id)
        if url:
            out.print(f"  {result.scenario_id}: {url}", highlight=False, soft_wrap=True, markup=False)
    print_delivery(out, report, waiting=len(store.unsent_scores(adapter.destination)), spans=spans)


@app.command()
def validate(
    scenario: Annotated[Path, typer.Option(help="The scenario file.")],
    trace: Annotated[
        Path | None, typer.Option(help="A Langfuse trace or observations page (JSON file).")
    ] = None,
    trace_id: Annotated[str | None, typer.Option(help="A trace id to read from Langfuse.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result object.")] = False,
    config_path: ConfigOption = None,
) -> None:
    """Validate one trace (a saved file, or read from Langfuse) against one scenario."""
    if (trace is None) == (trace_id is None):
        raise ConfigError("give exactly one of --trace FILE or --trace-id ID.")
    matches = load_scenarios([str(scenario)])
    if len(matches) != 1:
        raise ConfigError(
            f"--scenario {scenario} holds {len(matches)} scenarios. Fix: name one scenario file."
        )
    loaded = matches[0].scenario
    normalized = (
        load_trace_file(trace) if trace is not None else _read_from_langfuse(trace_id or "", config_path)
    )
    result = evaluate(
        loaded,
        normalized,
        judge_status=JudgeStatus(status="skipped", reason="validate does not run the judge"),
    )
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, default=str) + "\n")
    else:
        out.print(summary_table([result]))
    raise typer.Exit(EXIT_PASSED if result.status == "passed" else EXIT_FAILED)


@contextmanager
def _langfuse(purpose: str, config: Config, alternative: str = "") -> Iterator[LangfuseAdapter]:
    """A connected adapter for a command that needs Langfuse, shut down (bounded) afterwards."""
    settings = LangfuseSettings.from_env()
    if settings is None:
        raise ConfigError(
            f"{purpose} needs Langfuse, but no keys are set. Fix: set LANGFUSE_PUBLIC_KEY, "
            f"LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL{alternative}."
        )
    adapter = LangfuseAdapter.connect(settings)
    try:
        yield adapter
    finally:
        adapter.shutdown(config.settings.langfuse.flush_timeout_seconds)


def _read_from_langfuse(trace_id: str, config_path: Path | None) -> Trace:
    config = load_config(config_path)
    with _langfuse("--trace-id", config, ", or pass --trace FILE") as adapter:
        adapter.project_id()
        deadline = config.settings.langfuse.read_deadline_seconds
        with err.status(f"Reading trace {trace_id} from Langfuse..."):
            read = read_trace(adapter, trace_id, deadline_seconds=deadline)
    if not read.settled:
        notice(
            err,
            "warning",
            f"trace {trace_id} was still changing in Langfuse after {deadline:g} s; this "
            f"verdict is on the {read.trace.observation_count} observations readable so far.",
        )
    return read.trace


@app.command()
def report(
    by: Annotated[
        Grouping, typer.Option(help="Group results per run, per scenario or per prompt version.")
    ] = "run",
    last: Annotated[int | None, typer.Option(min=1, help="Only the last N runs.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    config_path: ConfigOption = None,
) -> None:
    """Summarise stored results per run, scenario or prompt version: pass rates, mean full_workflow."""
    config = load_config(config_path)
    rows = aggregate(Store(config.store_path).history(last_runs=last), by)
    if as_json:
        sys.stdout.write(json.dumps([row.to_json() for row in rows], indent=2) + "\n")
    elif not rows:
        out.print(
            f"No results stored in {config.store_path} yet: run `evaluator run` first.", highlight=False
        )
    else:
        out.print(history_table(rows, by))


@app.command()
def lint(
    paths: Annotated[list[str], typer.Argument(help="Scenario files, folders or globs.")],
    config_path: ConfigOption = None,
) -> None:
    """Check scenario files: format, unknown keys, targets, agent and tool names, unique ids."""
    config = load_config(config_path)
    prompts = PromptLibrary(config.prompts_dir)
    loaded = load_scenarios(paths, targets=config.catalogs(), prompt_names=prompts.names())
    out.print(f"{len(loaded)} scenario files OK")


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
    with _langfuse("sync", config) as adapter:
        destination = adapter.destination
        if retry_rejected:
            out.print(f"{store.retry_rejected(destination)} rejected scores are back in the outbox")
        if store.unsent_scores(destination) or store.unsent_span_batches(destination):
            try:
                adapter.project_id()
                _ensure_score_configs(adapter)
                spans = deliver_spans(
                    store,
                    adapter,
                    destination,
                    deadline_seconds=limits.delivery_deadline_seconds,
                    now=utc_now,
                )
                report = deliver(
                    store,
                    adapter,
                    destination,
                    batch_size=limits.score_batch_size,
                    deadline_seconds=limits.delivery_deadline_seconds,
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


prompts_app = typer.Typer(help="Prompt management: local prompt files and Langfuse.", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("push")
def prompts_push(config_path: ConfigOption = None) -> None:
    """Push every prompt file under prompts/ to Langfuse: new versions in order, labels as the files say;
    content already there is not pushed again."""
    config = load_config(config_path)
    library = PromptLibrary(config.prompts_dir)
    with _langfuse("prompts push", config) as adapter:
        adapter.project_id()
        outcomes, problems = push_prompts(library, adapter)
    for outcome in outcomes:
        labels = f" (labels: {', '.join(outcome.labels)})" if outcome.labels else ""
        out.print(f"{outcome.action:>9}  {outcome.ref}{labels}", highlight=False, markup=False)
    created = sum(o.action == "created" for o in outcomes)
    out.print(f"{created} created, {len(outcomes) - created} already in Langfuse")
    if problems:
        raise PromptError(problems)


def main() -> None:
    try:
        app()
    except InputError as exc:
        for problem in exc.problems:
            notice(err, "error", str(problem))
        err.print(f"{len(exc.problems)} problem(s); fix them and run the command again.", highlight=False)
        sys.exit(EXIT_BAD_INPUT)
    except EvaluatorError as exc:
        notice(err, "error", str(exc))
        sys.exit(EXIT_BAD_INPUT)
