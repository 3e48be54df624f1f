"""Result values: one per scenario run, and the run around them. `to_json` gives DESIGN.md's shapes.

A result's verdicts are its inline metrics' verdicts by key (the rule checks: `workflow`, `trajectory`,
`answer`); the result passes when no verdict says it failed. `metrics` is the run's `MetricSet`: the
result object has one field per metric, in the set's order. Three ways a result has no verdicts: the
target raised or timed out (`status="error"`, `error` the message), or the evaluator failed around it
(`evaluator_error`, kept with its traceback: an evaluator bug, never the agent's failure).

The judge-stage metrics' verdicts (`quality`, `correctness`) are kept apart in `judged`: they inform and never
decide pass or fail. `judge_status` says whether they scored, and `judge_detail` (the result's `judge`
field) how each judgement went: its prompt version, model, judge trace, tokens, and for an unscored
one the reason, the messages sent and the raw reply.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# `ScenarioResult.dialogue`'s type, named through its package: results.dialogue is imported on first use
# (evaluator._lazy), and `typing.get_type_hints(ScenarioResult)` still finds it
import evaluator
from evaluator._secrets import redact
from evaluator.metrics import (
    AnswerCheck,
    AnswerContainsMetric,
    JudgeStatus,
    MetricSet,
    TrajectoryMetric,
    TrajectoryScore,
    Verdict,
    WorkflowValidator,
    WorkflowVerdict,
)
from evaluator.results.builtin import default_metrics
from evaluator.results.figures import agent_prompts
from evaluator.results.summary import judge_usage, run_summaries

__all__ = [
    "JUDGES_CUT_OFF",
    "JUDGES_INTERRUPTED",
    "LATEST",
    "PREVIOUS",
    "RUN_KEYWORDS",
    "EvaluatorFailure",
    "JudgeStatus",
    "PromptUse",
    "RunInfo",
    "ScenarioResult",
    "Status",
    "run_provenance",
    "run_to_json",
    "totals",
]

Status = Literal["passed", "failed", "error"]
__all__ += ["JudgeStatus"]  # defined with the metric shape; re-exported here, where results use it

# Why a finished scenario has no judge verdict in a run that stopped early: its judges had not begun
# (the summary counts these apart, since the judges were meant to run)
JUDGES_INTERRUPTED = JudgeStatus(status="skipped", reason="the run was interrupted before the judges ran")
JUDGES_CUT_OFF = JudgeStatus(status="skipped", reason="the run stopped early, before the judges could run")


@dataclass(frozen=True, kw_only=True)
class PromptUse:
    """A prompt version a run used; `source` "langfuse" means its generations link to that version."""

    version: int
    source: Literal["local", "langfuse"] = "local"

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "source": self.source}


@dataclass(frozen=True, kw_only=True)
class EvaluatorFailure:
    """An exception inside the evaluator (not the target) while handling one scenario."""

    type: str
    message: str
    traceback: str

    @classmethod
    def of(cls, exc: BaseException) -> EvaluatorFailure:
        return cls(
            type=type(exc).__name__,
            message=redact(str(exc)),
            traceback=redact("".join(traceback.format_exception(exc))),
        )

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


@dataclass(frozen=True, kw_only=True)
class ScenarioResult:
    scenario_id: str
    trace_id: str
    status: Status
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)  # by metric key, in the set's order
    judge_status: JudgeStatus
    judged: Mapping[str, Verdict] = field(default_factory=dict)  # the judge-stage verdicts, by key
    judge_detail: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # per judge, as JSON
    output: Any = None
    latency_ms: float | None = None
    error: str | None = None
    prompts: Mapping[str, PromptUse] = field(default_factory=dict)  # by prompt name
    finished_at: str = ""
    observation_count: int = 0  # in the trace the verdict was drawn from
    evaluator_error: EvaluatorFailure | None = None
    handoffs: tuple[Mapping[str, Any], ...] = ()  # agent transitions ({"from", "to", "via"}), call order
    warnings: tuple[str, ...] = ()  # what makes the verdict less certain, and how to fix it
    metrics: MetricSet = field(default_factory=default_metrics, compare=False, repr=False)
    dialogue: evaluator.results.DialogueOutcome | None = None  # a dialogue's turns and figures

    @property
    def workflow(self) -> WorkflowVerdict | None:
        verdict = self.verdicts.get(WorkflowValidator.key)
        return verdict if isinstance(verdict, WorkflowVerdict) else None

    @property
    def trajectory(self) -> TrajectoryScore | None:
        verdict = self.verdicts.get(TrajectoryMetric.key)
        return verdict if isinstance(verdict, TrajectoryScore) else None

    @property
    def answer(self) -> AnswerCheck | None:
        verdict = self.verdicts.get(AnswerContainsMetric.key)
        return verdict if isinstance(verdict, AnswerCheck) else None

    def problems(self) -> list[str]:
        """What went wrong, as short phrases: the error, or each verdict's problems."""
        if self.evaluator_error is not None:
            return [f"evaluator error: {self.evaluator_error.type}: {self.evaluator_error.message}"]
        if self.dialogue is not None:  # a dialogue: each failing turn named, then its goal
            return self.dialogue.problems()
        if self.error:
            return [self.error]
        return [problem for verdict in self.verdicts.values() for problem in verdict.problems()]

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "scenario_id": self.scenario_id,
            "trace_id": self.trace_id,
            "status": self.status,
        }
        if self.dialogue is not None:
            document |= self.dialogue.to_json()
        for index, metric in enumerate(self.metrics):
            found = (self.judged if metric.stage == "judge" else self.verdicts).get(metric.key)
            document[metric.key] = found.to_json() if found is not None else None
            if index == 0:  # DESIGN.md's result object: hand-offs right after the first field (workflow)
                document["handoffs"] = [dict(h) for h in self.handoffs]
        document |= {
            "judge_status": self.judge_status.to_json(),
            "warnings": list(self.warnings),
            "output": self.output,
            "prompts": {name: use.to_json() for name, use in self.prompts.items()},
            "observations": self.observation_count,
            "latency_ms": self.latency_ms,
            "error": self.error,
        }
        if self.judge_detail:
            document["judge"] = {key: dict(detail) for key, detail in self.judge_detail.items()}
        if self.evaluator_error is not None:
            document["evaluator_error"] = self.evaluator_error.to_json()
        return document


# How commands name a stored run by its place (`compare latest previous`): no run may be named so.
LATEST, PREVIOUS = "latest", "previous"
RUN_KEYWORDS = (LATEST, PREVIOUS)


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    id: str
    name: str
    started_at: str
    finished_at: str | None = None
    prompt_pins: Mapping[str, int] = field(default_factory=dict)
    interrupted: bool = False  # Ctrl-C or a signal: the scenarios not finished by then have no result
    signal: str | None = None  # the signal that stopped the run ("SIGINT", "SIGTERM")
    selected: int = 0  # scenarios the run was to run (those stopped early have no result)
    started: int = 0  # scenarios whose target was called
    cut_off: str | None = None  # why scenarios were left unstarted (every target slot hung)
    targets: tuple[str, ...] = ()  # the targets the run's scenarios ran against
    git: Mapping[str, Any] | None = None  # {"commit": sha, "dirty": bool}; None outside a git checkout
    models: Mapping[str, str | None] = field(default_factory=dict)  # {"agents": ..., "judge": ...}


def totals(results: Sequence[ScenarioResult]) -> dict[str, int]:
    counts = {"scenarios": len(results), "passed": 0, "failed": 0, "error": 0}
    for result in results:
        counts[result.status] += 1
    return counts


def run_provenance(
    run: RunInfo, documents: Sequence[Mapping[str, Any]], metrics: MetricSet | None = None
) -> dict[str, Any]:
    """What a run remembers beyond its id and times (additive keys of the `run` header and of the
    store's run info): targets, git, models, the agent and judge prompt versions its results used,
    and the run-level figures of `metrics` (the built-in ones by default)."""
    metrics = metrics or default_metrics()
    agents = sorted({use for doc in documents for use in agent_prompts(doc)})
    judges = sorted({use for doc in documents for use in metrics.judge_prompts(doc)})
    models = dict(run.models)
    seen = sorted({model for doc in documents for model in metrics.judge_models(doc)})
    if seen:
        models["judge"] = ", ".join(seen)
    return {
        "targets": list(run.targets),
        "git": dict(run.git) if run.git is not None else None,
        "models": models,
        "agent_prompts": [{"name": n, "version": v, "source": src} for n, v, src in agents],
        "judge_prompts": [{"name": n, "version": v} for n, v in judges],
        "metrics": metrics.summarize(documents),
    }


def _dialogue_figures(summaries: Mapping[str, Any]) -> dict[str, Any]:
    """`run.dialogue`: the dialogue metric's dataset-level figures, for a run with dialogues."""
    found = summaries.get("dialogue")
    return {"dialogue": found} if isinstance(found, Mapping) else {}


def run_to_json(
    run: RunInfo,
    results: Sequence[ScenarioResult],
    documents: Sequence[Mapping[str, Any]] | None = None,
    metrics: MetricSet | None = None,
) -> dict[str, Any]:
    """The `run --output` document: the run, then one result object per scenario (`documents`, when
    the caller has them already). The run's `metrics` hold the figures of `metrics` (by default the
    results' own set), then each judge's run-level dictionary by its key, in the keys' alphabetical
    order (CRAG's under `correctness`, the quality means under `quality`); a run with dialogues has
    their dataset-level figures in `dialogue` too (DESIGN.md, Dialogues)."""
    metrics = metrics or (results[0].metrics if results else default_metrics())
    documents = [r.to_json() for r in results] if documents is None else documents
    provenance = run_provenance(run, documents, metrics)
    provenance["metrics"] = {**provenance["metrics"], **run_summaries(results, metrics)}
    versions: dict[str, list[int]] = {}
    for result in results:
        for name, use in result.prompts.items():
            if use.version not in versions.setdefault(name, []):
                versions[name].append(use.version)
    return {
        "run": {
            "id": run.id,
            "name": run.name,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "selected": run.selected,
            "interrupted": run.interrupted,
            **({"signal": run.signal} if run.signal else {}),
            **({"cut_off": run.cut_off} if run.cut_off else {}),
            "prompt_pins": dict(run.prompt_pins),
            "prompt_versions": {k: sorted(v) for k, v in sorted(versions.items())},
            "totals": totals(results),
            **provenance,
            "judge": judge_usage(results),
            **_dialogue_figures(provenance["metrics"]),
        },
        "results": list(documents),
    }
