"""The LLM judges on recorded dialogue turns (DESIGN.md, "Dialogues", Recorded dialogues): `validate
--scenario DIALOGUE --session-id ID` (or `--trace` once per turn) judges each turn as a run's judge
stage does (the turn prompt, the conversation before the turn, the seed's rubric), with the judge
stand-in; the dialogue's `response_*` figures worked out by hand; `--no-judge` leaves them not measured;
a reply that is not JSON leaves its turn unscored and nothing else lost; the verdict cache and
`--no-cache` as for one trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, Cli
from tests.integration.test_recorded import _save_turns
from tests.standin.judge_server import JudgeStandIn, is_repair
from tests.standin.langfuse_server import LangfuseStandIn

MISSING_NIGHTS = ROOT / "scenarios/concierge/concierge-hotel-book-missing-nights.yaml"
ONE_TURN_FIELDS = ("workflow", "trajectory", "answer", "metrics", "state", "status")


def _json(text: str) -> dict[str, Any]:
    """The result object `--json` printed (stderr's warnings after it: a judge prompt the stand-in
    does not serve, and the local file used instead)."""
    document, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
    assert isinstance(document, dict)
    return document


def _quality(answer: float, factual: float, complete: float) -> str:
    return json.dumps(
        {"answer_quality": answer, "factual_correctness": factual, "completeness": complete, "reasoning": "r"}
    )


def _ran(cli: Cli) -> dict[str, Any]:
    """The missing-nights dialogue run by the demo (3 turns, in one Langfuse session), unjudged."""
    code, text = cli("run", str(MISSING_NIGHTS), "--no-judge", "--output", "run.json")
    assert code == 1, text  # prompt v1's policy flaw: it books before it knows the nights
    [result] = json.loads(Path("run.json").read_text())["results"]
    assert len(result["turns"]) == 3
    return dict(result)


def _validate_session(cli: Cli, session: str, *more: str) -> tuple[int, str]:
    return cli("validate", "--scenario", str(MISSING_NIGHTS), "--session-id", session, "--json", *more)


def _user_block(body: dict[str, Any], tag: str) -> str:
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    start, end = text.index(f"<{tag}>\n") + len(tag) + 3, text.index(f"\n</{tag}>")
    return str(text[start:end])


def test_a_recorded_session_has_every_turn_judged_with_the_conversation_so_far(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worked out by hand: turn 0 scores (0.8, 1.0, 0.6), turn 1 (0.6, 0.5, 1.0), turn 2 (0.4, 0.6,
    0.2); the dialogue's response_quality is (0.8 + 0.6 + 0.4) / 3 = 0.6, its factual correctness
    (1.0 + 0.5 + 0.6) / 3 = 0.7, its completeness (0.6 + 1.0 + 0.2) / 3 = 0.6. The turns are judged in
    order, one request each, so the scripted replies go to turns 0, 1, 2."""
    ran = _ran(cli)
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        judge.script(_quality(0.8, 1.0, 0.6), _quality(0.6, 0.5, 1.0), _quality(0.4, 0.6, 0.2))
        code, text = _validate_session(cli, ran["session_id"])
        bodies = judge.bodies()
    assert code == 1, text  # the judges never decide pass or fail: failed as the run found it
    document = _json(text)
    turns = document["turns"]
    assert len(bodies) == 3
    assert [t["quality"]["answer_quality"] for t in turns] == [0.8, 0.6, 0.4]
    assert [t["judge_status"]["status"] for t in turns] == ["scored"] * 3
    assert turns[0]["quality"]["prompt"] == {"name": "evaluation/turn_quality", "version": 1}
    figures = document["dialogue"]
    assert figures["response_quality"] == pytest.approx(0.6)
    assert figures["response_factual_correctness"] == pytest.approx(0.7)
    assert figures["response_completeness"] == pytest.approx(0.6)
    assert document["judge_status"] == {"status": "scored", "reason": ""}
    # the figures the judges do not touch are the run's, turn by turn
    for key in ("status", "dialogue_details"):
        assert document[key] == ran[key], key
    for mine, theirs in zip(turns, ran["turns"], strict=True):
        for key in ONE_TURN_FIELDS:
            assert mine[key] == theirs[key], (mine["turn"], key)

    # what the judge was shown: the turn prompt, the user's message, the conversation before the turn
    assert [_user_block(b, "input") for b in bodies] == [t["input"] for t in ran["turns"]]
    assert _user_block(bodies[0], "history") == "(none)"
    second = _user_block(bodies[2], "history")
    assert f'<message role="user">\n{ran["turns"][1]["input"]}\n</message>' in second
    assert second.count('<message role="assistant">') == 2
    assert "one turn of a conversation" in bodies[0]["messages"][0]["content"]

    # the verdict cache: asked again only with --no-cache
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = _validate_session(cli, ran["session_id"])
        assert judge.bodies() == []
        assert [t["quality"]["answer_quality"] for t in _json(text)["turns"]] == [0.8, 0.6, 0.4]
        code, text = _validate_session(cli, ran["session_id"], "--no-cache")
        assert len(judge.bodies()) == 3
    assert [t["quality"]["answer_quality"] for t in _json(text)["turns"]] == [0.9] * 3  # the stand-in's


def test_the_judges_see_what_a_run_shows_them(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run judges its turns; the recorded session, read back, is judged with the same messages
    (prompt, reply, conversation before the turn): so the run's verdicts are in the cache, and the
    recorded turns take them without a call."""
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = cli("run", str(MISSING_NIGHTS), "--output", "run.json", "--no-cache")
        assert code == 1, text
        asked_by_the_run = judge.bodies()
        [ran] = json.loads(Path("run.json").read_text())["results"]
        code, text = _validate_session(cli, ran["session_id"], "--no-cache")
        asked_by_validate = judge.bodies()[len(asked_by_the_run) :]
    assert len(asked_by_the_run) == 3
    key = lambda body: json.dumps(body["messages"], sort_keys=True)  # noqa: E731
    assert sorted(map(key, asked_by_validate)) == sorted(map(key, asked_by_the_run))
    recorded = _json(text)
    assert recorded["dialogue"]["response_quality"] == ran["dialogue"]["response_quality"] == 0.9
    for mine, theirs in zip(recorded["turns"], ran["turns"], strict=True):
        assert mine["quality"] == theirs["quality"]
        assert mine["judge_status"] == theirs["judge_status"]


def test_no_judge_leaves_the_judged_figures_not_measured(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = _ran(cli)
    files = _save_turns(langfuse_standin, ran, with_langfuse / "turns")
    arguments = [a for path in files for a in ("--trace", path)]
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = cli("validate", "--scenario", str(MISSING_NIGHTS), *arguments, "--json", "--no-judge")
        assert judge.bodies() == []
    assert code == 1, text
    document = _json(text)
    for key in ("response_quality", "response_factual_correctness", "response_completeness"):
        assert key in document["dialogue"] and document["dialogue"][key] is None  # never 0
    assert {json.dumps(t["judge_status"]) for t in document["turns"]} == {
        json.dumps({"status": "skipped", "reason": "--no-judge was given"})
    }
    assert all(t["quality"] is None and t["correctness"] is None for t in document["turns"])
    assert document["judge_status"] == {"status": "skipped", "reason": "--no-judge was given"}
    assert document["dialogue_details"] == ran["dialogue_details"]


def test_a_reply_that_is_not_json_leaves_its_turn_unscored_and_loses_nothing(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turn 1's reply is not JSON, nor is the reply to the repair request: that turn is unscored, with
    the reason and the raw reply kept. Turns 0 and 2 keep their verdicts: response_quality (0.8 +
    0.4) / 2 = 0.6, factual correctness (1.0 + 0.6) / 2 = 0.8, completeness (0.6 + 0.2) / 2 = 0.4."""
    ran = _ran(cli)
    files = _save_turns(langfuse_standin, ran, with_langfuse / "turns")
    arguments = [a for path in files for a in ("--trace", path)]
    with JudgeStandIn() as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        judge.script(
            _quality(0.8, 1.0, 0.6),
            "The reply reads well to me.",
            "Still no JSON, sorry.",
            _quality(0.4, 0.6, 0.2),
        )
        code, text = cli("validate", "--scenario", str(MISSING_NIGHTS), *arguments, "--json", "--no-cache")
        bodies = judge.bodies()
    assert code == 1, text
    assert [is_repair(b) for b in bodies] == [False, False, True, False]
    document = _json(text)
    turns = document["turns"]
    assert [t["judge_status"]["status"] for t in turns] == ["scored", "unscored", "scored"]
    assert turns[1]["judge_status"]["reason"].startswith("quality: the judge's reply was not valid")
    assert turns[1]["quality"] is None
    assert "Still no JSON, sorry." in json.dumps(turns[1]["judge"])  # the raw reply is kept
    figures = document["dialogue"]
    assert figures["response_quality"] == pytest.approx(0.6)
    assert figures["response_factual_correctness"] == pytest.approx(0.8)
    assert figures["response_completeness"] == pytest.approx(0.4)
    assert document["judge_status"]["status"] == "unscored"
    assert document["judge_status"]["reason"].startswith("turn 1: quality: the judge's reply was not valid")
    # the turn's own verdicts stand: the same as the run found them
    for mine, theirs in zip(turns, ran["turns"], strict=True):
        for key in ONE_TURN_FIELDS:
            assert mine[key] == theirs[key], (mine["turn"], key)
    assert document["status"] == ran["status"] and document["dialogue_details"] == ran["dialogue_details"]

    # on the terminal: the reason, with the turn it is about
    with JudgeStandIn(mode="invalid") as judge:
        monkeypatch.setenv("EVALUATOR_JUDGE_BASE_URL", judge.base_url)
        code, text = cli("validate", "--scenario", str(MISSING_NIGHTS), *arguments, "--no-cache")
    assert code == 1
    assert "Judges unscored: turn 0: quality: the judge's reply was not valid" in " ".join(text.split())
