"""`Judges`: the judge runtime, running the judge-stage metrics (judge/quality.py, judge/correctness.py, or
any `JudgeMetric`) on one scenario's answer at a time.

Every model call goes through the one retry policy and its shared limiter. Structured output is asked
for with the prompt's `json_schema` (header `config`) until the endpoint refuses it, then plain JSON for
the rest of the run; likewise a `temperature` the endpoint refuses (OpenAI's reasoning models) is left
out, and a `max_tokens` it refuses sent as `max_completion_tokens`, for the rest of the run. A reply
that is not valid gets one repair request; then the judgement is *unscored*, with the reason, the
messages and the raw reply kept, never a 0 and never an exception.
A scored judgement is cached (prompt version, model, hash of the exact messages) and not paid again;
once a reply says the endpoint serves another model for the configured name than the one a cached
verdict came from, that verdict is asked again (see `_cached`).

`judge` asks in the calling thread; `ajudge` on the running event loop, awaiting the model when it can
be awaited (`AsyncJudgeModel`) and its judges say what they ask before asking (`PlannedJudgeMetric`),
else in a thread. Both go through the same conversation (`_Conversation.steps`), cache and give-up rule.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import Any, Generic, cast

from evaluator.config import DEFAULT_MISS_PHRASES, JudgeConfig
from evaluator.errors import (
    EvaluatorError,
    JudgeUnavailableError,
    ParameterRejectedError,
    PromptError,
    ResponseFormatRejectedError,
)
from evaluator.judge.cache import CacheKey, VerdictCache
from evaluator.judge.correctness import CorrectnessJudge
from evaluator.judge.metric import Answer, Ask, JudgeMetric, PlannedJudgeMetric, PromptRef, ask_each
from evaluator.judge.model import AsyncJudgeModel, JudgeModel, ModelReply, TokenUsage, added
from evaluator.judge.quality import QualityJudge
from evaluator.judge.render import untrusted
from evaluator.judge.replies import Reply, read_reply, repair_request, without_reasoning
from evaluator.judge.retry import RetryPolicy
from evaluator.judge.tracing import NO_TRACING, GenerationRecord, JudgementTrace, JudgeTracer
from evaluator.judge.verdicts import Judgement
from evaluator.metrics import JudgeStatus, MetricContext, Verdict
from evaluator.prompts import ChatMessage, Prompt, PromptSource
from evaluator.scenarios import Scenario
from evaluator.trace import Trace

__all__ = ["NOTHING_TO_JUDGE", "Decided", "JudgeOutcome", "JudgeSettings", "Judges", "overall_status"]

Notice = Callable[[str, str], None]
NOTHING_TO_JUDGE = JudgeStatus(
    status="skipped", reason="the scenario gives no answer criteria and no ground truth: nothing to judge"
)


@dataclass(frozen=True, kw_only=True)
class JudgeSettings:
    model: str = "gpt-4o-mini"
    timeout_seconds: float = 60.0
    source_budget_chars: int = 12_000
    miss_phrases: tuple[str, ...] = DEFAULT_MISS_PHRASES
    quality_prompt: str = "evaluation/quality"
    correctness_prompt: str = "evaluation/correctness"
    use_cache: bool = True

    @classmethod
    def from_config(cls, config: JudgeConfig, *, use_cache: bool = True) -> JudgeSettings:
        return cls(
            model=config.model,
            timeout_seconds=config.timeout_seconds,
            source_budget_chars=config.source_budget_chars,
            miss_phrases=config.miss_phrases,
            quality_prompt=config.quality_prompt,
            correctness_prompt=config.correctness_prompt,
            use_cache=use_cache,
        )

    def judge_metrics(self) -> tuple[QualityJudge, CorrectnessJudge]:
        """The two built-in judges with these settings' prompts, budget and miss phrases."""
        return (
            QualityJudge(prompt=self.quality_prompt, source_budget_chars=self.source_budget_chars),
            CorrectnessJudge(prompt=self.correctness_prompt, miss_phrases=self.miss_phrases),
        )


@dataclass(frozen=True, kw_only=True)
class JudgeOutcome:
    """The judges' verdicts on one answer (by result field), how each judgement went, and the status."""

    judged: dict[str, Verdict]
    judgements: dict[str, Judgement]
    status: JudgeStatus

    @property
    def detail(self) -> dict[str, dict[str, Any]]:
        return {key: judgement.to_json() for key, judgement in self.judgements.items()}


def _outcome(decided: Mapping[str, tuple[Verdict | None, Judgement]]) -> JudgeOutcome:
    """The judges' outcome from each judge's (verdict, judgement), by key."""
    judged = {key: verdict for key, (verdict, _) in decided.items() if verdict is not None}
    judgements = {key: judgement for key, (_, judgement) in decided.items()}
    return JudgeOutcome(judged=judged, judgements=judgements, status=overall_status(judgements))


def overall_status(judgements: Mapping[str, Judgement]) -> JudgeStatus:
    if not judgements:
        return NOTHING_TO_JUDGE
    unscored = [j for j in judgements.values() if j.status == "unscored"]
    if unscored:
        return JudgeStatus(status="unscored", reason="; ".join(f"{j.judge}: {j.reason}" for j in unscored))
    return JudgeStatus(status="scored", reason="")


def _context(
    scenario: Scenario, answer: object, trace: Trace, history: Sequence[Mapping[str, str]] | None
) -> MetricContext:
    return MetricContext(
        scenario=scenario, trace=trace, answer=answer, history=None if history is None else tuple(history)
    )


@dataclass(frozen=True, kw_only=True)
class _Asking:
    """A planned judge under way on one answer: what it asks, and the answers it has had so far (one
    per ask, in order, each appended as it ends)."""

    metric: PlannedJudgeMetric
    context: MetricContext
    asks: Sequence[Ask]
    answers: list[Answer] = field(default_factory=list)

    def so_far(self, reason: str) -> tuple[Verdict | None, Judgement] | None:
        """Its verdict of the answers it has had, each ask not answered yet *unscored* with `reason`
        (the per-agent judge: the agents judged keep their verdicts); None when it has had none."""
        answers = list(self.answers)  # one copy, taken at once: the ask under way may still end
        if not answers:
            return None
        unanswered = [
            (None, Judgement(judge=ask.judge, status="unscored", reason=reason, decided_by="none"))
            for ask in self.asks[len(answers) :]
        ]
        return self.metric.combine(self.context, [*answers, *unanswered])


@dataclass(kw_only=True)
class Decided:
    """The judgements of one answer, filled in as each ends (see `Judges.ajudge`): `ended`, each
    ended judge's (verdict, judgement) by key; `asking`, each planned judge under way with the answers
    it has had (the per-agent judge asks once per agent). What was judged before the run stopped is
    kept (`Judges.interrupted`)."""

    ended: dict[str, tuple[Verdict | None, Judgement]] = field(default_factory=dict)
    asking: dict[str, _Asking] = field(default_factory=dict)

    def so_far(self, metric: JudgeMetric, reason: str) -> tuple[Verdict | None, Judgement] | None:
        """What `metric` had decided when the run stopped: its judgement if it ended, else the verdict
        of the answers it had had (see `_Asking.so_far`); None when nothing."""
        ended = self.ended.get(metric.key)
        if ended is not None:
            return ended
        asking = self.asking.get(metric.key)
        return asking.so_far(reason) if asking is not None else None


@dataclass(frozen=True, kw_only=True)
class _Task(Generic[Reply]):
    """One judgement to make: who asks, with which prompt and inputs, expecting which reply."""

    judge: str
    scenario_id: str
    run_id: str
    prompt: Prompt
    messages: list[ChatMessage]  # the prompt compiled with the judged content
    reply_type: type[Reply]


@dataclass(frozen=True, kw_only=True)
class _Opening:
    """A judgement about to ask the model: how it is named, traced and cached."""

    base: Judgement
    key: CacheKey | None
    trace_names: Mapping[str, Any]


_GIVE_UP_AFTER = 3  # judgements in a row whose endpoint failed, before the run stops asking it


class Judges:
    """The judge runtime of a run: the judge-stage metrics (`metrics`: by default the two built-in
    judges of `settings`) sharing one model client, one retry policy (and its limiter), one verdict
    cache and one tracer. Each judge asks through `ask`."""

    def __init__(
        self,
        *,
        model: JudgeModel,
        prompts: PromptSource,
        settings: JudgeSettings | None = None,
        pins: Mapping[str, int] | None = None,
        cache: VerdictCache | None = None,
        tracer: JudgeTracer = NO_TRACING,
        retry: RetryPolicy | None = None,
        on_notice: Notice = lambda kind, message: None,
        metrics: Sequence[JudgeMetric] | None = None,
    ) -> None:
        self.model = model
        self.settings = settings or JudgeSettings()
        self.metrics: tuple[JudgeMetric, ...] = (
            tuple(metrics) if metrics is not None else self.settings.judge_metrics()
        )
        self._prompts = prompts
        self._pins = dict(pins or {})
        self._cache = cache if self.settings.use_cache else None
        self._tracer = tracer
        self.retry = retry or RetryPolicy()
        self._notice = on_notice
        self._structured = True  # until the endpoint refuses response_format, for the whole run
        self._refused: frozenset[str] = frozenset()  # parameters the endpoint refused: see sent_parameters
        self._failed_in_a_row = 0  # judgements whose endpoint failed, since the last reply
        self._given_up: str | None = None  # why the endpoint is not asked any more, for the whole run
        self._served: str | None = None  # the model the endpoint said it served, at its latest reply
        self._said_retrying = False  # the run has said that a request failed and is tried again
        self._asking: set[asyncio.Task[Any]] = set()  # judgements awaiting the endpoint now (`_asked`)
        self._cut_short: set[asyncio.Task[Any]] = set()  # ... of them, cancelled as the run gave up
        self._lock = threading.Lock()
        self._resolved: dict[tuple[str, int | None, str | None], Prompt] = {}  # see _prompt
        self._requests: dict[int, _RequestShape] = {}  # by id() of a resolved prompt: see request_shape
        # checked once: a runtime protocol check walks every member
        self._planned = {id(m): isinstance(m, PlannedJudgeMetric) for m in self.metrics}
        self._async_model = model if isinstance(model, AsyncJudgeModel) else None

    @property
    def awaitable(self) -> bool:
        """Whether `ajudge` asks on the event loop itself (else each request goes to a thread)."""
        return self._async_model is not None

    async def aclose(self) -> None:
        """Close what the model opened on the running loop (its async client)."""
        if self._async_model is not None:
            await self._async_model.aclose()

    def applies(self, scenario: Scenario) -> bool:
        """Whether any of the judges applies to the scenario."""
        return any(metric.applies(scenario) for metric in self.metrics)

    def judge(
        self,
        scenario: Scenario,
        answer: object,
        trace: Trace,
        *,
        run_id: str,
        history: Sequence[Mapping[str, str]] | None = None,
        decided: Decided | None = None,
    ) -> JudgeOutcome:
        """Every judge the scenario asks for, on `answer` (with the tool outputs of `trace`), in order;
        `history`: the conversation before it, when the answer is a dialogue's turn. Each judgement is
        put in `decided` as it ends: what was judged before the run stopped is kept (`interrupted`)."""
        context = _context(scenario, answer, trace, history)
        decided = Decided() if decided is None else decided
        for metric in self.metrics:
            if metric.applies(scenario):
                decided.ended[metric.key] = self._judge_one(metric, context, run_id, decided)
        return _outcome(decided.ended)

    async def ajudge(
        self,
        scenario: Scenario,
        answer: object,
        trace: Trace,
        *,
        run_id: str,
        history: Sequence[Mapping[str, str]] | None = None,
        decided: Decided | None = None,
    ) -> JudgeOutcome:
        """`judge`, on the running event loop. A judge that does not say what it asks
        (not a `PlannedJudgeMetric`) is run in a thread."""
        context = _context(scenario, answer, trace, history)
        decided = Decided() if decided is None else decided
        for metric in self.metrics:
            if metric.applies(scenario):
                decided.ended[metric.key] = await self._ajudge_one(metric, context, run_id, decided)
        return _outcome(decided.ended)

    def interrupted(self, scenario: Scenario, decided: Decided, reason: str) -> JudgeOutcome | None:
        """The outcome of the judgements of `scenario` that ended before the run stopped (`decided`, as
        `judge` or `ajudge` filled it), every other judge it asks for *unscored* with `reason`; None when
        none had ended. A planned judge under way keeps the answers it had (the per-agent judge: each
        agent judged keeps its verdict, each other is unscored with `reason`). A judgement ending after
        this is not in it (its verdict is cached all the same)."""
        applying = [metric for metric in self.metrics if metric.applies(scenario)]
        ended = {m.key: found for m in applying if (found := decided.so_far(m, reason)) is not None}
        if not ended:
            return None
        for metric in applying:
            if metric.key not in ended:
                unfinished = Judgement(judge=metric.key, status="unscored", reason=reason, decided_by="none")
                ended[metric.key] = (None, unfinished)
        return _outcome(ended)

    def _judge_one(
        self, metric: JudgeMetric, context: MetricContext, run_id: str, decided: Decided
    ) -> tuple[Verdict | None, Judgement]:
        """One judge's verdict; a planned judge's answers are put in `decided` as each ends."""
        if not self._planned[id(metric)]:
            return metric.judge(context, self, run_id)
        asking = self._asking_in(decided, cast(PlannedJudgeMetric, metric), context)
        return ask_each(asking.metric, context, self, run_id, asks=asking.asks, answers=asking.answers)

    async def _ajudge_one(
        self, metric: JudgeMetric, context: MetricContext, run_id: str, decided: Decided
    ) -> tuple[Verdict | None, Judgement]:
        """`_judge_one`, on the running loop (a judge that is not planned, in a thread)."""
        if not self._planned[id(metric)]:
            return await asyncio.to_thread(metric.judge, context, self, run_id)
        asking = self._asking_in(decided, cast(PlannedJudgeMetric, metric), context)
        for ask in asking.asks:
            asking.answers.append(
                await self.aask(
                    ask.judge,
                    context,
                    run_id=run_id,
                    prompt=ask.prompt,
                    variables=ask.variables,
                    reply_type=ask.reply_type,
                )
            )
        return asking.metric.combine(context, asking.answers)

    @staticmethod
    def _asking_in(decided: Decided, metric: PlannedJudgeMetric, context: MetricContext) -> _Asking:
        """A planned judge starting on one answer, registered in `decided` before its first ask."""
        asking = _Asking(metric=metric, context=context, asks=tuple(metric.asks(context)))
        decided.asking[metric.key] = asking
        return asking

    # --- one judgement (the runtime every judge asks through) ----------------------------------------

    def ask(
        self,
        judge: str,
        context: MetricContext,
        *,
        run_id: str,
        prompt: PromptRef,
        variables: Mapping[str, str],
        reply_type: type[Reply],
    ) -> tuple[Reply | None, Judgement]:
        task = self._task(
            judge, context.scenario, run_id=run_id, ref=prompt, variables=variables, reply_type=reply_type
        )
        if isinstance(task, Judgement):
            return None, task
        return self._ask(task)

    async def aask(
        self,
        judge: str,
        context: MetricContext,
        *,
        run_id: str,
        prompt: PromptRef,
        variables: Mapping[str, str],
        reply_type: type[Reply],
    ) -> tuple[Reply | None, Judgement]:
        """`ask`, on the running event loop."""
        task = self._task(
            judge, context.scenario, run_id=run_id, ref=prompt, variables=variables, reply_type=reply_type
        )
        if isinstance(task, Judgement):
            return None, task
        return await self._aask(task)

    def _task(
        self,
        judge: str,
        scenario: Scenario,
        *,
        run_id: str,
        ref: PromptRef,
        variables: Mapping[str, str],
        reply_type: type[Reply],
    ) -> _Task[Reply] | Judgement:
        """The judgement to make, or an unscored one when its prompt cannot be had."""
        try:
            prompt = self._prompt(ref)
            messages = prompt.compile_messages(**variables)  # an unknown variable fails here
            _judged_apart(prompt, messages)
        except EvaluatorError as exc:
            return Judgement(judge=judge, status="unscored", reason=str(exc), model=self.settings.model)
        return _Task(
            judge=judge,
            scenario_id=scenario.id,
            run_id=run_id,
            prompt=prompt,
            messages=messages,
            reply_type=reply_type,
        )

    def _prompt(self, ref: PromptRef) -> Prompt:
        """`--prompt` pins first, then the version or label the judge asks for; else production.

        Resolved once per run and kept: every judgement of the run uses the same version (a label moved
        in Langfuse during the run does not split the run's verdicts between two versions), and a
        served prompt is not looked up again for every judgement. A prompt that cannot be had is not
        kept: the next judgement asks again."""
        version, label = (self._pins[ref.name], None) if ref.name in self._pins else (ref.version, ref.label)
        key = (ref.name, version, label)
        prompt = self._resolved.get(key)
        if prompt is None:
            prompt = self._prompts.get(ref.name, version=version, label=label)
            with self._lock:
                prompt = self._resolved.setdefault(key, prompt)
        return prompt

    def _ask(self, task: _Task[Reply]) -> tuple[Reply | None, Judgement]:
        opening = self._open(task)
        if not isinstance(opening, _Opening):
            return opening
        with self._tracer.judgement(**opening.trace_names) as trace:
            talk = _Conversation(self, task.prompt, trace)
            outcome = talk.verdict(task.messages, task.reply_type)
        return self._close(task, opening, talk, outcome)

    async def _aask(self, task: _Task[Reply]) -> tuple[Reply | None, Judgement]:
        """`_ask`, on the running loop; in a thread when the model cannot be awaited."""
        if not self.awaitable:
            return await asyncio.to_thread(self._ask, task)
        opening = self._open(task)
        if not isinstance(opening, _Opening):
            return opening
        with self._tracer.judgement(**opening.trace_names) as trace:
            talk = _Conversation(self, task.prompt, trace)
            outcome = await talk.averdict(task.messages, task.reply_type)
        return self._close(task, opening, talk, outcome)

    def _open(self, task: _Task[Reply]) -> _Opening | tuple[Reply | None, Judgement]:
        """What a judgement starts from, or its answer already: from the cache, or unscored when the
        endpoint has been given up on."""
        model = self.settings.model
        base = Judgement(judge=task.judge, status="scored", prompt=task.prompt, model=model)
        key = CacheKey.of(task.prompt, model, task.messages) if self._cache is not None else None
        cached = self._cached(key, task.reply_type) if key is not None else None
        if cached is not None:
            reply, entry = cached
            return reply, replace(
                base, decided_by="cache", model=entry.get("model") or model, trace_id=entry.get("trace_id")
            )
        if (given_up := self.given_up()) is not None:  # not asked: unscored, but not a failed request
            return None, replace(base, status="unscored", reason=given_up, messages=task.messages)
        names = {
            "run_id": task.run_id,
            "scenario_id": task.scenario_id,
            "judge": task.judge,
            "prompt": task.prompt,
        }
        return _Opening(base=base, key=key, trace_names=names)

    def _close(
        self, task: _Task[Reply], opening: _Opening, talk: _Conversation, outcome: Reply | str
    ) -> tuple[Reply | None, Judgement]:
        """The judgement of a finished conversation; a scored one is cached."""
        self._count_failure(talk.endpoint_failed, outcome)
        if talk.served_model:
            with self._lock:
                self._served = talk.served_model
        judgement = replace(
            opening.base,
            model=talk.served_model or self.settings.model,
            trace_id=talk.trace_id,
            calls=talk.calls,
            usage=talk.usage or TokenUsage(),
            usage_reported=talk.usage is not None or talk.calls == 0,
        )
        if isinstance(outcome, str):
            return None, replace(
                judgement,
                status="unscored",
                reason=outcome,
                failed=talk.failed,
                messages=talk.last_messages or task.messages,
                raw_reply=talk.last_reply,
            )
        if self._cache is not None and opening.key is not None:
            # a trace that was not exported is in no Langfuse: a run served this verdict links no trace
            trace_id = talk.trace_id if talk.trace_exported else None
            entry = {"reply": outcome.model_dump(), "model": judgement.model, "trace_id": trace_id}
            self._cache.keep_verdict(opening.key, entry)
        return outcome, judgement

    def _cached(self, key: CacheKey, reply_type: type[Reply]) -> tuple[Reply, Mapping[str, Any]] | None:
        """The cached verdict, unless the endpoint has said in this run that it now serves another model
        than the one that gave it (an alias such as `gpt-4o` moved to a newer snapshot, an Ollama tag
        pulled again under the same name is not seen). Before the run's first reply that is not known
        without a call, so the verdict is reused and its judgement names the model that gave it."""
        entry = self._cache.cached_verdict(key) if self._cache is not None else None
        if entry is None:
            return None
        with self._lock:
            served = self._served
        if served is not None and entry.get("model") not in (None, served):
            return None
        reply = read_reply_entry(entry, reply_type)
        return (reply, entry) if reply is not None else None

    def _count_failure(self, failed: bool, outcome: object) -> None:
        """After `_GIVE_UP_AFTER` judgements in a row whose endpoint itself failed (down, overloaded
        through every retry, wrong key or model; not a request it refused for its length or content),
        the rest of the run does not wait on it: each would cost every retry's timeout."""
        with self._lock:
            self._failed_in_a_row = self._failed_in_a_row + 1 if failed else 0
            if self._failed_in_a_row < _GIVE_UP_AFTER or self._given_up is not None:
                return
            self._given_up = (
                f"not asked: the judge endpoint failed {_GIVE_UP_AFTER} judgements in a row, so the "
                f"judges were not asked for the rest of the run (the last: {outcome}). Fix: check the "
                "endpoint, then run again (the verdicts already made are cached)"
            )
            asking = list(self._asking)
        self._notice("warning", self._given_up.removeprefix("not asked: "))
        for task in asking:  # each would wait out its timeout, for a reply that is not coming
            task.get_loop().call_soon_threadsafe(self._cut, task)

    def _cut(self, task: asyncio.Task[Any]) -> None:
        """On the task's loop: cancel its request, if it is still waiting for it (see `_asked`)."""
        with self._lock:
            waiting = task in self._asking
            if waiting:
                self._cut_short.add(task)
        if waiting:
            task.cancel()

    async def _asked(self, request: Awaitable[ModelReply]) -> ModelReply:
        """A request awaited on the run's loop. Should the run give up on the endpoint while it waits
        (`_count_failure`), it is cancelled at once, and ends as a request not retried would."""
        task = asyncio.current_task()
        if task is None:
            return await request
        with self._lock:
            self._asking.add(task)
        try:
            return await request
        except asyncio.CancelledError:
            with self._lock:
                cut = task in self._cut_short
                self._cut_short.discard(task)
            if not cut:
                raise
            task.uncancel()  # this cancellation is ours, and ends here
            given_up = self.given_up() or ""
            raise _GivenUpError(f"not retried: {given_up.removeprefix('not asked: ')}") from None
        finally:
            with self._lock:
                self._asking.discard(task)

    def retrying(self, exc: BaseException) -> None:
        """A failed request is to be tried again: said once a run, at once (a hung endpoint otherwise
        shows nothing for a whole retry cycle: minutes at the defaults). Not for a 429: waiting out a
        rate limit is the endpoint working as it should."""
        if isinstance(exc, JudgeUnavailableError) and exc.status == 429:
            return
        with self._lock:
            said, self._said_retrying = self._said_retrying, True
        if not said:
            self._notice(
                "warning",
                f"a judge request failed ({exc}); it is tried again, up to {self.retry.max_attempts} tries "
                f"in all, and after {_GIVE_UP_AFTER} judgements in a row with no reply the run stops "
                "asking the endpoint",
            )

    def given_up(self) -> str | None:
        """Why the run no longer asks the endpoint (None: it still does)."""
        with self._lock:
            return self._given_up

    # --- structured output, remembered for the run ---------------------------------------------------

    def request_shape(self, prompt: Prompt) -> _RequestShape:
        """What every request with `prompt` sends besides its messages: built once per resolved prompt
        version (see `_prompt`), not for every request."""
        shape = self._requests.get(id(prompt))
        if shape is None or shape.prompt is not prompt:
            shape = _RequestShape.of(prompt)
            with self._lock:
                self._requests[id(prompt)] = shape
        return shape

    def response_format(self, prompt: Prompt) -> dict[str, Any] | None:
        """The prompt's `json_schema` as `response_format`, until the endpoint refuses it (then None
        for the rest of the run). The same dict every time: the model copies it into its request."""
        with self._lock:
            structured = self._structured
        return self.request_shape(prompt).response_format if structured else None

    def structured_output_refused(self, exc: ResponseFormatRejectedError) -> None:
        with self._lock:
            first, self._structured = self._structured, False
        if first:
            self._notice(
                "warning",
                f"{exc}. The judges ask for plain JSON (and read it tolerantly) for the rest of this run.",
            )

    # --- request parameters the endpoint refused, remembered for the run ------------------------------

    def sent_parameters(self, parameters: Mapping[str, Any]) -> Mapping[str, Any]:
        """A prompt's `parameters` as they are sent: as they are, until the endpoint refuses one
        (`parameter_refused`); then, for the rest of the run, without a refused `temperature` (the
        model's default), and a refused `max_tokens` sent as `max_completion_tokens`."""
        with self._lock:
            refused = self._refused
        if refused.isdisjoint(parameters):
            return parameters
        sent = {key: value for key, value in parameters.items() if key not in refused}
        if "max_tokens" in refused and "max_tokens" in parameters:
            sent["max_completion_tokens"] = parameters["max_tokens"]
        return sent

    def parameter_refused(self, exc: ParameterRejectedError) -> None:
        with self._lock:
            first, self._refused = exc.param not in self._refused, self._refused | {exc.param}
        if first:
            self._notice("warning", f"{exc}. {_WITHOUT.get(exc.param, '')}".rstrip())


class _GivenUpError(JudgeUnavailableError):
    """No more requests to an endpoint the run gave up on (`Judges._count_failure`): not retried."""

    @property
    def retryable(self) -> bool:
        return False

    @property
    def about_the_endpoint(self) -> bool:
        return True


def _judged_apart(prompt: Prompt, messages: Sequence[ChatMessage]) -> None:
    """PromptError when what is judged would be sent in a system message, beside the instructions: a
    text prompt (compiled as one system message), or a chat prompt whose system message names a
    variable. Judged text (the answer, the sources, the input) belongs in a user message only."""
    templates = [prompt.text] if prompt.type == "text" else [m.content for m in prompt.messages]
    if any(m.role == "system" and m.content != t for m, t in zip(messages, templates, strict=True)):
        kind = "a text prompt, sent as one system message" if prompt.type == "text" else "a system message"
        raise PromptError.one(
            source=str(prompt.path or prompt.ref),
            field="type" if prompt.type == "text" else "messages",
            found=f"the judged text (answer, sources, input) would go into {kind}, beside the instructions",
            fix="write the judge prompt as type: chat, its instructions in the system message and its "
            "{{variables}} in a user message (as prompts/evaluation/quality/v1.prompt)",
        )


@dataclass(frozen=True, kw_only=True)
class _RequestShape:
    """A prompt version's request parameters (temperature, max_tokens) and structured-output format."""

    prompt: Prompt  # kept, so the id() it is found by stays this prompt's
    parameters: Mapping[str, Any]
    response_format: dict[str, Any] | None

    @classmethod
    def of(cls, prompt: Prompt) -> _RequestShape:
        config = prompt.config
        parameters: dict[str, Any] = {"temperature": float(config.get("temperature", 0.0))}
        if isinstance(config.get("max_tokens"), int):
            parameters["max_tokens"] = config["max_tokens"]
        schema = config.get("json_schema")
        response_format = (
            {"type": "json_schema", "json_schema": dict(schema)} if isinstance(schema, Mapping) else None
        )
        return cls(prompt=prompt, parameters=parameters, response_format=response_format)


# What the judges send instead of a parameter the endpoint refused, for the rest of the run.
_WITHOUT = {
    "temperature": (
        "The judges send no temperature for the rest of this run (the judge prompts' config asks for "
        "one): the model uses its own default, as OpenAI's reasoning models must, so its verdicts may "
        "vary more from run to run"
    ),
    "max_tokens": (
        "The judges send the judge prompts' max_tokens as max_completion_tokens for the rest of this "
        "run. On a reasoning model it also counts the tokens the model spends thinking: should replies "
        "be cut off at it, raise max_tokens in the judge prompt's config (prompts/evaluation/<judge>/"
        "vN.prompt) to a few thousand"
    ),
}


def read_reply_entry(entry: Mapping[str, Any], reply_type: type[Reply]) -> Reply | None:
    """A cached reply, if it still fits the reply model (a model change makes old entries misses)."""
    try:
        return reply_type.model_validate(entry.get("reply"))
    except ValueError:
        return None


def _cut_off(sent: Mapping[str, Any]) -> str:
    """Why a reply the endpoint stopped at its token limit is not read: what it holds is a draft."""
    limit = sent.get("max_tokens") or sent.get("max_completion_tokens")
    where = f"max_tokens = {limit} in the judge prompt's config" if limit else "the endpoint's token limit"
    if "max_completion_tokens" in sent:
        where += " (sent as max_completion_tokens, which counts the model's reasoning tokens too)"
    return (
        f"the reply was cut off at {where} before it ended (a reasoning model spends tokens thinking). "
        "Fix: raise max_tokens in the judge prompt's config, or use a model that writes less"
    )


# Why a reply the endpoint's content filter stopped is not read (nor repaired: it would be again).
_FILTERED = (
    'the endpoint\'s content filter stopped the reply (finish_reason "content_filter"): what it holds is '
    "not read as an answer. Fix: check the judge deployment's content filter (Azure OpenAI's, say) "
    "against the judged content, or use another judge model"
)


def _elsewhere(field: str) -> str:
    """Why a reply whose text came in a reasoning field is not read: thinking, or an answer misfiled."""
    return (
        f"the endpoint put its output in `{field}` with `content` empty (a reasoning parser on the judge "
        "model, such as vLLM's --reasoning-parser, or its thinking turned on): it is not read as an "
        "answer. Fix: turn reasoning off for the judge model, or use a model without it"
    )


@dataclass(frozen=True)
class _Request:
    """One request of a conversation (sent with its retries)."""

    messages: list[ChatMessage]
    parameters: Mapping[str, Any]


class _Conversation:
    """The model calls of one judgement: the request, and at most one repair request. `steps` says
    what to send and reads the replies; `verdict` sends in this thread, `averdict` on the event loop."""

    def __init__(self, judges: Judges, prompt: Prompt, trace: JudgementTrace) -> None:
        self._judges = judges
        self._prompt = prompt
        self._trace = trace
        self.trace_id = trace.trace_id
        self.calls = 0
        self.usage: TokenUsage | None = None  # what the endpoint reported (None: nothing)
        self.failed = False
        self.endpoint_failed = False  # the endpoint itself failed (not this request): see Judges
        self.served_model: str | None = None
        self.last_messages: list[ChatMessage] = []
        self.last_reply: str | None = None
        self.unrepairable = False  # cut off, or misfiled: a repair would end the same way
        self.sent: Mapping[str, Any] | None = None  # the parameters of the latest request sent

    @property
    def trace_exported(self) -> bool:
        """Whether the judgement's trace is in Langfuse or on its way (asked when the judgement has
        ended: a trace made too late to be stored with its result is not)."""
        return self._trace.exported

    def verdict(self, messages: list[ChatMessage], reply_type: type[Reply]) -> Reply | str:
        """The valid reply, or why there is none. The steps are closed on the way out, however it is
        left (see `averdict`)."""
        with closing(self.steps(messages, reply_type)) as steps:
            request = next(steps)
            while True:
                try:
                    reply: ModelReply | JudgeUnavailableError = self._request(request)
                except JudgeUnavailableError as exc:
                    reply = exc
                try:
                    request = (
                        steps.throw(reply) if isinstance(reply, JudgeUnavailableError) else steps.send(reply)
                    )
                except StopIteration as end:
                    return end.value  # type: ignore[no-any-return]

    async def averdict(self, messages: list[ChatMessage], reply_type: type[Reply]) -> Reply | str:
        """`verdict`, on the running event loop. Cancelled while a request is in flight (Ctrl-C), the
        steps are closed here, in this task: that ends the request's generation, whose span the steps
        made current in this task's context. Left to the garbage collector, they were closed later in
        whatever thread collected them, where OpenTelemetry could not detach that context ("Failed to
        detach context", a traceback per judgement in flight, some after the run's summary)."""
        with closing(self.steps(messages, reply_type)) as steps:
            request = next(steps)
            while True:
                try:
                    reply: ModelReply | JudgeUnavailableError = await self._arequest(request)
                except JudgeUnavailableError as exc:
                    reply = exc
                try:
                    request = (
                        steps.throw(reply) if isinstance(reply, JudgeUnavailableError) else steps.send(reply)
                    )
                except StopIteration as end:
                    return end.value  # type: ignore[no-any-return]

    def steps(
        self, messages: list[ChatMessage], reply_type: type[Reply]
    ) -> Generator[_Request, ModelReply, Reply | str]:
        """Yields each request to send; gets its reply, or the `JudgeUnavailableError` of no reply."""
        try:
            parsed = yield from self._send(messages, reply_type)
        except JudgeUnavailableError as exc:
            self.failed, self.endpoint_failed = True, exc.about_the_endpoint
            return f"no reply from the judge after {self.calls} request(s): {exc}"
        if not isinstance(parsed, str) or self.unrepairable:
            return parsed
        first = self.last_reply
        # The reply goes back to the judge, and the problem quotes it: either can echo the judged text,
        # so each is neutralised as that text was in the first request (`untrusted`). The reply goes
        # back without its reasoning (`<think>...`): a chat template drops an earlier turn's reasoning
        # by its tags, which `untrusted` breaks, and the repair needs only the answer.
        repair = [
            *messages,
            ChatMessage(role="assistant", content=untrusted(without_reasoning(first or ""))),
            ChatMessage(role="user", content=repair_request(untrusted(parsed), reply_type)),
        ]
        try:
            again = yield from self._send(repair, reply_type)
        except JudgeUnavailableError as exc:  # the reply that did not do stays the raw reply
            self.failed, self.last_messages, self.last_reply = True, messages, first
            self.endpoint_failed = exc.about_the_endpoint
            return f"the judge's reply was not valid ({parsed}), and the repair request got no reply: {exc}"
        if isinstance(again, str):
            return f"the judge's reply was not valid, even after one repair request: {again}"
        return again

    def _send(
        self, messages: list[ChatMessage], reply_type: type[Reply]
    ) -> Generator[_Request, ModelReply, Reply | str]:
        """One request (with its retries), in its own GENERATION; the reply read as `reply_type`."""
        self.last_messages, self.last_reply, self.sent = messages, None, None
        parameters = self._judges.request_shape(self._prompt).parameters
        opened = self._judges.sent_parameters(parameters)
        with self._trace.generation(
            name=self._prompt.name,
            messages=messages,
            model=self._judges.settings.model,
            parameters=opened,
        ) as generation:
            try:
                reply = yield _Request(messages, parameters)
            except JudgeUnavailableError as exc:
                self._record_sent(generation, opened)
                generation.failed(str(exc))
                raise
            sent = self._record_sent(generation, opened)
            generation.succeeded(output=reply.text, usage=reply.usage, model=reply.model)
            self.usage = added(self.usage, reply.usage)
            self.served_model, self.last_reply = reply.model, reply.text
            parsed = (
                _cut_off(sent)
                if reply.cut_off
                else _FILTERED
                if reply.filtered
                else _elsewhere(reply.elsewhere)
                if reply.elsewhere
                else read_reply(reply.text, reply_type)
            )
            self.unrepairable = reply.cut_off or reply.filtered or reply.elsewhere is not None
            if isinstance(parsed, str):
                generation.unusable(parsed)
        return parsed

    def _record_sent(self, generation: GenerationRecord, opened: Mapping[str, Any]) -> Mapping[str, Any]:
        """The parameters the request went out with in the end, on its generation when they are not
        those it opened with (the endpoint refused one meanwhile: see `_adapt`)."""
        sent = self.sent if self.sent is not None else opened
        if sent != opened:
            generation.parameters_sent(sent)
        return sent

    def _request(self, request: _Request) -> ModelReply:
        judges, refused = self._judges, set[str]()
        while True:
            try:
                return judges.retry.call(lambda: self._once(request), judges.retrying)
            except (ResponseFormatRejectedError, ParameterRejectedError) as exc:
                self._adapt(exc, refused)

    async def _arequest(self, request: _Request) -> ModelReply:
        judges, refused = self._judges, set[str]()
        while True:
            try:
                return await judges.retry.acall(lambda: self._aonce(request), judges.retrying)
            except (ResponseFormatRejectedError, ParameterRejectedError) as exc:
                self._adapt(exc, refused)

    def _adapt(self, exc: ResponseFormatRejectedError | ParameterRejectedError, refused: set[str]) -> None:
        """The endpoint refused structured output or a parameter: the request is sent again without it
        (and so is every request of the run after it: see `Judges`), once for each thing refused;
        refused again, the request ends with the error."""
        what = exc.param if isinstance(exc, ParameterRejectedError) else "response_format"
        if what in refused:
            raise exc
        refused.add(what)
        if isinstance(exc, ParameterRejectedError):
            self._judges.parameter_refused(exc)
        else:
            self._judges.structured_output_refused(exc)

    def _once(self, request: _Request) -> ModelReply:
        self._unless_given_up()
        self.calls += 1
        return self._judges.model.complete(request.messages, **self._options(request))

    async def _aonce(self, request: _Request) -> ModelReply:
        self._unless_given_up()
        self.calls += 1
        model = cast(AsyncJudgeModel, self._judges.model)  # _aask asks here only then: see awaitable
        return await self._judges._asked(model.acomplete(request.messages, **self._options(request)))

    def _unless_given_up(self) -> None:
        """A judgement in flight when the run gave up on the endpoint asks it no more: without this, a
        wave of judgements started while the first failures were being counted waited out every
        retry's timeout again (a hung endpoint cost two full retry cycles, not one)."""
        if self.calls and (given_up := self._judges.given_up()) is not None:
            raise _GivenUpError(f"not retried: {given_up.removeprefix('not asked: ')}")

    def _options(self, request: _Request) -> dict[str, Any]:
        """The model's arguments for `request`: structured output and the parameters as the endpoint
        takes them (see `Judges.response_format`, `Judges.sent_parameters`); `max_completion_tokens`
        only once it refused `max_tokens` (a model of your own may not know it)."""
        judges = self._judges
        self.sent = sent = judges.sent_parameters(request.parameters)
        options = {
            "model": judges.settings.model,
            "temperature": sent.get("temperature"),
            "response_format": judges.response_format(self._prompt),
            "timeout": judges.settings.timeout_seconds,
            "max_tokens": sent.get("max_tokens"),
        }
        if "max_completion_tokens" in sent:
            options["max_completion_tokens"] = sent["max_completion_tokens"]
        return options
