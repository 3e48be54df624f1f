"""The bundled suite with Langfuse configured: the real SDK against the loopback stand-in.

Spans arrive with the right type, name and parent; every score arrives once with the right name, type,
value, id and metadata; with Langfuse down nothing is lost and `evaluator sync` finishes the job.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langfuse import Langfuse, get_client

from evaluator.langfuse import LangfuseSettings, Tracing
from evaluator.results import ScenarioResult, default_metrics
from evaluator.run import SuiteOptions, TargetRequest, run_suite
from tests.builders import scenario
from tests.integration.conftest import ROOT, Cli, langfuse_deadlines, without_per_agent
from tests.standin.langfuse_server import LangfuseStandIn
from tests.standin.openai_server import openai_standin

SUITE = str(ROOT / "scenarios/research")


def _local_scores(project: Path) -> dict[str, tuple[str, str, float, str]]:
    with sqlite3.connect(project / "evaluator.db") as db:
        rows = db.execute("SELECT id, name, data_type, value, trace_id FROM scores").fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def _run_suite(cli: Cli, *extra: str) -> tuple[int, str, dict[str, Any]]:
    code, text = cli("run", SUITE, "--output", "results.json", *extra)
    return code, text, json.loads(Path("results.json").read_text())


def _assert_each_score_once(standin: LangfuseStandIn, local: dict[str, Any]) -> None:
    posts = standin.score_posts
    assert set(posts) == set(local)
    assert all(count == 1 for count in posts.values()), posts


def test_suite_leaves_spans_scores_and_configs_in_langfuse(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    without_per_agent(with_langfuse)  # the built-in metrics' scores (test_per_agent.py has the rest)
    code, text, document = _run_suite(cli)
    assert code == 1, text  # the demo's v1 prompts really fail some scenarios
    results = document["results"]
    for result in results:
        spans = langfuse_standin.spans_for(result["trace_id"])
        by_id = {s.span_id: s for s in spans}
        [root] = [s for s in spans if s.parent_span_id not in by_id]
        assert (root.name, root.attributes["langfuse.observation.type"]) == (result["scenario_id"], "span")
        assert root.attributes["langfuse.trace.name"] == result["scenario_id"]
        agents = {s.name: s for s in spans if s.attributes.get("langfuse.observation.type") == "agent"}
        assert agents["orchestrator"].parent_span_id == root.span_id
        assert all(
            a.parent_span_id == agents["orchestrator"].span_id
            for n, a in agents.items()
            if n != "orchestrator"
        )
        ordered = sorted(spans, key=lambda s: s.start_time_ns)
        tool_names = [s.name for s in ordered if s.attributes.get("langfuse.observation.type") == "tool"]
        called = set(result["workflow"]["tools"]["included"]) | set(result["workflow"]["tools"]["unexpected"])
        assert set(tool_names) >= called
        if result["trajectory"]:
            assert tool_names == result["trajectory"]["actual"]
        assert f"{result['scenario_id']}: {langfuse_standin.base_url}/project/" in text

    local = _local_scores(with_langfuse)
    # 3 workflow scores each, 4 trajectory scores with a trajectory, answer_contains with contains
    assert len(local) == sum(
        3 + 4 * (r["trajectory"] is not None) + (r["answer"] is not None) for r in results
    )
    _assert_each_score_once(langfuse_standin, local)
    remote = langfuse_standin.scores
    for score_id, (name, data_type, value, trace_id) in local.items():
        body = remote[score_id]
        assert (body["name"], body["dataType"], body["value"]) == (name, data_type, value)
        assert body["traceId"] == trace_id
        assert body["metadata"]["run_id"] == document["run"]["id"]
        assert body["metadata"]["scenario_id"] in {r["scenario_id"] for r in results}
    with sqlite3.connect(with_langfuse / "evaluator.db") as db:
        assert db.execute("SELECT COUNT(*) FROM scores WHERE sent_at IS NULL").fetchone()[0] == 0
    configs = {c["name"]: c for c in langfuse_standin.score_configs}
    assert set(configs) == {d.name for d in default_metrics().definitions}
    assert configs["workflow_pass"]["dataType"] == "BOOLEAN"
    assert (configs["trajectory_full_path"]["minValue"], configs["trajectory_full_path"]["maxValue"]) == (
        0,
        1,
    )


def test_langfuse_down_loses_nothing_and_sync_finishes_the_job(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "2")  # the SDK's exporter gives up on each span batch sooner
    langfuse_deadlines(with_langfuse, flush=2, delivery=3)  # Langfuse stays down: no waiting out 15 s
    langfuse_standin.go_down()
    code, text, document = _run_suite(cli)
    assert code == 1
    local = _local_scores(with_langfuse)
    assert len(document["results"]) == 11 and len(local) > 0
    assert "is unreachable" in text
    with sqlite3.connect(with_langfuse / "evaluator.db") as db:
        spans = db.execute("SELECT SUM(spans) FROM traces").fetchone()[0]
    assert f"In Langfuse (acknowledged): 0 of {spans} spans, 0 of {len(local)} scores" in text
    held = f"11 traces, {len(local)} scores ({len(local)} of them wait for their trace's spans)"
    assert f"Waiting in the local outbox: {held}" in text
    assert "evaluator sync" in text
    assert not langfuse_standin.score_posts

    langfuse_standin.come_back()
    langfuse_standin.fail_next(100_000, path="/api/public/otel/v1/traces")  # spans keep failing
    code, text = cli("sync", "--force")  # the scores go anyway: the failing spans do not use their time
    assert code == 1, text
    assert f"0 of {spans} spans, {len(local)} of {len(local)} scores" in text, text
    langfuse_standin.clear_faults()
    code, text = cli("sync")
    assert code == 0, text
    assert (
        f"In Langfuse (acknowledged): {spans} of {spans} spans, {len(local)} of {len(local)} scores" in text
    )
    code, text = cli("sync")
    assert code == 0 and "Nothing waits" in text
    _assert_each_score_once(langfuse_standin, local)
    for result in document["results"]:  # every captured span was kept, and sent by sync
        names = {s.name for s in langfuse_standin.spans_for(result["trace_id"])}
        assert {result["scenario_id"], "orchestrator"} <= names


def test_keys_revoked_during_the_run_keep_its_summary_and_sync_sends_the_rest_once_they_work(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    public_key = os.environ["LANGFUSE_PUBLIC_KEY"]
    revoked: list[str] = []

    def revoke_at_the_first_span_batch() -> None:  # after the check of the keys the run starts with
        while not langfuse_standin.requests_to("/api/public/otel/v1/traces"):
            time.sleep(0.01)
        revoked.append(langfuse_standin.revoke_keys(public_key))

    revoker = threading.Thread(target=revoke_at_the_first_span_batch, daemon=True)
    revoker.start()
    code, text, document = _run_suite(cli)
    revoker.join(5)

    assert revoked, "the keys were never revoked"
    assert code == 1, text  # the suite's own verdict (scenarios fail by design), not bad input's 2
    assert "rejected the API keys (HTTP 401)" in text and "Traceback" not in text
    assert "`evaluator sync` sends them" in text
    assert len(document["results"]) == 11 and "Stored in" in text and "Waiting in the local outbox" in text
    langfuse_standin.grant_keys(public_key, revoked[0])
    code, text = cli("sync")
    assert code == 0, text
    _assert_each_score_once(langfuse_standin, _local_scores(with_langfuse))


def test_a_429_storm_is_ridden_out(with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli) -> None:
    langfuse_standin.rate_limit_next(4, retry_after=0.5, path="/api/public/scores")
    code, text, _ = _run_suite(cli)
    assert code == 1
    limited = [r for r in langfuse_standin.requests_to("/api/public/scores", "POST") if r.status == 429]
    assert len(limited) == 4
    _assert_each_score_once(langfuse_standin, _local_scores(with_langfuse))
    assert "not yet in Langfuse" not in text


def test_wrong_keys_give_one_clear_message(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-wrong")
    code, text = cli("run", SUITE)
    assert code == 2
    assert "rejected the API keys (HTTP 401)" in text
    assert text.count("error") == 1 and "Traceback" not in text
    assert "sk-lf-wrong" not in text
    assert len(langfuse_standin.requests_to("/api/public/projects")) == 1  # no retries


def test_sync_with_wrong_keys_says_so_even_when_nothing_waits(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-wrong")
    code, text = cli("sync")
    assert code == 2 and "rejected the API keys (HTTP 401)" in text, text
    assert "Nothing waits" not in text


def test_sync_with_nothing_waiting_and_langfuse_down_says_the_keys_were_not_checked(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "1")
    langfuse_standin.go_down()
    code, text = cli("sync")
    assert code == 0, text  # nothing waits: there is nothing to send
    assert "Nothing waits for this Langfuse project" in text
    assert "note: the keys were not checked: Langfuse at" in " ".join(text.split())


def test_the_secret_keys_never_leave_the_environment(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    secret = os.environ["LANGFUSE_SECRET_KEY"]
    openai_key = "sk-openai-never-recorded"
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)  # offered to the demo's agents: the real-model mode
    with openai_standin(lambda body: {"content": "research"}) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code, text, document = _run_suite(cli, "--tag", "smoke")
    assert code in (0, 1), text
    assert llm.requests and all(
        headers["authorization"] == f"Bearer {openai_key}" for _, headers, _ in llm.requests
    )
    stored = (with_langfuse / "evaluator.db").read_bytes()
    spans = json.dumps(
        [(s.name, s.attributes, s.resource_attributes) for s in langfuse_standin.spans], default=str
    )
    for place, content in (
        ("output", text),
        ("results", json.dumps(document)),
        ("spans", spans),
        ("scores", json.dumps(langfuse_standin.scores)),
    ):
        assert secret not in content, place
        assert openai_key not in content, place
    assert secret.encode() not in stored and openai_key.encode() not in stored


def test_sending_after_the_run_says_what_it_waits_for_once_it_takes_long(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """Past 2 s of sending after the run, one note names Langfuse, the time left and where what is not
    sent stays; a Langfuse that keeps up gets no note."""
    notes: list[str] = []

    def on_notice(kind: str, message: str) -> None:
        if kind == "note" and message.startswith("still sending"):
            notes.append(message)

    run_suite([SUITE], SuiteOptions(tags=["smoke"]), on_notice=on_notice)
    assert notes == []
    langfuse_deadlines(with_langfuse, flush=1, delivery=5)
    expected: list[int] = []
    stored: list[ScenarioResult] = []

    def on_result(result: ScenarioResult) -> None:
        stored.append(result)
        if len(stored) == expected[0]:  # from now on each request takes 2 s: sending takes longer
            langfuse_standin.slow = 2.0

    run_suite(
        [SUITE],
        SuiteOptions(tags=["smoke"]),
        on_start=expected.append,
        on_result=on_result,
        on_notice=on_notice,
    )
    assert len(notes) == 1, notes
    assert langfuse_standin.base_url in notes[0] and "`evaluator sync`" in notes[0]
    left = re.search(r"for up to (\d+) s more", notes[0])
    assert left is not None and 1 <= int(left.group(1)) <= 3, notes[0]  # a 5 s deadline, 2 s in


def test_spans_exported_after_the_run_are_not_acknowledged_into_its_store(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """The exporter is the process's, per key: once the run is over, what it sends is not the run's."""
    run_suite([SUITE], SuiteOptions(tags=["smoke"]))
    settings = LangfuseSettings.from_env()
    assert settings is not None
    later = Tracing.connected(settings)  # the same key: the same exporter the run used
    trace_id = Tracing.trace_id_for("after-the-run", "x")
    with later.client.start_as_current_observation(name="later", trace_context={"trace_id": trace_id}):
        pass
    assert later.shutdown(10)
    assert trace_id in {s.trace_id for s in langfuse_standin.spans}
    with sqlite3.connect(with_langfuse / "evaluator.db") as db:
        acks = db.execute("SELECT COUNT(*) FROM span_acks WHERE trace_id=?", (trace_id,)).fetchone()[0]
    assert acks == 0


def test_a_slow_langfuse_cannot_hold_the_run(with_langfuse: Path, langfuse_standin: LangfuseStandIn) -> None:
    """Every step after the run (in-flight batches, flush, span and score delivery, score configs,
    shutdown) shares one deadline: with 1 s per request, the steps after the run end within the 2 s
    deadline (plus a wide margin), not after the 11 score-config requests and the rest."""
    langfuse_deadlines(with_langfuse, flush=1, delivery=2)
    langfuse_standin.slow = 1.0
    stored: list[float] = []
    suite = run_suite(
        [SUITE], SuiteOptions(tags=["smoke"]), on_result=lambda _: stored.append(time.monotonic())
    )
    after_run = time.monotonic() - stored[-1]
    assert after_run < 2 + 3, f"the steps after the run took {after_run:.1f} s"
    assert len(suite.results) == suite.expected >= 1
    local = _local_scores(with_langfuse)
    with sqlite3.connect(with_langfuse / "evaluator.db") as db:
        sent = {row[0] for row in db.execute("SELECT id FROM scores WHERE sent_at IS NOT NULL")}
        unsent = db.execute("SELECT COUNT(*) FROM scores WHERE sent_at IS NULL").fetchone()[0]
    assert unsent == suite.waiting  # the summary counts what really waits
    assert sent <= set(langfuse_standin.scores)  # marked sent only once Langfuse has it
    assert len(sent) + unsent == len(local)  # each score is sent or waiting, never lost


def test_a_script_keeps_its_langfuse_client_after_a_run(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """`run_suite()` from a script leaves the SDK running for the key (the team's `Langfuse()` with the
    same key is the same SDK client): a score sent after the run, or by the next run's target, reaches
    Langfuse, not "dropped: Langfuse client has been shut down"."""
    run_suite([SUITE], SuiteOptions(tags=["smoke"]))
    client = Langfuse()  # the keys from the environment, as the team's own code makes it
    trace_id = Langfuse.create_trace_id(seed="after-the-run")
    client.create_score(name="user_feedback", value=1.0, trace_id=trace_id, score_id="after-the-run")
    client.flush()
    assert langfuse_standin.scores["after-the-run"]["name"] == "user_feedback"

    def rated(request: TargetRequest) -> str:  # a target that scores its own trace, as teams' do
        get_client().score_current_trace(name="user_rating", value=4.0)
        return "rated"

    suite = run_suite(scenarios=[scenario(id="rated", target="rated")], targets={"rated": rated})
    [result] = suite.results
    client.flush()
    ratings = [s for s in langfuse_standin.scores.values() if s["name"] == "user_rating"]
    assert [(s["traceId"], s["value"]) for s in ratings] == [(result.trace_id, 4.0)]


_SCRIPT = """
import sys, time
from langfuse import Langfuse, get_client
from evaluator.run import SuiteOptions, TargetRequest, run_suite
from tests.builders import scenario

run_suite([sys.argv[1]], SuiteOptions(tags=["smoke"]))
print("ran", flush=True)
sys.stdin.readline()  # the test makes Langfuse hang now
Langfuse().create_score(name="user_feedback", value=1.0, trace_id="0" * 32, score_id="at-exit")
print(time.monotonic(), flush=True)
"""


def test_a_hung_langfuse_holds_a_script_s_exit_no_longer_than_the_flush_timeout(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn
) -> None:
    """The SDK left running after `run_suite()` is shut down at the script's exit within
    `flush_timeout_seconds` (1 s here), not after its own unbounded flush: a score stuck in a request
    Langfuse does not answer for 30 s (the SDK's request timeout is 10 s) does not hold the exit."""
    langfuse_deadlines(with_langfuse, flush=1)
    with subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, SUITE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as script:
        try:
            assert script.stdin is not None and script.stdout is not None
            assert script.stdout.readline() == "ran\n"
            langfuse_standin.slow = 30.0
            script.stdin.write("go\n")
            script.stdin.flush()
            scored_at = float(script.stdout.readline())
            script.wait(timeout=60)
            exit_took = time.monotonic() - scored_at
        finally:
            script.kill()
            langfuse_standin.slow = 0.0
    assert script.returncode == 0
    assert exit_took < 1 + 5, f"the script's exit took {exit_took:.1f} s"


def test_a_store_that_cannot_take_the_run_s_end_ends_the_langfuse_side_and_sync_sends_the_rest(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    """The run's summary, trace links and verification all the same; the live delivery stopped and the
    SDK flushed (no thread of the run left behind); what the outbox holds is said to wait for `sync`,
    which sends it once the store can be written."""
    from evaluator.storage import Store, store

    def full(self: Store, *args: object, **kwargs: object) -> None:
        raise store._store_error(
            self.path, sqlite3.OperationalError("database or disk is full"), writing=True
        )

    finish_run = Store.finish_run
    monkeypatch.setattr(Store, "finish_run", full)
    before = set(threading.enumerate())
    code, text, document = _run_suite(
        cli, "--tag", "pdf", "--prompt", "agents/research=2", "--verify-langfuse"
    )
    left = [t.name for t in threading.enumerate() if t not in before and t.name.startswith("evaluator-live")]
    assert code == 4, text  # not 0: the suite passed, but its end is not stored
    assert not left, left  # the session was stopped
    assert f"cannot write to the store {with_langfuse / 'evaluator.db'} (the disk is full" in text
    assert "Verified in Langfuse: 7 traces give the same verdict" in text
    for result in document["results"]:  # linked, and the spans the SDK held were flushed
        assert f"{result['scenario_id']}: {langfuse_standin.base_url}/project/" in text
        assert result["scenario_id"] in {s.name for s in langfuse_standin.spans_for(result["trace_id"])}
    assert "nothing was sent to Langfuse from the local outbox after the run" in text
    assert "In Langfuse (acknowledged)" not in text  # no count the store could not vouch for
    assert "Traceback" not in text

    monkeypatch.setattr(Store, "finish_run", finish_run)  # the disk has room again
    code, text = cli("sync")
    assert code == 0, text
    _assert_each_score_once(langfuse_standin, _local_scores(with_langfuse))


def test_a_store_failing_mid_run_ends_the_langfuse_side_and_says_what_no_outbox_holds(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    """The store takes the first batch of results, then the disk is full: the run ends, its traces
    flushed to Langfuse, every result in --output; the scores of the results the store did not take are
    said to be neither sent nor queued; `sync` then sends the stored ones' scores, each once."""
    from evaluator.run import pipeline
    from evaluator.storage import Store, store

    record_many, calls = Store.record_many, []

    def full_after_one(self: Store, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) > 1:
            raise store._store_error(
                self.path, sqlite3.OperationalError("database or disk is full"), writing=True
            )
        record_many(self, *args, **kwargs)

    monkeypatch.setattr(Store, "record_many", full_after_one)
    monkeypatch.setattr(pipeline, "_RECORD_BATCH", 2)  # the first two results stored, not all at once
    code, text, document = _run_suite(
        cli, "--tag", "pdf", "--prompt", "agents/research=2", "--concurrency", "1"
    )
    assert code == 4, text
    not_stored = document["run"]["not_stored"]
    assert not_stored and len(not_stored) < len(document["results"])
    assert f"cannot write to the store {with_langfuse / 'evaluator.db'} (the disk is full" in text
    assert (
        f"The scores of the {len(not_stored)} results the store does not have are not in that outbox" in text
    )
    for result in document["results"]:  # the spans the SDK held were flushed, the stored or not
        assert result["scenario_id"] in {s.name for s in langfuse_standin.spans_for(result["trace_id"])}
    assert "Traceback" not in text

    monkeypatch.setattr(Store, "record_many", record_many)  # the disk has room again
    code, text = cli("sync")
    assert code == 0, text
    local = _local_scores(with_langfuse)
    assert local and all(
        trace not in {r["trace_id"] for r in document["results"] if r["scenario_id"] in not_stored}
        for _, _, _, trace in local.values()
    )
    _assert_each_score_once(langfuse_standin, local)


@pytest.mark.parametrize(
    "command",
    [
        ["prompts", "push"],
        ["datasets", "push", SUITE],
        ["validate", "--scenario", f"{SUITE}/research-pdf-only.yaml", "--trace-id", "0" * 32],
    ],
)
def test_a_command_that_cannot_reach_langfuse_gives_the_fix(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, command: list[str]
) -> None:
    """Before, these said only "error: Langfuse at ... is unreachable (checking the keys: ...)", with
    no fix, where report and compare --source langfuse and validate --session-id gave one."""
    langfuse_standin.go_down()
    code, text = cli(*command)
    text = " ".join(text.split())
    assert code == 2, text
    assert f"error: Langfuse at {langfuse_standin.base_url} is unreachable (checking the keys: " in text
    assert (
        "Fix: check that Langfuse is up at LANGFUSE_BASE_URL and reachable from here, then run the "
        "command again." in text
    )
    assert "Traceback" not in text


def test_a_command_langfuse_rate_limits_says_how_long_to_wait(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    langfuse_standin.rate_limit_next(10, retry_after=7)
    code, text = cli("prompts", "push")
    text = " ".join(text.split())
    assert code == 2, text
    assert "answered HTTP 429 while checking the keys" in text
    assert (
        "Fix: Langfuse is rate-limiting these keys: wait 7 s, as it asks, then run the command again." in text
    )


def test_sync_with_langfuse_down_says_how_to_finish_the_job(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: Any
) -> None:
    """`sync` against a Langfuse that is down said only that it is unreachable: no fix."""
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "2")
    langfuse_deadlines(with_langfuse, flush=2, delivery=3)
    langfuse_standin.go_down()
    cli("run", SUITE, "--tag", "smoke")
    code, text = cli("sync")
    assert code == 1, text
    assert "is unreachable" in text and "Fix: once Langfuse answers" in text, text
    assert "run `evaluator sync` again; what was not sent stays in the outbox." in text
