"""Whether the LLM judges run, and with what: shared by `run_suite` and `evaluator validate`.

The judges run when an endpoint is configured (EVALUATOR_JUDGE_BASE_URL / EVALUATOR_JUDGE_API_KEY, else
OPENAI_*; or a model handed in, such as `judge.FakeJudgeModel`) and `--no-judge` is not given. When
they do not, every result says why in `judge_status`, and the run says how to enable them. The judge
prompts a suite needs are checked before anything runs.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from evaluator.config import Config
from evaluator.errors import StoreError
from evaluator.judge import (
    NOTHING_TO_JUDGE,
    Decided,
    JudgeMetric,
    JudgeModel,
    JudgeOutcome,
    Judges,
    JudgeSettings,
    JudgeTracer,
    RetryPolicy,
    VerdictCache,
)
from evaluator.langfuse import JudgeTracing, LangfuseConnection, Tracing
from evaluator.metrics import MetricSet
from evaluator.prompts import ManagedPrompts, PromptLibrary, PromptSource
from evaluator.results import EvaluatorFailure, JudgeStatus, ScenarioResult, builtin_metrics
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Store
from evaluator.trace import Trace

if TYPE_CHECKING:
    from evaluator.judge import OpenAIJudgeModel

__all__ = [
    "HOW_TO_ENABLE",
    "NOT_FINISHED",
    "JudgePlan",
    "ajudged_result",
    "check_judge_prompts",
    "judge_prompt_names",
    "judge_result",
    "judged_result",
    "judges_outside_a_run",
    "partly_judged_result",
    "validate_run_id",
]

_log = logging.getLogger(__name__)

NO_JUDGE = JudgeStatus(status="skipped", reason="--no-judge was given")
NO_ENDPOINT = JudgeStatus(
    status="skipped",
    reason="no judge endpoint is configured (EVALUATOR_JUDGE_BASE_URL, OPENAI_BASE_URL or "
    "OPENAI_API_KEY): the judges did not run",
)
NOT_FINISHED = JudgeStatus(status="skipped", reason="the target gave no answer to judge")
HOW_TO_ENABLE = (
    "the LLM judges did not run: no judge endpoint is configured. To enable them, set OPENAI_API_KEY "
    "(OpenAI), or EVALUATOR_JUDGE_BASE_URL for any OpenAI-compatible server, e.g. Ollama "
    "http://localhost:11434/v1, vLLM http://localhost:8000/v1 or llama.cpp's llama-server "
    "http://localhost:8080/v1 (plus EVALUATOR_JUDGE_API_KEY if it needs one), and name the model in "
    "evaluator.toml: [judge] model = ..."
)
Notice = Callable[[str, str], None]
AGENT_JUDGE = "agent_judge"  # judge.AgentJudge.key: its module is imported only for a result it judged


def judge_metrics(metrics: MetricSet) -> tuple[JudgeMetric, ...]:
    """The judge-stage metrics of a set (each implements judge.JudgeMetric)."""
    return tuple(m for m in metrics.judges if isinstance(m, JudgeMetric))


class JudgePlan:
    """The judge model of one run (None: the judges do not run) and the status of results they do not
    judge; the judges are the judge-stage metrics of `metrics` (the built-in ones of `config` by
    default). The plan owns a client it made, and closes it."""

    def __init__(
        self,
        config: Config,
        *,
        no_judge: bool = False,
        model: JudgeModel | None = None,
        env: Mapping[str, str] | None = None,
        metrics: MetricSet | None = None,
    ) -> None:
        self._config = config
        self.metrics = judge_metrics(metrics or builtin_metrics(config))
        self._owned: OpenAIJudgeModel | None = None
        self.model: JudgeModel | None = None
        self.unjudged = NO_JUDGE if no_judge else NOT_FINISHED
        if no_judge:
            return
        if model is not None:
            self.model = model
            return
        endpoint = config.judge_endpoint(env)
        if endpoint is None:
            self.unjudged = NO_ENDPOINT
            return
        from evaluator.judge import OpenAIJudgeModel  # here: `openai` loads only when a judge is asked

        self._owned = OpenAIJudgeModel(endpoint, timeout=config.settings.judge.timeout_seconds)
        self.model = self._owned

    def skip_reason(self, scenarios: Sequence[Scenario], notice: Notice) -> JudgeStatus | None:
        """Why the judges do not run for these scenarios (how to enable them is said once), or None."""
        if not any(m.applies(s) for s in scenarios for m in self.metrics):
            return NOTHING_TO_JUDGE if self.model is not None else self.unjudged
        if self.model is None:
            if self.unjudged is NO_ENDPOINT:
                notice("note", HOW_TO_ENABLE)
            return self.unjudged
        return None

    def judges(
        self,
        scenarios: Sequence[Scenario],
        *,
        library: PromptLibrary,
        prompts: PromptSource,
        tracer: JudgeTracer,
        pins: Mapping[str, int],
        cache: VerdictCache | None,
        use_cache: bool = True,
        notice: Notice = lambda kind, message: None,
    ) -> Judges | None:
        """The judges for these scenarios, or None when they do not run (`unjudged` then says why)."""
        skip = self.skip_reason(scenarios, notice)
        if skip is not None or self.model is None:
            self.unjudged = skip or self.unjudged
            return None
        settings = JudgeSettings.from_config(self._config.settings.judge, use_cache=use_cache)
        check_judge_prompts(scenarios, self.metrics, library, pins)
        return Judges(
            metrics=self.metrics,
            model=self.model,
            prompts=prompts,
            settings=settings,
            pins=pins,
            cache=cache,
            tracer=tracer,
            retry=RetryPolicy(max_attempts=self._config.settings.judge.max_attempts),
            on_notice=notice,
        )

    @property
    def prices(self) -> tuple[float | None, float | None]:
        judge = self._config.settings.judge
        return judge.input_price_per_million_tokens, judge.output_price_per_million_tokens

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()


def check_judge_prompts(
    scenarios: Sequence[Scenario],
    judges: Sequence[JudgeMetric],
    library: PromptLibrary,
    pins: Mapping[str, int],
) -> None:
    """Every judge prompt version these scenarios need exists (PromptError names the file and fix): a
    `--prompt` pin first, else the version or label the judge asks for."""
    for scenario in scenarios:
        for judge in judges:
            if not judge.applies(scenario):
                continue
            ref = judge.prompt(scenario)
            if ref.name in pins:
                library.get(ref.name, version=pins[ref.name])
            else:
                library.get(ref.name, version=ref.version, label=ref.label)


_A_DIALOGUE = Scenario.model_validate({"id": "a-dialogue", "turns": [{"user": "?"}]})
"""What a judge asks for a dialogue's turns, whether or not the run has dialogues (its prompt is a judge
prompt all the same, never an agent's)."""


def judge_prompt_names(metrics: MetricSet, scenarios: Sequence[LoadedScenario]) -> set[str]:
    """The prompts the judges may use on these scenarios: the configured ones (a dialogue turn's too)
    and the scenarios' own."""
    judges = judge_metrics(metrics)
    probes = [_A_DIALOGUE, *(s.scenario for s in scenarios)]
    return {j.prompt_name for j in judges} | {j.prompt(s).name for j in judges for s in probes}


def judge_result(
    config: Config,
    scenario: Scenario,
    result: ScenarioResult,
    trace: Trace,
    *,
    connection: LangfuseConnection | None = None,
    no_judge: bool = False,
    no_cache: bool = False,
    model: JudgeModel | None = None,
    run_id: str | None = None,
    notice: Notice = lambda kind, message: None,
    metrics: MetricSet | None = None,
) -> ScenarioResult:
    """One result judged outside a run (`evaluator validate`), with `judges_outside_a_run`."""
    with judges_outside_a_run(
        config,
        [scenario],
        metrics=metrics or result.metrics,
        connection=connection,
        no_judge=no_judge,
        no_cache=no_cache,
        model=model,
        notice=notice,
    ) as (judges, unjudged):
        if judges is None:
            return replace(result, judge_status=unjudged or NOT_FINISHED)
        return judged_result(judges, scenario, result, trace, run_id=run_id or validate_run_id())


@contextmanager
def judges_outside_a_run(
    config: Config,
    scenarios: Sequence[Scenario],
    *,
    metrics: MetricSet,
    connection: LangfuseConnection | None,
    no_judge: bool,
    no_cache: bool,
    model: JudgeModel | None,
    notice: Notice,
) -> Iterator[tuple[Judges | None, JudgeStatus | None]]:
    """The judges of `metrics` as `evaluator validate` sets them up: judge prompts from Langfuse when
    connected (else the files), the judge traces in that project (else in-process only), the store's
    verdict cache (unless `no_cache`); or None and why they do not run. Closed on exit (the model, the
    store: a cache that cannot be written is a warning, the judged result stands)."""
    plan = JudgePlan(config, no_judge=no_judge, model=model, metrics=metrics)
    skip = plan.skip_reason(scenarios, notice)
    if skip is not None:
        plan.close()
        yield None, skip
        return
    library = PromptLibrary.of_project(config.prompts_dir)
    tracing = connection.tracing if connection is not None else Tracing.embedded()
    prompts: PromptSource = library
    if connection is not None:
        prompts = ManagedPrompts(
            library,
            connection.prompts.fetch_prompt,
            lambda ref, exc: notice("warning", f"{exc}. Using the local file {ref} instead."),
        )
    store = Store(config.store_path)
    try:
        judges = plan.judges(
            scenarios,
            library=library,
            prompts=prompts,
            tracer=JudgeTracing(tracing, prices=plan.prices),
            pins={},
            cache=store,
            use_cache=not no_cache,
            notice=notice,
        )
        yield judges, None if judges is not None else plan.unjudged
    finally:
        plan.close()
        try:
            store.close()
        except StoreError as exc:  # the verdicts were not cached; the judged result stands
            notice("warning", f"the judges' verdicts were not kept in the cache: {exc}")
        finally:
            if connection is None:
                tracing.shutdown()


def judged_result(
    judges: Judges,
    scenario: Scenario,
    result: ScenarioResult,
    trace: Trace,
    *,
    run_id: str,
    history: Sequence[Mapping[str, str]] | None = None,
    decided: Decided | None = None,
) -> ScenarioResult:
    """The result with the judges' verdicts (`history`: the conversation before a dialogue's turn;
    `decided`: filled in as each judgement ends, see `partly_judged_result`); never raises: an exception
    inside the judges is an evaluator error, logged with its traceback and kept in the result, the
    judges *unscored* and the workflow verdicts standing."""
    try:
        outcome = judges.judge(
            scenario, result.output, trace, run_id=run_id, history=history, decided=decided
        )
    except Exception as exc:  # noqa: BLE001 - an evaluator bug in the judges: the verdicts stand
        return _judges_failed(result, exc)
    return _with_outcome(result, outcome)


async def ajudged_result(
    judges: Judges,
    scenario: Scenario,
    result: ScenarioResult,
    trace: Trace,
    *,
    run_id: str,
    history: Sequence[Mapping[str, str]] | None = None,
    decided: Decided | None = None,
) -> ScenarioResult:
    """`judged_result`, on the running event loop (`Judges.ajudge`)."""
    try:
        outcome = await judges.ajudge(
            scenario, result.output, trace, run_id=run_id, history=history, decided=decided
        )
    except Exception as exc:  # noqa: BLE001 - an evaluator bug in the judges: the verdicts stand
        return _judges_failed(result, exc)
    return _with_outcome(result, outcome)


def partly_judged_result(
    judges: Judges, scenario: Scenario, result: ScenarioResult, decided: Decided, reason: str
) -> ScenarioResult | None:
    """The result with the verdicts of the judgements that ended before the run stopped (`decided`, as
    `judged_result` filled it; a per-agent judge's, of the agents judged): made and paid for, they are
    kept, and every other judge (or agent) is *unscored* with `reason`. None when no judgement had
    ended. Never raises, as `judged_result`: a judge that fails to combine its answers is an evaluator
    error."""
    try:
        outcome = judges.interrupted(scenario, decided, reason)
    except Exception as exc:  # noqa: BLE001 - an evaluator bug in a judge: the verdicts stand
        return _judges_failed(result, exc)
    return None if outcome is None else _with_outcome(result, outcome)


def _with_outcome(result: ScenarioResult, outcome: JudgeOutcome) -> ScenarioResult:
    """The result with the judges' verdicts, and the per-agent judge's values in its `per_agent`."""
    verdicts = result.verdicts
    if AGENT_JUDGE in outcome.judged:
        from evaluator.judge import with_agent_judgement  # here: see AGENT_JUDGE

        verdicts = with_agent_judgement(verdicts, outcome.judged)
    return replace(
        result,
        verdicts=verdicts,
        judged=outcome.judged,
        judge_detail=outcome.detail,
        judge_status=outcome.status,
    )


def _judges_failed(result: ScenarioResult, exc: Exception) -> ScenarioResult:
    _log.error(
        "evaluator error in the judges of scenario %s (a bug in the evaluator; the workflow "
        "verdicts stand, the judges are unscored)",
        result.scenario_id,
        exc_info=exc,
    )
    failure = EvaluatorFailure.of(exc)
    reason = f"evaluator error in the judges: {failure.type}: {failure.message}"
    return replace(
        result,
        judge_status=JudgeStatus(status="unscored", reason=reason),
        judge_detail={"evaluator_error": failure.to_json()},
    )


def validate_run_id() -> str:
    """The run id of judgements made outside a run (`evaluator validate`)."""
    return f"validate-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
