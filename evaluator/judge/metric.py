"""What makes a metric a judge: it runs in the judge stage (`stage = "judge"`), asks its prompt through
the shared `JudgeRuntime` (client, retry policy and limiter, verdict cache, judge traces: one per run),
and says how each judgement went (`Judgement`). A judge owns its prompt name, its score definitions and
its figures (judge/quality.py, judge/correctness.py); the runtime knows none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evaluator.judge.replies import JudgeReply, Reply
from evaluator.judge.verdicts import Judgement
from evaluator.metrics import Metric, MetricContext, Verdict
from evaluator.scenarios import Scenario

__all__ = [
    "Answer",
    "Ask",
    "JudgeMetric",
    "JudgeRuntime",
    "PlannedJudgeMetric",
    "PromptRef",
    "RuleJudge",
    "ask_each",
    "judge_of",
]


@dataclass(frozen=True, kw_only=True)
class PromptRef:
    """The prompt a judgement asks: by name, and a version or label (None: the production one). A
    `--prompt` pin of the same name wins over both."""

    name: str
    version: int | None = None
    label: str | None = None


@dataclass(frozen=True, kw_only=True)
class Ask:
    """One request a judge makes through the runtime: its prompt compiled with `variables`, the reply
    read as `reply_type`."""

    judge: str
    prompt: PromptRef
    variables: Mapping[str, str]
    reply_type: type[JudgeReply]


Answer = tuple[JudgeReply | None, Judgement]  # what the runtime made of one `Ask`


class JudgeRuntime(Protocol):
    """The shared machinery a judge asks through."""

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
        """The reply to `prompt` compiled with `variables` (None when it could not be had or read), and
        how the judgement went; never raises for the endpoint's failures."""
        ...


@runtime_checkable
class JudgeMetric(Metric, Protocol):
    """A judge-stage metric."""

    @property
    def prompt_name(self) -> str:
        """Its configured prompt."""
        ...

    def applies(self, scenario: Scenario) -> bool:
        """Whether the scenario asks for this judge."""
        ...

    def prompt(self, scenario: Scenario) -> PromptRef:
        """The prompt it would ask for this scenario."""
        ...

    def judge(
        self, context: MetricContext, runtime: JudgeRuntime, run_id: str
    ) -> tuple[Verdict | None, Judgement]:
        """Its verdict on the context's answer (None: unscored, the judgement says why)."""
        ...


@runtime_checkable
class PlannedJudgeMetric(JudgeMetric, Protocol):
    """A judge that says what it will ask before asking (`asks`), and makes its verdict of the answers
    (`combine`): the runtime can then ask on an event loop, not only in a thread (`Judges.ajudge`). Its
    `judge` is `ask_each`."""

    def asks(self, context: MetricContext) -> Sequence[Ask]:
        """What to ask, in order; none when the verdict needs no model (`combine` gets no answers)."""
        ...

    def combine(self, context: MetricContext, answers: Sequence[Answer]) -> tuple[Verdict | None, Judgement]:
        """The verdict of the answers to `asks`, in the same order."""
        ...


def ask_each(
    metric: PlannedJudgeMetric,
    context: MetricContext,
    runtime: JudgeRuntime,
    run_id: str,
    *,
    asks: Sequence[Ask] | None = None,
    answers: list[Answer] | None = None,
) -> tuple[Verdict | None, Judgement]:
    """A planned judge's `judge`: each of its asks (`asks`, default its own) through `runtime`, then its
    verdict. `answers`, when given, gets each answer as it ends (what was answered before a stop is
    kept: `Judges`)."""
    answers = [] if answers is None else answers
    for ask in metric.asks(context) if asks is None else asks:
        answers.append(
            runtime.ask(
                ask.judge,
                context,
                run_id=run_id,
                prompt=ask.prompt,
                variables=ask.variables,
                reply_type=ask.reply_type,
            )
        )
    return metric.combine(context, answers)


@runtime_checkable
class RuleJudge(Protocol):
    """A judge that decides some answers by rule, with no model (the correctness judge's miss and
    exact-match steps): the metrics stage asks it (results.evaluate), so those verdicts exist whether
    or not the judges run; a judge that runs later decides again, by the same rules first."""

    def decide_by_rule(self, context: MetricContext) -> tuple[Verdict | None, Judgement] | None:
        """(verdict, its judgement) when a rule decides; (None, a *skipped* judgement saying why)
        when only the model could; None when the judge does not apply to the scenario."""
        ...


def judge_of(score: Mapping[str, Any]) -> dict[str, Any]:
    """The judge prompt ({name, version}) and model a judge score's metadata names (`judge_prompt`,
    `judge_prompt_version`, `judge_model`: `Verdict.score_metadata`), for a result rebuilt from scores,
    so the report's per-judge-prompt trends are there too. (A `judge` mapping of `prompt` and `model`
    is read as well.)"""
    metadata = score.get("metadata") or {}
    judge = metadata.get("judge")
    if isinstance(judge, Mapping):
        return {"prompt": judge.get("prompt"), "model": judge.get("model")}
    name, version = metadata.get("judge_prompt"), metadata.get("judge_prompt_version")
    prompt = (
        {"name": name, "version": version} if isinstance(name, str) and isinstance(version, int) else None
    )
    model = metadata.get("judge_model")
    return {"prompt": prompt, "model": model if isinstance(model, str) else None}
