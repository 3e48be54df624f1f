"""Runs written to a store as a real run writes them, from the real result classes, including the judges'
verdicts (`quality`, `correctness`) as the judge stage sets them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.judge.verdicts import CorrectnessVerdict, Judgement, QualityVerdict
from evaluator.prompts import Prompt
from evaluator.results import JudgeStatus, PromptUse, RunInfo, evaluate, scores_for
from evaluator.storage import Store
from tests.builders import scenario, trace_of

JUDGE_MODEL = "judge-model-1"


def result(
    scenario_id: str,
    *,
    workflow: bool = True,
    full_workflow: bool | None = None,
    quality: float | None = None,
    verdict: str | None = None,
    latency_ms: float = 100.0,
    agent_version: int = 1,
    judge_version: int = 1,
    unscored: bool = False,
    finished_at: str = "2026-11-22T10:00:01.000Z",
) -> Any:
    """One scenario's result: workflow pass or fail (a missing tool), an optional trajectory (exact, or a
    repeated tool), and optional quality (all three dimensions) and correctness verdict."""
    spec: dict[str, Any] = {
        "id": scenario_id,
        "expected": {"agents": {"allow": ["o"]}, "tools": {"include": ["a"]}},
    }
    if full_workflow is not None:
        spec["expected"]["trajectory"] = {"tools": ["a"]}
    tools = ["a"] if workflow else []
    if full_workflow is False:
        tools = ["a", "a"] if workflow else []
    status = (
        JudgeStatus(status="unscored", reason="reply not JSON")
        if unscored
        else JudgeStatus(status="scored" if quality is not None else "skipped", reason="")
    )
    base = evaluate(
        scenario(**spec),
        trace_of(["o"], tools),
        judge_status=status,
        latency_ms=latency_ms,
        prompts={"agents/research": PromptUse(version=agent_version)},
        finished_at=finished_at,
    )
    base = replace(base, trace_id=f"trace-{scenario_id}")
    judged: dict[str, Any] = {}
    if quality is not None:
        judged["quality"] = QualityVerdict(
            answer_quality=quality,
            factual_correctness=quality,
            completeness=quality,
            reasoning="stored by the test",
            judgement=_judgement("quality", "evaluation/quality", judge_version),
        )
    if verdict is not None:
        judged["correctness"] = CorrectnessVerdict(
            verdict=verdict,  # type: ignore[arg-type]
            exact_match=verdict == "correct",
            reason="stored by the test",
            judgement=_judgement("correctness", "evaluation/correctness", judge_version),
        )
    return replace(base, judged=judged) if judged else base


def _judgement(judge: str, prompt: str, version: int) -> Judgement:
    return Judgement(
        judge=judge,
        status="scored",
        prompt=Prompt(name=prompt, version=version, type="chat"),
        model=JUDGE_MODEL,
    )


def store_run(
    store: Store,
    run_id: str,
    results: Sequence[Any],
    *,
    name: str = "",
    minute: int = 0,
    signal: str | None = None,
    finished: bool = True,
) -> RunInfo:
    """Start, record (with scores) and finish a run, as the pipeline does (stopped by `signal`; never
    finished, as a killed run, when not `finished`)."""
    started = f"2026-11-22T10:{minute:02d}:00.000Z"
    run = RunInfo(id=run_id, name=name or run_id, started_at=started)
    store.start_run(run)
    for item in results:
        store.record(run.id, item, scores_for(item, run_id=run.id), destination=None)
    done = replace(
        run, finished_at=f"2026-11-22T10:{minute:02d}:30.000Z", interrupted=signal is not None, signal=signal
    )
    if finished:
        store.finish_run(done, list(results))
    return done


def config_for(tmp_path: Path, extra: str = "") -> Path:
    config = tmp_path / "evaluator.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "evaluator.db"}"\n{extra}')
    return config
