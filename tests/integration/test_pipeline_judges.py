"""The pipeline's judge stage: its own bound (never more judge calls at once than judge_concurrency),
every judged result recorded, and a judge that crashes leaves the verdicts standing."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from rich.console import Console

from evaluator.errors import StoreError
from evaluator.judge import FakeJudgeModel, Judges, ModelCall, RetryPolicy
from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.reports import print_summary
from evaluator.results import judge_usage
from evaluator.run import Pipeline, RunOptions, TargetRequest
from evaluator.run.pipeline import NotRecordedError
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Finished, Store
from tests.builders import scenario
from tests.integration.toy_targets import Gauge

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
QUALITY = json.dumps(
    {"answer_quality": 1.0, "factual_correctness": 1.0, "completeness": 1.0, "reasoning": "r"}
)


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _items(count: int) -> list[LoadedScenario]:
    expected = {"agents": {"strict": False}, "answer": {"criteria": "says ok"}}
    return [
        LoadedScenario(scenario=scenario(id=f"s{i}", input=f"q{i}", expected=expected), path=Path("x.yaml"))
        for i in range(count)
    ]


def _target(request: TargetRequest) -> str:
    return f"ok {request.input}"


def _pipeline(tracing: Tracing, judges: Judges, store: Store) -> Pipeline:
    prompts = PromptLibrary(PROMPTS)
    return Pipeline(tracer=tracing, targets={"demo": _target}, prompts=prompts, recorder=store, judges=judges)


def test_judge_calls_never_exceed_their_own_bound(tracing: Tracing) -> None:
    gauge = Gauge()

    def reply(call: ModelCall) -> str:
        with gauge:
            time.sleep(0.05)  # hold the slot a moment, so that calls overlap if the bound lets them
        return QUALITY

    judges = Judges(model=FakeJudgeModel(default=reply), prompts=PromptLibrary(PROMPTS))
    store = Store(None)
    run, results = _pipeline(tracing, judges, store).run(
        _items(12), RunOptions(concurrency=8, judge_concurrency=3)
    )
    assert 1 <= gauge.peak <= 3
    assert [r.judge_status.status for r in results] == ["scored"] * 12
    stored = store.results(run.id)
    assert len(stored) == 12 and all(r["quality"]["completeness"] == 1.0 for r in stored)


def test_a_crashing_judge_leaves_the_verdicts_standing(
    tracing: Tracing, caplog: pytest.LogCaptureFixture
) -> None:
    def crash(call: ModelCall) -> str:
        raise KeyError("bug in a judge")

    judges = Judges(model=FakeJudgeModel(default=crash), prompts=PromptLibrary(PROMPTS), retry=RetryPolicy())
    with caplog.at_level(logging.ERROR, logger="evaluator.run.judging"):
        run, results = _pipeline(tracing, judges, Store(None)).run(_items(2), RunOptions(judge_concurrency=2))
    assert [r.status for r in results] == ["passed", "passed"]
    for result in results:
        assert result.judge_status.status == "unscored"
        assert result.judge_status.reason.startswith("evaluator error in the judges: KeyError")
        assert "Traceback" in result.judge_detail["evaluator_error"]["traceback"]
        assert result.workflow is not None and result.workflow.passed
    assert run.finished_at is not None
    logged = [r for r in caplog.records if "evaluator error in the judges" in r.getMessage()]
    assert sorted(r.args[0] for r in logged) == ["s0", "s1"]  # type: ignore[index]
    assert all(r.exc_info and r.exc_info[0] is KeyError for r in logged)
    console = Console(record=True, width=300)
    print_summary(console, run, results, expected_count=2)
    assert "2 scenario(s) were not judged because of an evaluator error in the judges" in (
        console.export_text()
    )


def test_ctrl_c_records_what_the_judges_hold_unjudged_at_once(tracing: Tracing) -> None:
    """Judges waiting on a hung endpoint must not keep the finished verdicts from the store."""
    release, stop = threading.Event(), threading.Event()
    hanging: list[str] = []

    def hang(call: ModelCall) -> str:
        hanging.append(call.model)
        if len(hanging) == 2:  # both judges hold a scenario (every target finished long before)
            threading.Timer(0.3, stop.set).start()  # then Ctrl-C
        release.wait(60)
        return QUALITY

    judges = Judges(model=FakeJudgeModel(default=hang), prompts=PromptLibrary(PROMPTS), retry=RetryPolicy())
    store = Store(None)
    started = time.monotonic()
    try:
        run, results = _pipeline(tracing, judges, store).run(
            _items(4), RunOptions(concurrency=4, judge_concurrency=2), stop=stop
        )
    finally:
        release.set()
    assert time.monotonic() - started < 10  # not the judges' 60 s
    assert run.interrupted
    assert sorted(r.scenario_id for r in results) == ["s0", "s1", "s2", "s3"]
    assert {r.judge_status.status for r in results} == {"skipped"}
    assert all(r.workflow is not None and r.workflow.passed for r in results)
    assert len(store.results(run.id)) == 4


def test_ctrl_c_keeps_the_verdicts_the_judges_had_already_made(tracing: Tracing) -> None:
    """The quality judge has replied; the correctness judge of the same answer hangs, then Ctrl-C: the
    quality verdict (made and paid for) is recorded and counted, the correctness judge unscored with
    why, not the whole answer "interrupted before the judges ran"."""
    release, stop = threading.Event(), threading.Event()

    def reply(call: ModelCall) -> str:
        if "<ground_truth>" not in next(m.content for m in call.messages if m.role == "user"):
            return QUALITY
        threading.Timer(0.3, stop.set).start()
        release.wait(60)
        return json.dumps({"verdict": "CORRECT", "reason": "same"})

    expected = {"agents": {"strict": False}, "answer": {"criteria": "says ok", "ground_truth": "yes"}}
    item = LoadedScenario(scenario=scenario(id="s0", input="q0", expected=expected), path=Path("x.yaml"))
    judges = Judges(model=FakeJudgeModel(default=reply), prompts=PromptLibrary(PROMPTS), retry=RetryPolicy())
    store = Store(None)
    started = time.monotonic()
    try:
        run, [result] = _pipeline(tracing, judges, store).run([item], RunOptions(), stop=stop)
    finally:
        release.set()
    assert time.monotonic() - started < 10  # not the judge's 60 s
    assert run.interrupted
    assert result.judge_status.status == "unscored"
    assert result.judge_status.reason == "correctness: the run was interrupted before this judge ended"
    document = result.to_json()
    assert document["quality"]["answer_quality"] == 1.0 and document["correctness"] is None
    assert result.judge_detail["quality"]["calls"] == 1
    assert result.judge_detail["correctness"]["status"] == "unscored"
    assert judge_usage([result])["calls"] == 1  # the quality call; the one under way had no reply
    [stored] = store.results(run.id)
    assert (
        stored["quality"]["answer_quality"] == 1.0 and stored["judge_status"] == result.judge_status.to_json()
    )


def test_the_summary_of_an_interrupted_run_says_how_many_finished_scenarios_were_not_judged(
    tracing: Tracing,
) -> None:
    """Before, the summary said "Judges: 2 calls, ... 0 unscored" and nothing of the scenarios whose
    judges the interrupt kept from running: skipped, neither scored nor unscored."""
    release, stop = threading.Event(), threading.Event()
    calls: list[str] = []
    lock = threading.Lock()

    def reply(call: ModelCall) -> str:
        with lock:
            calls.append(call.model)
            count = len(calls)
        if count <= 2:
            return QUALITY
        if count == 4:  # both judge slots held by a hung call: Ctrl-C
            threading.Timer(0.3, stop.set).start()
        release.wait(60)
        return QUALITY

    judges = Judges(model=FakeJudgeModel(default=reply), prompts=PromptLibrary(PROMPTS), retry=RetryPolicy())
    try:
        run, results = _pipeline(tracing, judges, Store(None)).run(
            _items(6), RunOptions(concurrency=6, judge_concurrency=2), stop=stop
        )
    finally:
        release.set()
    assert run.interrupted and len(results) == 6
    skipped = [r for r in results if r.judge_status.status == "skipped"]
    assert len(skipped) == 4 and sum(r.judge_status.status == "scored" for r in results) == 2
    console = Console(record=True, width=300)
    print_summary(console, run, results, expected_count=6)
    text = console.export_text()
    assert (
        "4 of the finished scenarios were not judged: the run was interrupted before the judges ran." in text
    )


class _FailingRecorder:
    """A store whose every write fails, as a full disk's does."""

    def __init__(self) -> None:
        self.failed = threading.Event()

    def record_many(self, run_id: str, finished: Sequence[Finished], *, destination: str | None) -> None:
        self.failed.set()
        raise StoreError("cannot write to the store x.db (the disk is full: database or disk is full).")


def test_a_result_the_judges_hold_when_the_store_fails_keeps_their_verdicts(tracing: Tracing) -> None:
    """The store fails while a judge is still asked about another result: that judgement ends as it
    would have (not cut off, nor recorded unjudged), and its verdicts come back with the run."""
    recorder = _FailingRecorder()

    def reply(call: ModelCall) -> str:
        if any("q1" in str(message) for message in call.messages):  # still judged when the store fails
            assert recorder.failed.wait(10)
            time.sleep(0.3)
        return QUALITY

    judges = Judges(model=FakeJudgeModel(default=reply), prompts=PromptLibrary(PROMPTS))
    pipeline = Pipeline(
        tracer=tracing,
        targets={"demo": _target},
        prompts=PromptLibrary(PROMPTS),
        recorder=recorder,
        judges=judges,
    )
    with pytest.raises(NotRecordedError) as raised:
        pipeline.run(_items(2), RunOptions(concurrency=2, judge_concurrency=2))
    failure = raised.value
    assert failure.not_recorded == ["s0", "s1"]
    assert [r.judge_status.status for r in failure.results] == ["scored", "scored"]
    assert [r.to_json()["quality"]["completeness"] for r in failure.results] == [1.0, 1.0]
