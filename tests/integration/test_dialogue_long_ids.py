"""A dialogue whose id makes `<run id>:<scenario id>` longer than the 200 characters Langfuse takes as a
session id (the SDK drops a longer one): its turns still share one session, and its session scores are
on that session. Before, every turn's trace had no session and the scores were on one with no traces."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator.metrics import session_id
from tests.integration import dialogue_targets
from tests.integration.conftest import Cli
from tests.standin.langfuse_server import LangfuseStandIn

LONG = "booking-" + "a" * 180  # with a run id of 27 characters: a session id of 216


def _dialogue(scenario_id: str) -> str:
    return (
        f"id: {scenario_id}\ntarget: plain\ngoal: {{book: [hotel]}}\nturns:\n"
        "  - user: A hotel for 2 people on Saturday\n"
        "  - user: The Acorn, 3 nights\n"
    )


def test_a_long_dialogue_id_keeps_its_turns_in_one_session_with_its_scores(
    with_langfuse: Path, langfuse_standin: LangfuseStandIn, cli: Cli
) -> None:
    config = with_langfuse / "evaluator.toml"
    config.write_text(
        config.read_text() + '\n[targets.plain]\nentry = "tests.integration.dialogue_targets:plain"\n'
    )
    (with_langfuse / "dialogues").mkdir()
    (with_langfuse / "dialogues/long.yaml").write_text(_dialogue(LONG))
    dialogue_targets.calls.clear()
    code, text = cli("run", "dialogues", "--no-judge", "--output", "out.json")
    assert code in (0, 1), text
    document = json.loads(Path("out.json").read_text())
    [result] = document["results"]
    session = result["session_id"]
    assert len(f"{document['run']['id']}:{LONG}") > 200
    assert len(session) <= 200 and session == session_id(document["run"]["id"], LONG)
    for turn in result["turns"]:
        roots = [
            s for s in langfuse_standin.spans_for(turn["trace_id"]) if s.name == f"{LONG}#{turn['turn']}"
        ]
        assert roots and {s.attributes.get("session.id") for s in roots} == {session}
    on_session = {s["name"] for s in langfuse_standin.scores.values() if s.get("sessionId") == session}
    assert {"dialogue_task_completion", "dialogue_pass"} <= on_session
    assert "Dropping value" not in text


def test_session_ids_fit_and_stay_apart() -> None:
    run = "run-20261129T102723Z-fe1198"
    assert session_id(run, "short") == f"{run}:short"
    near = session_id(run, "x" * (200 - len(run) - 1))
    assert near == f"{run}:{'x' * (200 - len(run) - 1)}"  # 200: as it is
    one, other = session_id(run, "y" * 300 + "1"), session_id(run, "y" * 300 + "2")
    assert len(one) == len(other) == 200 and one != other and one.startswith(f"{run}:yyy")
