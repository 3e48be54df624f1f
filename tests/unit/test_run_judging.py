"""Judging one result outside a run (`evaluator validate`): an exception inside the judges is an
evaluator error kept in the result, never a traceback that loses the verdict."""

from __future__ import annotations

from pathlib import Path

from evaluator.config import Config, Settings, StoreConfig
from evaluator.judge import FakeJudgeModel, ModelCall
from evaluator.results import JudgeStatus, evaluate
from evaluator.run.judging import judge_result
from tests.builders import TraceBuilder, scenario

ROOT = Path(__file__).resolve().parents[2]


def test_an_exception_in_the_judges_leaves_the_verdict_and_says_so(tmp_path: Path) -> None:
    def crash(call: ModelCall) -> str:
        raise KeyError("bug in a judge")

    config = Config(
        settings=Settings(store=StoreConfig(path=tmp_path / "evaluator.db")), base_dir=ROOT, source=None
    )
    sc = scenario(expected={"agents": {"strict": False}, "answer": {"criteria": "says ok"}})
    trace = TraceBuilder().build()
    result = evaluate(sc, trace, judge_status=JudgeStatus(status="pending", reason=""), output="ok")
    judged = judge_result(config, sc, result, trace, model=FakeJudgeModel(default=crash))
    assert judged.status == result.status and judged.workflow == result.workflow
    assert judged.judge_status.status == "unscored"
    assert judged.judge_status.reason.startswith("evaluator error in the judges: KeyError")
    assert "Traceback" in judged.judge_detail["evaluator_error"]["traceback"]
