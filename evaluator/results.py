"""Result values: one per scenario run, and the run around them. `to_json` gives DESIGN.md's shapes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.trajectory import TrajectoryScore
from evaluator.workflow import WorkflowVerdict

Status = Literal["passed", "failed", "error"]


@dataclass(frozen=True, kw_only=True)
class AnswerCheck:
    """Rule-based value matching: every `contains` string must occur in the answer (case-sensitive)."""

    contains: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.missing

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.passed, "contains": list(self.contains), "missing": list(self.missing)}


@dataclass(frozen=True, kw_only=True)
class JudgeStatus:
    """Why there is (or is no) quality verdict. A judge that did not run is never a score."""

    status: Literal["scored", "skipped", "unscored"]
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class PromptUse:
    """A prompt version a run used; `source` "langfuse" means its generations link to that version."""

    version: int
    source: Literal["local", "langfuse"] = "local"

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "source": self.source}


@dataclass(frozen=True, kw_only=True)
class ScenarioResult:
    scenario_id: str
    trace_id: str
    status: Status
    workflow: WorkflowVerdict | None
    trajectory: TrajectoryScore | None
    answer: AnswerCheck | None
    judge_status: JudgeStatus
    quality: Mapping[str, Any] | None = None
    output: Any = None
    latency_ms: float | None = None
    error: str | None = None
    prompts: Mapping[str, PromptUse] = field(default_factory=dict)  # by prompt name
    finished_at: str = ""
    observation_count: int = 0  # in the trace the verdict was drawn from

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "trace_id": self.trace_id,
            "status": self.status,
            "workflow": self.workflow.to_json() if self.workflow else None,
            "trajectory": self.trajectory.to_json() if self.trajectory else None,
            "answer": self.answer.to_json() if self.answer else None,
            "quality": dict(self.quality) if self.quality is not None else None,
            "judge_status": self.judge_status.to_json(),
            "output": self.output,
            "prompts": {name: use.to_json() for name, use in self.prompts.items()},
            "observations": self.observation_count,
            "latency_ms": self.latency_ms,
            "error": self.error,
        }


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    id: str
    name: str
    started_at: str
    finished_at: str | None = None
    prompt_pins: Mapping[str, int] = field(default_factory=dict)
    interrupted: bool = False


def totals(results: Sequence[ScenarioResult]) -> dict[str, int]:
    counts = {"scenarios": len(results), "passed": 0, "failed": 0, "error": 0}
    for result in results:
        counts[result.status] += 1
    return counts


def run_to_json(run: RunInfo, results: Sequence[ScenarioResult]) -> dict[str, Any]:
    """The `run --output` document: the run, then one result object per scenario."""
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
            "interrupted": run.interrupted,
            "prompt_pins": dict(run.prompt_pins),
            "prompt_versions": {k: sorted(v) for k, v in sorted(versions.items())},
            "totals": totals(results),
        },
        "results": [r.to_json() for r in results],
    }
