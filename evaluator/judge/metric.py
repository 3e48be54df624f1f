"""What makes a metric a judge: it runs in the judge stage (`stage = "judge"`), asks its prompt through
the shared `JudgeRuntime` (client, retry policy and limiter, verdict cache, judge traces: one per run),
and says how each judgement went (`Judgement`). A judge owns its prompt name, its score definitions and
its figures (judge/quality.py, judge/correctness.py); the runtime knows none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, runtime_checkable

from evaluator.judge.replies import Reply
from evaluator.judge.verdicts import Judgement
from evaluator.metrics import Metric, MetricContext, Verdict
from evaluator.scenarios import Scenario

__all__ = ["JudgeAsk", "JudgeMetric", "JudgeRuntime", "PromptRef", "ask_each", "judge_of"]


@dataclass(frozen=True, kw_only=True)
class PromptRef:
    """The prompt a judgement asks: by name, and a version or label (None: the production one). A
    `--prompt` pin of the same name wins over both."""

    name: str
    version: int | None = None
    label: str | None = None


@dataclass(frozen=True, kw_only=True)
class JudgeAsk(Generic[Reply]):
    """One request a judge makes, built without the runtime: everything `JudgeRuntime.ask` takes
    besides the context and run id. A judge that makes several (the per-agent judge: one per agent)
    lists them, and combines the answers in the same order."""

    judge: str  # the judgement's name (its trace's seed: distinct for each request of one result)
    prompt: PromptRef
    variables: Mapping[str, str]
    reply_type: type[Reply]


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


def ask_each(
    runtime: JudgeRuntime, context: MetricContext, run_id: str, asks: Sequence[JudgeAsk[Reply]]
) -> list[tuple[Reply | None, Judgement]]:
    """Each request asked through `runtime`, in order: the answers a judge's `combine` reads."""
    return [
        runtime.ask(
            ask.judge,
            context,
            run_id=run_id,
            prompt=ask.prompt,
            variables=ask.variables,
            reply_type=ask.reply_type,
        )
        for ask in asks
    ]


def judge_of(score: Mapping[str, Any]) -> dict[str, Any]:
    """The judge prompt and model a score's `judge` metadata names, for a result rebuilt from scores."""
    judge = (score.get("metadata") or {}).get("judge") or {}
    return {"prompt": judge.get("prompt"), "model": judge.get("model")} if isinstance(judge, Mapping) else {}
