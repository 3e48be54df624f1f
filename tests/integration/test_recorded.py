"""Recorded conversations through the command line (DESIGN.md, "Dialogues", Recorded dialogues): the
concierge demo's dialogues run with keys against the Langfuse stand-in, then `validate --session-id`
reads each session back (a trace per turn, in time order) and evaluates it to the figures the run
computed; the same traces saved as files, `--trace` once per turn, offline; the clear errors; and
`validate --turns` on CRAG turn data (figures worked out by hand in tests/unit/test_crag_turns.py)."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from evaluator.cli import _recorded
from evaluator.results import JudgeStatus, default_metrics, with_dialogues
from evaluator.run import DialogueSettings, RecordedTurn, recorded_dialogue
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.trace import OBSERVATION_FIELDS
from tests.builders import TraceBuilder
from tests.integration.conftest import ROOT, Cli, langfuse_deadlines
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn

CONCIERGE = ROOT / "scenarios/concierge"
DIALOGUES = {
    # the policy flaw of prompt v1: it books before it knows the nights (fails)
    "concierge-hotel-book-missing-nights": CONCIERGE / "concierge-hotel-book-missing-nights.yaml",
    # the area carried from hotels to restaurants (memory transfer 1), a search's results named (passes)
    "concierge-hotel-to-restaurant-same-area": CONCIERGE / "concierge-hotel-to-restaurant-same-area.yaml",
}
TURN_FIELDS = ("turn", "trace_id", "input", "output", "state", "expected", "status", "metrics", "details")
CRAG = str(ROOT / "examples/crag/turn_data.jsonl")


def _json(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(text[text.index("{") :])
    return document


def _same_dialogue(recorded: dict[str, Any], ran: dict[str, Any]) -> None:
    """The recorded conversation evaluated as the run evaluated it: the dialogue's figures, details,
    status and session, and every turn but its timing."""
    for key in ("kind", "scenario_id", "status", "session_id", "dialogue", "dialogue_details"):
        assert recorded[key] == ran[key], key
    assert len(recorded["turns"]) == len(ran["turns"])
    for mine, theirs in zip(recorded["turns"], ran["turns"], strict=True):
        for key in (*TURN_FIELDS, "workflow", "trajectory", "answer"):
            assert mine[key] == theirs[key], (mine["turn"], key)


def _run_dialogues(cli: Cli) -> dict[str, dict[str, Any]]:
    code, text = cli("run", *map(str, DIALOGUES.values()), "--no-judge", "--output", "run.json")
    assert code == 1, text  # missing-nights fails, as the demo intends
    results = json.loads(Path("run.json").read_text())["results"]
    return {r["scenario_id"]: r for r in results}


def test_a_session_read_from_langfuse_gives_the_runs_figures(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    ran = _run_dialogues(cli)
    assert {r["status"] for r in ran.values()} == {"passed", "failed"}
    for scenario_id, path in DIALOGUES.items():
        session = ran[scenario_id]["session_id"]
        # Cloud's small read quota: the listing is refused once, and waits as long as Retry-After asks
        langfuse_standin.rate_limit_next(1, retry_after=1, path="/api/public/v2/observations")
        code, text = cli("validate", "--scenario", str(path), "--session-id", session, "--json")
        recorded = _json(text)
        _same_dialogue(recorded, ran[scenario_id])
        assert code == (0 if ran[scenario_id]["status"] == "passed" else 1), text
    # one listing of the session (polled until it settled), then each turn's trace read once
    listings = [
        r
        for r in langfuse_standin.requests_to("/api/public/v2/observations", "GET")
        if "sessionId" in r.query
    ]
    assert listings and all(r.query.get("fields") == "core,basic" for r in listings)
    assert sum(r.status == 429 for r in listings) == len(DIALOGUES)

    # the terminal form: the result, then each turn, then the dialogue figures
    failing = DIALOGUES["concierge-hotel-book-missing-nights"]
    session = ran["concierge-hotel-book-missing-nights"]["session_id"]
    code, text = cli("validate", "--scenario", str(failing), "--session-id", session)
    assert code == 1
    flat = " ".join(text.split())
    assert "Turns of concierge-hotel-book-missing-nights" in flat
    assert "policy_compliant" in flat and "dialogues: 1 dialogues, 3 turns" in flat


def _save_turns(langfuse_standin: LangfuseStandIn, result: dict[str, Any], folder: Path) -> list[str]:
    """Each turn's observations page, saved as the README says: GET /api/public/v2/observations."""
    folder.mkdir()
    public_key, secret_key = langfuse_standin.new_keys()
    paths = []
    for turn in result["turns"]:
        response = httpx.get(
            f"{langfuse_standin.base_url}/api/public/v2/observations",
            params={"traceId": turn["trace_id"], "fields": OBSERVATION_FIELDS, "limit": 1000},
            auth=(public_key, secret_key),
        )
        response.raise_for_status()
        path = folder / f"turn-{turn['turn']}.json"
        path.write_text(response.text)
        paths.append(str(path))
    return paths


def test_trace_files_one_per_turn_offline(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = _run_dialogues(cli)
    result = ran["concierge-hotel-to-restaurant-same-area"]
    files = _save_turns(langfuse_standin, result, with_langfuse / "turns")
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name)  # offline
    scenario = str(DIALOGUES["concierge-hotel-to-restaurant-same-area"])
    arguments = [a for path in files for a in ("--trace", path)]
    code, text = cli("validate", "--scenario", scenario, *arguments, "--json")
    assert code == 0, text
    _same_dialogue(_json(text), result)

    # one file short: the counts, and what to do
    code, text = cli("validate", "--scenario", scenario, *arguments[:-2])
    assert code == 2
    assert len(result["turns"]) == 2
    assert (
        "--trace was given 1 time: 1 trace for the 2 user turns of dialogue "
        "concierge-hotel-to-restaurant-same-area" in " ".join(text.split())
    )
    assert "Fix: give --trace once per user turn of the dialogue" in " ".join(text.split())


def test_clear_errors_for_sessions(with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli) -> None:
    langfuse_deadlines(with_langfuse, read_deadline_seconds=1)
    ran = _run_dialogues(cli)
    session = ran["concierge-hotel-book-missing-nights"]["session_id"]
    single = str(ROOT / "scenarios/research/research-pdf-only.yaml")

    code, text = cli("validate", "--scenario", single, "--session-id", session)
    assert code == 2 and "is a single-turn scenario: --session-id reads a dialogue's" in " ".join(
        text.split()
    )

    # a session of 2 turns against a dialogue of 3
    other = str(DIALOGUES["concierge-hotel-book-missing-nights"])
    two_turns = ran["concierge-hotel-to-restaurant-same-area"]
    code, text = cli("validate", "--scenario", other, "--session-id", two_turns["session_id"])
    flat = " ".join(text.split())
    count = len(two_turns["turns"])
    assert code == 2, text
    assert f"holds {count} traces: {count} traces for the 3 user turns of dialogue" in flat
    assert "Fix: check the session id and the scenario" in flat

    code, text = cli("validate", "--scenario", other, "--session-id", "no-such-session")
    assert code == 2
    assert "session no-such-session has no traces readable in Langfuse within 1 s" in " ".join(text.split())

    code, text = cli(
        "validate", "--scenario", other, "--trace-id", ran["concierge-hotel-book-missing-nights"]["trace_id"]
    )
    assert code == 2 and "Fix: give --session-id ID" in " ".join(text.split())


def test_without_keys_or_with_langfuse_down_it_says_what_to_set(
    demo_project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = str(DIALOGUES["concierge-hotel-book-missing-nights"])
    code, text = cli("validate", "--scenario", scenario, "--session-id", "s")
    flat = " ".join(text.split())
    assert code == 2
    assert "--session-id needs Langfuse, but no keys are set" in flat
    assert "LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL" in flat

    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-x")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-x")
    monkeypatch.setenv("LANGFUSE_BASE_URL", f"http://127.0.0.1:{port}")
    code, text = cli("validate", "--scenario", scenario, "--session-id", "s")
    flat = " ".join(text.split())
    assert code == 2, text
    assert "is unreachable" in flat and "Fix: check that Langfuse is up at LANGFUSE_BASE_URL" in flat


def test_crag_turn_data_without_a_judge(demo_project: Path, cli: Cli) -> None:
    code, text = cli("validate", "--turns", CRAG, "--json", "--no-judge")
    assert code == 0, text
    document = _json(text)
    # worked out by hand in tests/unit/test_crag_turns.py
    assert document["all"]["total"] == 9 and document["all"]["correct"] == 3 and document["all"]["miss"] == 6
    assert document["all"]["truthfulness_score"] == pytest.approx(1 / 3)
    assert document["all"]["mean_multi_turn_conversation_score"] == pytest.approx(1 / 3)
    assert document["ego"]["total"] == 4 and document["ego"][
        "mean_multi_turn_conversation_score"
    ] == pytest.approx(2 / 3)
    assert [(u["session_id"], u["turn_idx"]) for u in document["undecided"]] == [
        ("city-2", 0),
        ("tower-3", 3),
    ]

    code, text = cli("validate", "--turns", CRAG)
    flat = " ".join(text.split())
    assert code == 0
    assert "2 turn(s) could not be decided without the semantic step" in flat
    assert "session city-2 turn 0 (line 4)" in flat
    assert "note: the LLM judges did not run: no judge endpoint is configured" in flat


def test_crag_turn_data_with_the_judge(demo_project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        judge.script(
            '{"verdict": "WRONG", "reason": "another city"}',
            '{"verdict": "CORRECT", "reason": "same height"}',
        )
        code, text = cli("validate", "--turns", CRAG, "--json", "--no-cache")
        assert len(judge.requests) == 2  # only the turns neither a miss nor an exact match
    assert code == 0, text
    document = _json(text)
    assert document["all"]["total"] == 11 and document["all"]["hallucination"] == 1
    assert document["all"]["truthfulness_score"] == pytest.approx(2 / 11)
    assert document["all"]["mean_multi_turn_conversation_score"] == pytest.approx(7 / 36)
    assert document["ego"]["mean_multi_turn_conversation_score"] == pytest.approx(1 / 6)
    assert document["undecided"] == []


def test_crag_turn_data_malformed(demo_project: Path, cli: Cli) -> None:
    path = demo_project / "bad.jsonl"
    path.write_text('{"session_id": "s", "turn_idx": 0, "is_ego": true, "query": "q", "ground_truth": "a"}\n')
    code, text = cli("validate", "--turns", str(path))
    assert code == 2
    assert f"{path}:1: agent_response: missing. Fix:" in " ".join(text.split())


def test_a_recorded_dialogue_without_a_judge_endpoint_gives_the_true_reason_the_judges_skipped(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run_dialogues(cli)["concierge-hotel-to-restaurant-same-area"]
    files = _save_turns(langfuse_standin, result, with_langfuse / "turns")
    scenario = str(DIALOGUES["concierge-hotel-to-restaurant-same-area"])
    code, text = cli(
        "validate", "--scenario", scenario, *[a for path in files for a in ("--trace", path)], "--json"
    )
    assert code == 0, text
    # recorded turns are judged as a run's are: no endpoint is configured, and that is why they were not
    assert _json(text)["judge_status"] == {
        "status": "skipped",
        "reason": "no judge endpoint is configured (EVALUATOR_JUDGE_BASE_URL, OPENAI_BASE_URL or "
        "OPENAI_API_KEY): the judges did not run",
    }


def test_crag_turn_data_s_text_is_shown_with_its_control_characters_as_escapes(
    demo_project: Path, cli: Cli
) -> None:
    path = demo_project / "coloured.jsonl"
    turn = {"turn_idx": 0, "is_ego": True, "query": "q", "ground_truth": "Paris", "agent_response": "Lyon"}
    path.write_text(json.dumps({"session_id": "s\x1b[2J\x1b]0;title\x07", **turn}) + "\n")
    code, text = cli("validate", "--turns", str(path))
    assert code == 0, text
    assert "session s\\x1b[2J\\x1b]0;title\\x07 turn 0 (line 1)" in text
    assert "\x1b" not in text and "\x07" not in text


def test_the_turn_table_shows_what_the_turns_said_as_written() -> None:
    """The user's message and the reply (from the recorded traces), and the session id a trace file or
    Langfuse names: control characters as escapes, brackets as text (`[/x]` raised MarkupError)."""
    item = LoadedScenario(
        scenario=Scenario.model_validate({"id": "chat", "turns": [{"user": "hi \x1b[31m[/x]"}]}),
        path=Path("chat.yaml"),
    )
    builder = TraceBuilder()
    builder.agent("concierge")
    builder.observations[0] = replace(builder.observations[0], output="Done \x1b[2J\x1b]0;title\x07 [b]x[/b]")
    result = recorded_dialogue(
        item,
        [RecordedTurn(trace=builder.build("t0"))],
        session="s[/x] \x1b[2J",
        settings=DialogueSettings(),
        metrics=with_dialogues(default_metrics()),
        judge_status=JudgeStatus(status="skipped", reason="--no-judge"),
    )
    console = Console(record=True, width=300, force_terminal=False)
    console.print(_recorded._turn_table(result))
    text = console.export_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "Turns of chat (session s[/x] \\x1b[2J)" in text
    assert "Done \\x1b[2J\\x1b]0;title\\x07 [b]x[/b]" in text
