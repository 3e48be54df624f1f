"""Nothing finished is lost: a killed run's spans and scores reach Langfuse through `sync` (its judges'
traces too), SIGTERM stops a run cleanly (143) and delivers what finished, a second signal ends it at
once with the store intact, a signal while judges wait on their endpoint prints no traceback, scores
wait for their trace's spans, and a 207's named rejects cost no re-posts. Runs go to the loopback
Langfuse stand-in; kills hit a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn

CONFIG = """\
[targets.toy]
entry = "toy_targets:by_input"
[run]
timeout_seconds = 30
concurrency = {concurrency}
[store]
path = "evaluator.db"
[langfuse]
flush_timeout_seconds = {flush}
delivery_deadline_seconds = {delivery}
"""
SCENARIO = """\
id: s{index:02d}
target: toy
input: "{input}"
expected:
  agents: {{include: [worker]}}
  tools: {{include: [lookup]}}
  answer: {{contains: ["found"]}}
"""


def _project(
    folder: Path, inputs: list[str], concurrency: int, flush: float = 5, delivery: float = 10
) -> Path:
    config = CONFIG.format(concurrency=concurrency, flush=flush, delivery=delivery)
    (folder / "evaluator.toml").write_text(config)
    (folder / "toy_targets.py").write_text((ROOT / "tests/integration/toy_targets.py").read_text())
    (folder / "scenarios").mkdir()
    for index, text in enumerate(inputs):
        (folder / "scenarios" / f"s{index:02d}.yaml").write_text(SCENARIO.format(index=index, input=text))
    return folder


def _start(
    folder: Path, standin: LangfuseStandIn, keys: tuple[str, str], *args: str, **extra_env: str
) -> subprocess.Popen[str]:
    public_key, secret_key = keys
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_"))},
        **extra_env,
        "LANGFUSE_PUBLIC_KEY": public_key,
        "LANGFUSE_SECRET_KEY": secret_key,
        "LANGFUSE_BASE_URL": standin.base_url,
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "evaluator", "run", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    output, _ = process.communicate(timeout=60)
    return process.returncode, output


def _stored(folder: Path) -> int:
    try:
        with sqlite3.connect(folder / "evaluator.db") as db:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def _run_row(folder: Path) -> tuple[int] | None:
    """(interrupted,) of the run once it is recorded as finished, else None."""
    try:
        with sqlite3.connect(folder / "evaluator.db") as db:
            return db.execute("SELECT interrupted FROM runs WHERE finished_at IS NOT NULL").fetchone()
    except sqlite3.Error:
        return None


def _wait_for(condition: object, timeout: float = 60) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    pytest.fail("the condition did not come true in time")


def _local(folder: Path) -> tuple[dict[str, str], dict[str, int]]:
    """Score id -> trace id, and trace id -> spans captured, as the store holds them."""
    with sqlite3.connect(folder / "evaluator.db") as db:
        scores = dict(db.execute("SELECT id, trace_id FROM scores").fetchall())
        spans = dict(db.execute("SELECT trace_id, spans FROM traces").fetchall())
    return scores, spans


def _sync(
    folder: Path, standin: LangfuseStandIn, keys: tuple[str, str], cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """`evaluator sync` in-process, with the run's keys (its outbox is bound to them)."""
    monkeypatch.chdir(folder)
    public_key, secret_key = keys
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public_key)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", secret_key)
    monkeypatch.setenv("LANGFUSE_BASE_URL", standin.base_url)
    return cli("sync")


def test_a_killed_run_loses_nothing_it_finished(
    tmp_path: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path, [f"q{i}" for i in range(12)], concurrency=4)
    keys = langfuse_standin.new_keys()
    langfuse_standin.go_down()  # nothing reaches Langfuse during the run
    process = _start(folder, langfuse_standin, keys)
    _wait_for(lambda: _stored(folder) == 12)
    process.kill()  # SIGKILL the moment the last scenario is stored, before anything is delivered
    _finish(process)
    langfuse_standin.come_back()
    code, text = _sync(folder, langfuse_standin, keys, cli, monkeypatch)
    assert code == 0, text
    scores, spans = _local(folder)
    assert len(spans) == 12 and len(scores) == 12 * 4  # 3 workflow scores and answer_contains each
    assert set(langfuse_standin.scores) == set(scores)
    for trace_id, count in spans.items():
        assert len({s.span_id for s in langfuse_standin.spans_for(trace_id)}) >= count
    assert all(n == 1 for n in langfuse_standin.score_posts.values())


def test_sigterm_stops_starting_scenarios_and_delivers_what_finished(
    tmp_path: Path, langfuse_standin: LangfuseStandIn
) -> None:
    folder = _project(tmp_path, ["sleep:0.4"] * 10, concurrency=2)
    keys = langfuse_standin.new_keys()
    process = _start(folder, langfuse_standin, keys)
    _wait_for(lambda: _stored(folder) >= 2)
    process.send_signal(signal.SIGTERM)
    code, output = _finish(process)
    assert code == 143, output
    stored = _stored(folder)
    assert 2 <= stored < 10
    assert f"Stopped by SIGTERM: {stored} of 10 scenarios finished and are stored" in output
    assert "note: stopping on SIGTERM: no new scenario starts" in output  # said when it came
    assert "then sent to Langfuse within 10 s. A second SIGTERM (or Ctrl-C) exits at once" in output
    scores, spans = _local(folder)
    assert set(spans) == set(scores.values()) and len(spans) == stored
    roots = {s.trace_id for s in langfuse_standin.spans if s.name in {f"s{i:02d}" for i in range(10)}}
    assert len(roots) <= stored + 2  # only the two running when it came were cut off; none started after
    assert set(langfuse_standin.scores) == set(scores)  # what finished was delivered within the deadline
    assert "In Langfuse (acknowledged)" in output


def test_sigterm_leaves_every_selected_scenario_in_the_junit_file_and_the_count_in_the_output_header(
    tmp_path: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """CI keeps each scenario's history: those without a result are skipped test cases saying why (as
    the summary counts them), not gone; the --output header says how many were selected."""
    folder = _project(tmp_path, ["sleep:0.4"] * 10, concurrency=2)
    process = _start(
        folder, langfuse_standin, langfuse_standin.new_keys(), "--junit", "junit.xml", "--output", "out.json"
    )
    _wait_for(lambda: _stored(folder) >= 2)
    process.send_signal(signal.SIGTERM)
    code, output = _finish(process)
    assert code == 143, output
    said = re.search(r"(\d+) of 10 scenarios finished and are stored; (\d+) cut off while running", output)
    assert said is not None, output
    stored, running = int(said[1]), int(said[2])
    assert 2 <= stored < 10
    suite = ET.parse(folder / "junit.xml").getroot().find("testsuite")  # noqa: S314 (our own output)
    assert suite is not None and (suite.get("tests"), suite.get("skipped")) == ("10", str(10 - stored))
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert sorted(cases) == [f"s{i:02d}" for i in range(10)]
    assert {case.get("classname") for case in cases.values()} == {"evaluator.toy"}
    reasons = [s.get("message") for s in suite.iter("skipped")]
    assert reasons.count("cut off while running: the run was stopped by SIGTERM") == running
    assert reasons.count("never started: the run was stopped by SIGTERM") == 10 - stored - running
    header = json.loads((folder / "out.json").read_text())["run"]
    assert (header["selected"], header["interrupted"], header["totals"]["scenarios"]) == (10, True, stored)


def test_a_second_signal_exits_at_once_and_keeps_what_is_stored(
    tmp_path: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Langfuse is down and the deadlines are long: after the first signal the run would keep retrying
    # for tens of seconds; the second ends it at once.
    folder = _project(tmp_path, ["sleep:0.4"] * 10, concurrency=2, flush=60, delivery=60)
    keys = langfuse_standin.new_keys()
    langfuse_standin.go_down()
    process = _start(folder, langfuse_standin, keys)
    _wait_for(lambda: _stored(folder) >= 2)
    process.send_signal(signal.SIGTERM)
    _wait_for(lambda: _run_row(folder) is not None)  # the run is over and recorded; it sends to Langfuse
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    second = time.monotonic()
    code, output = _finish(process)
    assert code == 143, output  # 128 + SIGTERM, from the evaluator's own handler
    assert time.monotonic() - second < 10
    assert "Stopped by SIGTERM" not in output  # it exited at once: no summary after the sending
    assert "stopped at once: what was stored stays in" in output and "`evaluator sync`" in output
    scores, spans = _local(folder)
    stored = _stored(folder)
    assert 2 <= stored < 10 and len(spans) == stored and set(spans) == set(scores.values())
    assert _run_row(folder) == (1,)  # recorded as interrupted
    with sqlite3.connect(folder / "evaluator.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    langfuse_standin.come_back()
    code, text = _sync(folder, langfuse_standin, keys, cli, monkeypatch)
    assert code == 0, text
    assert set(langfuse_standin.scores) == set(scores)  # what was stored before the exit is delivered


def test_a_signal_once_the_run_is_over_says_so_and_the_run_stays_whole(
    tmp_path: Path, langfuse_standin: LangfuseStandIn
) -> None:
    # Langfuse is down: the run sends for its whole 4 s delivery deadline after its last scenario.
    folder = _project(tmp_path, ["q0", "q1"], concurrency=2, flush=2, delivery=4)
    keys = langfuse_standin.new_keys()
    langfuse_standin.go_down()
    process = _start(folder, langfuse_standin, keys)
    _wait_for(lambda: _run_row(folder) is not None)  # the run is over and recorded; it sends to Langfuse
    process.send_signal(signal.SIGTERM)
    code, output = _finish(process)
    assert code == 143, output
    assert "stopping on SIGTERM: the run was over: every result is stored; sending it to Langfuse" in output
    assert "SIGTERM came once every scenario had finished: the run is whole" in output
    assert "Stopped by" not in output and "cut off" not in output
    assert _run_row(folder) == (0,)  # stored as it is: not interrupted


@dataclass
class _Arrivals(JudgeStandIn):
    """The judge stand-in, counting the requests that have arrived (`requests` has those answered)."""

    arrived: int = 0

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        with self._lock:
            self.arrived += 1
        return super().answer(body)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_judges_wait_on_their_endpoint_prints_no_traceback(
    demo_project: Path, langfuse_standin: LangfuseStandIn, signum: signal.Signals
) -> None:
    """The judgements in flight are cancelled, each ending its judge trace's generation as it goes:
    no OpenTelemetry "Failed to detach context" traceback per judgement (some came after the summary)."""
    with _Arrivals(latency=3.0) as judge:
        process = _start(
            demo_project,
            langfuse_standin,
            langfuse_standin.new_keys(),
            str(ROOT / "scenarios/research"),
            "--no-cache",
            EVALUATOR_JUDGE_BASE_URL=judge.base_url,
        )
        _wait_for(lambda: judge.arrived >= 4)  # each waits its 3 s for a reply
        process.send_signal(signum)
        code, output = _finish(process)
    assert code == 128 + signum, output
    assert f"Stopped by {signum.name}" in output
    assert "Failed to detach context" not in output and "Traceback" not in output, output
    judged = [
        s for s in langfuse_standin.spans if str(s.attributes.get("langfuse.trace.name")).startswith("judge:")
    ]
    assert len(judged) >= judge.arrived  # each request's generation ended in time to be delivered


def test_a_sticky_207_reject_costs_no_reposts(
    tmp_path: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path, [f"q{i}" for i in range(6)], concurrency=3)
    langfuse_standin.reject_scores(lambda item: item["name"] == "answer_contains", "no such score config")
    keys = langfuse_standin.new_keys()
    code, output = _finish(_start(folder, langfuse_standin, keys))
    scores, _ = _local(folder)
    posts = langfuse_standin.requests_to("/api/public/scores", "POST")
    assert len(langfuse_standin.scores) == 6 * 3  # the three workflow scores of each scenario
    assert set(langfuse_standin.score_posts) <= set(scores)
    assert all(n == 1 for n in langfuse_standin.score_posts.values())  # the 207 named them: no re-posts
    assert "rejected" in output and "no such score config" in output
    code, _ = _sync(folder, langfuse_standin, keys, cli, monkeypatch)
    assert code == 1  # six scores are rejected: not in Langfuse, so sync cannot say everything is
    assert len(langfuse_standin.requests_to("/api/public/scores", "POST")) == len(posts)  # none re-posted


def test_spans_the_sdk_queue_drops_are_sent_by_sync(
    tmp_path: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Short deadlines: what the run does not deliver in time, sync does; that is the point here.
    folder = _project(tmp_path, [f"q{i}" for i in range(30)], concurrency=8, flush=1, delivery=2)
    keys = langfuse_standin.new_keys()
    langfuse_standin.slow = 0.3  # the exporter falls behind and its small queue overflows
    process = _start(folder, langfuse_standin, keys, OTEL_BSP_MAX_QUEUE_SIZE="8", LANGFUSE_FLUSH_AT="4")
    code, output = _finish(process)
    assert code in (0, 3), output
    assert "Queue full, dropping Span" in output  # the SDK's queue overflowed and dropped spans
    scores, spans = _local(folder)
    captured = sum(spans.values())
    assert captured == 30 * 4  # the store has every one of them all the same
    langfuse_standin.slow = 0  # Langfuse has caught up
    code, text = _sync(folder, langfuse_standin, keys, cli, monkeypatch)
    assert code == 0, text
    received = len({s.span_id for s in langfuse_standin.spans if s.trace_id in spans})
    assert received == captured and set(langfuse_standin.scores) == set(scores)


def test_a_timed_out_trace_is_sent_again_from_the_store_after_the_run(
    tmp_path: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """The exporter's per-trace count cannot show Langfuse has a timed-out trace's kept spans (late
    ones could stand in for dropped ones), so the run sends that trace again from the store."""
    folder = _project(tmp_path, ["sleep:3", "q1"], concurrency=2)
    code, output = _finish(_start(folder, langfuse_standin, langfuse_standin.new_keys(), "--timeout", "1"))
    assert code == 1, output  # s00 timed out
    with sqlite3.connect(folder / "evaluator.db") as db:
        rows = db.execute(
            "SELECT results.scenario_id, traces.trace_id, late_spans, traces.sent_at IS NOT NULL "
            "FROM traces JOIN results USING (trace_id) ORDER BY results.scenario_id"
        ).fetchall()
        unsent = db.execute("SELECT COUNT(*) FROM scores WHERE sent_at IS NULL").fetchone()[0]
    assert [(scenario, late) for scenario, _, late, _ in rows] == [("s00", 1), ("s01", 0)]
    _, late_trace, _, sent_again = rows[0]
    assert sent_again
    assert "s00" in {s.name for s in langfuse_standin.spans_for(late_trace)}  # its root span
    assert unsent == 0


def test_judge_traces_langfuse_missed_during_the_run_are_sent_by_sync(
    demo_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each judge score names its judgement's trace (`judge_trace_id`): a run that met an outage keeps
    those traces' spans with its results, as it keeps the scenarios' own, and `sync` sends them."""
    langfuse_deadlines(demo_project, flush=1, delivery=1)
    keys = langfuse_standin.new_keys()
    langfuse_standin.go_down()  # nothing reaches Langfuse during the run
    with JudgeStandIn() as judge:
        code, output = _finish(
            _start(
                demo_project,
                langfuse_standin,
                keys,
                str(ROOT / "scenarios/research"),
                "--no-cache",
                EVALUATOR_JUDGE_BASE_URL=judge.base_url,
            )
        )
    assert code in (1, 3), output
    with sqlite3.connect(demo_project / "evaluator.db") as db:
        named = {
            json.loads(metadata)["judge_trace_id"]
            for (metadata,) in db.execute("SELECT metadata FROM scores")
            if "judge_trace_id" in json.loads(metadata)
        }
        kept = dict(db.execute("SELECT trace_id, spans FROM traces").fetchall())
    assert len(named) >= 5, output  # the research scenarios with answer criteria, each judged
    assert named <= set(kept)  # each judge trace is in the store, with its spans
    langfuse_standin.come_back()
    code, text = _sync(demo_project, langfuse_standin, keys, cli, monkeypatch)
    assert code == 0, text
    for trace_id in named:
        received = langfuse_standin.spans_for(trace_id)
        assert len({s.span_id for s in received}) == kept[trace_id] >= 1
        assert all(str(s.attributes.get("langfuse.trace.name")).startswith("judge:") for s in received)
