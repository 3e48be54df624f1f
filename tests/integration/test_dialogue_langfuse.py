"""Dialogues against the Langfuse stand-in, through the command line (DESIGN.md, "Dialogues"): each turn
its own trace (root span `<scenario id>#<turn>`) in the session `<run id>:<scenario id>`; `turn_*`
scores on the turns' traces, `dialogue_*` session scores; `report`, `compare` (gating on the dialogue
figures), JUnit (a case per dialogue, failing turns named) and `report --source langfuse`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import httpx
import pytest

from tests.dialogue_page import dialogue_sections
from tests.integration import dialogue_targets
from tests.integration.conftest import Cli
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn
from tests.standin.views import is_root

BOOKING = """\
id: booking
target: plain
goal: {book: [hotel]}
turns:
  - user: A hotel for 2 people on Saturday
    expected:
      intent: book_hotel
      slots: {hotel: {bookpeople: "2", bookday: saturday}}
      action: request
  - user: The Acorn, 3 nights
    expected:
      domain: hotel
      slots: {hotel: {bookpeople: "2", bookday: saturday, name: acorn guest house, bookstay: "3"}}
      agents: {include: [concierge]}
  - user: Book it
    expected: {action: book, agents: {include: [concierge]}}
"""


@pytest.fixture
def dialogue_project(with_langfuse: Path) -> Path:
    config = with_langfuse / "evaluator.toml"
    config.write_text(
        config.read_text()
        + '\n[targets.plain]\nentry = "tests.integration.dialogue_targets:plain"\n'
        + 'policy = {book_hotel = ["name", "bookday", "bookpeople", "bookstay"]}\n'
    )
    (with_langfuse / "dialogues").mkdir()
    (with_langfuse / "dialogues/booking.yaml").write_text(BOOKING)
    dialogue_targets.calls.clear()
    return with_langfuse


def _run(cli: Cli, name: str) -> dict[str, Any]:
    code, text = cli(
        "run",
        "dialogues",
        "--no-judge",
        "--run-name",
        name,
        "--output",
        f"{name}.json",
        "--junit",
        f"{name}.xml",
    )
    assert code in (0, 1), text
    document: dict[str, Any] = json.loads(Path(f"{name}.json").read_text())
    return document


def test_a_dialogue_in_langfuse_and_in_every_report(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _run(cli, "base")
    run_id = base["run"]["id"]
    [result] = base["results"]
    session = f"{run_id}:booking"
    assert result["status"] == "passed" and result["session_id"] == session
    assert base["run"]["dialogue"]["task_completion"] == 1.0

    # each turn its own trace, its root span named by turn, all in the dialogue's session
    for turn in result["turns"]:
        spans = langfuse_standin.spans_for(turn["trace_id"])
        ids = {s.span_id for s in spans}
        [root] = {s.span_id: s for s in spans if s.parent_span_id not in ids}.values()  # re-posts: once
        assert root.name == f"booking#{turn['turn']}"
        assert root.attributes.get("session.id") == session

    # turn scores on the turns' traces, dialogue scores on the session
    posted = [s for s in langfuse_standin.scores.values() if s["metadata"]["run_id"] == run_id]
    turn_jga = {s["traceId"]: s["value"] for s in posted if s["name"] == "turn_jga"}
    assert turn_jga == {result["turns"][0]["trace_id"]: 1.0, result["turns"][1]["trace_id"]: 1.0}
    [completion] = [s for s in posted if s["name"] == "dialogue_task_completion"]
    assert completion["sessionId"] == session and "traceId" not in completion and completion["value"] == 1
    assert {"dialogue_jga", "dialogue_policy_violations", "dialogue_system_correctness"} <= {
        s["name"] for s in posted if s.get("sessionId") == session
    }
    configs = {c["name"]: c["dataType"] for c in langfuse_standin.score_configs}
    assert configs.get("turn_jga") == "BOOLEAN" and configs.get("dialogue_jga") == "NUMERIC"

    # a candidate that never books: the goal fails, and compare gates on it
    monkeypatch.setattr(dialogue_targets, "books", False)
    cand = _run(cli, "cand")
    [failed] = cand["results"]
    assert failed["status"] == "failed" and failed["dialogue"]["task_completion"] == 0.0
    case = ET.fromstring(Path("cand.xml").read_text()).find(".//testcase")  # noqa: S314 (our own output)
    assert case is not None and case.get("name", "").startswith("booking")
    failure = case.find("failure")
    assert failure is not None
    assert (failure.text or "").splitlines() == [
        "turn 2: system_correct: action request instead of book",
        "goal: no booking action",
    ]
    assert ET.fromstring(Path("base.xml").read_text()).find(".//failure") is None  # noqa: S314

    code, text = cli("report", "--by", "run", "--json", "--html", "report.html")
    rows = json.loads(text)["rows"]
    assert code == 0 and "dialogue task completion" in Path("report.html").read_text()
    assert [r["dialogue_task_completion"] for r in rows] == [1.0, 0.0]
    code, text = cli("compare", "base", "cand", "--json")
    comparison = json.loads(text)
    assert code == 1 and "dialogue task completion" in comparison["regressions"]

    # rebuilt from Langfuse's scores
    code, text = cli("report", "--by", "run", "--source", "langfuse", "--json")
    by_run = {r["key"]: r for r in json.loads(text)["rows"]}
    assert by_run[run_id]["dialogue_task_completion"] == 1.0
    assert by_run[cand["run"]["id"]]["dialogue_task_completion"] == 0.0
    # one scenario per dialogue (its turns' own scores are not scenarios), passed as it did locally
    assert (by_run[run_id]["scenarios"], by_run[run_id]["passed"]) == (1, 1)
    assert (by_run[cand["run"]["id"]]["scenarios"], by_run[cand["run"]["id"]]["passed"]) == (1, 0)

    # the turns rebuilt from their traces' scores: the HTML view shows the candidate's dialogue turn by
    # turn as the local report does (statuses, per-turn and dialogue figures, what failed); only the
    # messages and states, which scores do not carry, are missing
    assert cli("report", "--source", "langfuse", "--html", "remote.html")[0] == 0
    [local] = dialogue_sections(Path("report.html").read_text())
    [remote] = dialogue_sections(Path("remote.html").read_text())
    assert remote["status"] == local["status"] == "failed"
    assert remote["figures"] == local["figures"]
    assert local["summary"] == "failed booking: goal NOT completed: no booking action; 3 of 3 turns ran"
    assert remote["summary"] == "failed booking: goal NOT completed: no booking action; 3 turns in the scores"
    assert "goal NOT completed: no booking action" in remote["summary"]
    assert [t["status"] for t in remote["turns"]] == ["passed", "passed", "failed"]
    for shown, rebuilt in zip(local["turns"], remote["turns"], strict=True):
        assert {k: rebuilt[k] for k in ("turn", "status", "figures", "problems")} == {
            k: shown[k] for k in ("turn", "status", "figures", "problems")
        }
    assert remote["turns"][2]["problems"] == ["not system-correct: action request instead of book"]
    assert remote["turns"][1]["figures"]["jga"] == "1" and remote["turns"][0]["figures"][
        "domain_accuracy"
    ] == (
        "not measured"  # turn 0 did not report its domain
    )
    assert remote["turns"][2]["verdicts"]["action"] == "not in the scores"
    assert remote["turns"][0]["verdicts"]["intent"] == local["turns"][0]["verdicts"]["intent"] == "matched"


def _get(standin: LangfuseStandIn, path: str, **params: str) -> list[dict[str, Any]]:
    """One page of a v4 experiments listing, through the stand-in's HTTP API (contract-checked)."""
    query = {"fromStartTime": "2020-01-01T00:00:00Z", "limit": "100", **params}
    with httpx.Client(base_url=standin.base_url, auth=standin.new_keys(), timeout=5) as api:
        response = api.get(path, params=query)
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["data"]
    return rows


def test_run_with_a_baseline_gates_on_the_dialogue_figures(
    dialogue_project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --baseline` compares as `compare` does: a candidate that never books fails its goal, and the
    dialogue task completion is a regression (before, the run's own comparison left dialogues out)."""
    _run(cli, "base")
    monkeypatch.setattr(dialogue_targets, "books", False)
    code, text = cli("run", "dialogues", "--no-judge", "--baseline", "base")
    assert code == 1
    assert "REGRESSION" in text and "dialogue task completion" in text


def test_a_dialogue_is_one_experiment_item_its_first_turns_trace(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """A dialogue is one dataset item; its run of the item is its first turn's trace (an experiment
    item names one trace: linking every turn would count the item as run three times); the dataset-level
    dialogue figures of `run.dialogue` are the experiment's `run_dialogue_<key>` scores."""
    config = dialogue_project / "evaluator.toml"
    config.write_text(config.read_text() + '\n[datasets]\nname = "dialogues"\n')
    code, out = cli("datasets", "push", "dialogues")
    assert code == 0 and "1 created" in out, out
    item = langfuse_standin.dataset_items["dialogues--booking"]
    assert item["input"] == ["A hotel for 2 people on Saturday", "The Acorn, 3 nights", "Book it"]
    code, out = cli("run", "dialogues", "--no-judge", "--run-name", "exp", "--output", "exp.json")
    assert code == 0, out
    document = json.loads(Path("exp.json").read_text())
    [result] = document["results"]
    turn_traces = [turn["trace_id"] for turn in result["turns"]]
    assert result["trace_id"] == turn_traces[0]

    [experiment] = _get(langfuse_standin, "/api/public/experiments", fields="core,scores")
    [linked] = _get(langfuse_standin, "/api/public/experiment-items", experimentId=experiment["id"])
    assert linked["experimentItemId"] == "dialogues--booking" and linked["traceId"] == turn_traces[0]
    [root] = {s.span_id for s in langfuse_standin.spans_for(turn_traces[0]) if is_root(s)}
    assert linked["id"] == root  # the item's observation: the first turn's root span
    for later in turn_traces[1:]:  # the other turns are the item's session, not runs of the item
        spans = langfuse_standin.spans_for(later)
        assert spans and not any(k.startswith("langfuse.experiment.") for s in spans for k in s.attributes)
    assert 'Experiment "exp" on dataset "dialogues": 1 scenario traces linked' in out

    # the dataset-level figures, each by its own rule (worked out by hand from the three turns: every
    # measured JGA matched (turns 0 and 1: 2 of 2), the goal completed (1 of 1 dialogue), no violation
    # in 3 turns; 3 turns, 1 dialogue); they are `run.dialogue` of run --output
    scores = {s["name"]: s["value"] for s in experiment["scores"]}
    figures = document["run"]["dialogue"]
    assert (scores["run_dialogue_jga"], figures["jga"]) == (1.0, 1.0)
    assert (scores["run_dialogue_task_completion"], figures["task_completion"]) == (1.0, 1.0)
    assert (scores["run_dialogue_policy_violation_rate"], figures["policy_violation_rate"]) == (0.0, 0.0)
    assert (scores["run_dialogue_turns"], scores["run_dialogue_dialogues"]) == (3.0, 1.0)
    assert scores["run_pass_rate"] == 1.0
    assert {
        name: value
        for name, value in scores.items()
        if name.startswith("run_dialogue_") and "crag" not in name
    } == {
        f"run_dialogue_{key}": float(value)
        for key, value in figures.items()
        if isinstance(value, int | float)
    }


def test_a_state_given_with_reply_is_in_the_turns_trace_so_the_recorded_session_measures_it(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    """Turn 0 of the plain target reports its state only through `evaluator.Reply`: it is written on
    the turn's root span, so validating the recorded session measures turn 0's intent as the run did."""
    ran = _run(cli, "recorded")
    [result] = ran["results"]
    assert result["turns"][0]["metrics"]["intent_accuracy"] == 1.0
    code, text = cli(
        "validate", "--scenario", "dialogues/booking.yaml", "--session-id", result["session_id"], "--json"
    )
    assert code == 0, text
    recorded = json.loads(text)
    assert recorded["turns"][0]["state"]["intent"] == "book_hotel"
    assert recorded["turns"][0]["metrics"]["intent_accuracy"] == 1.0
    assert recorded["dialogue"] == result["dialogue"]


JUDGED = """\
id: judged
target: plain
turns:
  - user: A hotel for 2 people on Saturday
  - user: Book it, The Acorn, 3 nights
    expected:
      answer: {ground_truth: Your room at the Acorn Guest House is booked.}
"""


def test_judged_turns_and_their_session_scores_in_langfuse(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the OpenAI-compatible judge stand-in (quality 0.9 / 0.8 / 0.7, correctness CORRECT): every
    turn judged with the turn prompt, its quality and correctness scores on its trace, the dialogue's
    means (0.9 / 0.8 / 0.7: every turn scores the same) as session scores."""
    (dialogue_project / "dialogues/judged.yaml").write_text(JUDGED)
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        assert cli("prompts", "push")[0] == 0
        code, text = cli("run", "dialogues", "--output", "judged.json")
        assert code in (0, 1), text
        requests = len(judge.requests)
    document = json.loads(Path("judged.json").read_text())
    run_id = document["run"]["id"]
    by_id = {r["scenario_id"]: r for r in document["results"]}
    turns = [t for r in by_id.values() for t in r["turns"]]
    assert len(turns) == 5 and {t["judge_status"]["status"] for t in turns} == {"scored"}
    assert {t["quality"]["prompt"]["name"] for t in turns} == {"evaluation/turn_quality"}
    assert by_id["judged"]["turns"][1]["correctness"]["verdict"] == "correct"
    assert requests == 5 + 1  # a quality request per turn, the one semantic correctness step
    assert document["run"]["dialogue"]["response_quality"] == pytest.approx(0.9)
    assert document["run"]["judge"]["calls"] == requests
    assert "response quality 0.90" in " ".join(text.split())

    posted = [s for s in langfuse_standin.scores.values() if s["metadata"]["run_id"] == run_id]
    session = f"{run_id}:judged"
    on_session = {s["name"]: s for s in posted if s.get("sessionId") == session}
    assert on_session["dialogue_response_quality"]["value"] == pytest.approx(0.9)
    assert on_session["dialogue_response_completeness"]["value"] == pytest.approx(0.7)
    assert on_session["dialogue_multi_turn_conversation_score"]["value"] == 1
    on_traces = {(s.get("traceId"), s["name"]): s for s in posted if not s.get("sessionId")}
    second = by_id["judged"]["turns"][1]["trace_id"]
    assert on_traces[(second, "correctness")]["value"] == "correct"
    assert (
        on_traces[(second, "quality_answer_quality")]["metadata"]["judge_prompt"] == "evaluation/turn_quality"
    )
    configs = {c["name"]: c["dataType"] for c in langfuse_standin.score_configs}
    assert configs.get("dialogue_response_quality") == "NUMERIC"


def test_the_score_configs_give_a_count_no_top_and_the_conversation_score_its_range(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    _run(cli, "ranges")
    configs = {c["name"]: (c["minValue"], c["maxValue"]) for c in langfuse_standin.score_configs}
    assert configs["dialogue_policy_violations"] == (0, None)  # a count: 2 violations is a 2
    assert configs["dialogue_multi_turn_conversation_score"] == (-1, 1)  # mean(correct) - mean(hallucinated)
    assert configs["dialogue_jga"] == (0, 1)


def test_a_judged_dialogue_keeps_its_turns_judge_traces_for_sync(
    dialogue_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn's judgements are traces of their own (in no dialogue session): the store keeps their
    spans with the dialogue's result, beside the turns' traces (in its session), so that `sync` can
    send them again."""
    (dialogue_project / "dialogues/judged.yaml").write_text(JUDGED)
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = cli("run", "dialogues/judged.yaml", "--output", "judged.json")
        assert code in (0, 1), text
        requests = len(judge.requests)
    document = json.loads(Path("judged.json").read_text())
    (result,) = document["results"]
    judge_traces = {d["trace_id"] for turn in result["turns"] for d in turn["judge"].values()}
    assert len(judge_traces) == requests == 3  # each turn's quality, the second's correctness step
    with sqlite3.connect(dialogue_project / "evaluator.db") as db:
        rows = db.execute("SELECT trace_id, spans, session_id FROM traces").fetchall()
    kept = {trace_id: (spans, session) for trace_id, spans, session in rows}
    for trace_id in judge_traces:
        spans, session = kept[trace_id]
        assert session is None
        assert spans == len({s.span_id for s in langfuse_standin.spans_for(trace_id)}) >= 1
    session = f"{document['run']['id']}:judged"
    assert [kept[turn["trace_id"]][1] for turn in result["turns"]] == [session, session]
