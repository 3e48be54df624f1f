"""Running dialogues (DESIGN.md, "Dialogues"): the target called once per user turn with the history, the
turn and a session id stable for the dialogue run; each turn its own trace; the state read from the
trace (renamed by `state_keys`) or from `evaluator.Reply`; a failing turn ends the dialogue; a stateful
LangGraph target keeps its memory in a checkpointer keyed by the session id."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluator.results import scores_for
from evaluator.run import SuiteOptions, run_suite
from evaluator.run._gc import YOUNG_THRESHOLD
from evaluator.scenarios import Scenario
from evaluator.storage import Store
from tests.integration import dialogue_targets

CONFIG = """\
[targets.graph]
entry = "tests.integration.dialogue_targets:stateful"
state_keys = {slots = "belief_state"}
policy = {book_hotel = ["name", "bookday", "bookpeople"]}
[targets.searcher]
entry = "tests.integration.dialogue_targets:searcher"
entities = "db.json"
[targets.lister]
entry = "tests.integration.dialogue_targets:lister"
entities = "db.json"
[run]
timeout_seconds = 20
[store]
path = "state/evaluator.db"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    prompts = Path(__file__).resolve().parents[2] / "prompts"
    (tmp_path / "evaluator.toml").write_text(CONFIG + f'[prompts]\ndir = "{prompts}"\n')
    (tmp_path / "db.json").write_text(json.dumps([{"name": "Acorn Guest House"}, {"name": "Hamilton Lodge"}]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATOR_CONFIG", raising=False)
    dialogue_targets.calls.clear()
    return tmp_path


def _dialogue(sid: str, target: str, turns: list[dict[str, Any]], **more: Any) -> Scenario:
    return Scenario.model_validate({"id": sid, "target": target, "turns": turns, **more})


BOOKING = [
    {
        "user": "A hotel for 2 people on Saturday",
        "expected": {
            "intent": "book_hotel",
            "slots": {"hotel": {"bookpeople": "2", "bookday": "saturday"}},
            "action": "request",
        },
    },
    {
        "user": "The Acorn, 3 nights",
        "expected": {
            "intent": "book_hotel",
            "slots": {
                "hotel": {
                    "bookpeople": "2",
                    "bookday": "saturday",
                    "name": "acorn guest house",
                    "bookstay": "3",
                }
            },
            "action": "request",
            "agents": {"include": ["concierge"]},
        },
    },
    {"user": "Book it", "expected": {"action": "book", "agents": {"include": ["concierge"]}}},
]


def test_a_plain_function_target_runs_turn_by_turn(project: Path) -> None:
    suite = run_suite(
        scenarios=[_dialogue("plain-booking", "plain", BOOKING, goal={"book": ["hotel"]})],
        targets={"plain": dialogue_targets.plain},
    )
    [result] = suite.results
    session = f"{suite.run.id}:plain-booking"
    calls = dialogue_targets.calls
    assert [c["turn"] for c in calls] == [0, 1, 2]
    assert {c["session_id"] for c in calls} == {session}
    assert calls[0]["history"] == []
    assert calls[2]["history"] == [
        {"role": "user", "content": "A hotel for 2 people on Saturday"},
        {"role": "assistant", "content": "How many nights?"},
        {"role": "user", "content": "The Acorn, 3 nights"},
        {"role": "assistant", "content": "How many nights?"},
    ]
    document = result.to_json()
    assert document["kind"] == "dialogue" and document["session_id"] == session
    turns = document["turns"]
    assert [t["status"] for t in turns] == ["passed", "passed", "passed"]
    assert len({t["trace_id"] for t in turns}) == 3
    assert turns[0]["state"] == {  # from evaluator.Reply
        "intent": "book_hotel",
        "slots": {"hotel": {"bookpeople": "2", "bookday": "saturday"}},
        "action": "request",
    }
    assert turns[1]["state"]["domain"] == "hotel"  # from the trace's metadata
    assert turns[1]["metrics"]["jga"] == 1.0 and turns[1]["workflow"]["pass"] is True
    assert turns[0]["metrics"]["domain_accuracy"] is None  # turn 0 did not report its domain
    assert document["dialogue"]["task_completion"] == 1.0
    assert document["dialogue"]["policy_violations"] == 0  # no policy guards these actions
    assert result.status == "passed"
    names = {(s.name, s.session_id is not None) for s in scores_for(result, run_id=suite.run.id)}
    assert ("turn_jga", False) in names and ("dialogue_task_completion", True) in names
    assert ("dialogue_jga", True) in names and ("workflow_pass", False) in names


def test_a_failing_turn_ends_the_dialogue(project: Path) -> None:
    turns = [BOOKING[0], {"user": "crash"}, BOOKING[2]]
    suite = run_suite(
        scenarios=[_dialogue("crashes", "plain", turns)], targets={"plain": dialogue_targets.plain}
    )
    [result] = suite.results
    assert result.status == "error"
    assert result.error == "turn 1: RuntimeError: the concierge crashed"
    assert [t["status"] for t in result.to_json()["turns"]] == ["passed", "error", "not run"]
    assert [c["turn"] for c in dialogue_targets.calls] == [0, 1]
    assert result.problems() == ["turn 1: RuntimeError: the concierge crashed"]


def test_the_timeout_is_per_turn_and_ends_the_dialogue(project: Path) -> None:
    """Each turn gets the whole --timeout; a turn past it ends the dialogue at once (the hung call is
    left to return on its own), while another dialogue runs beside it."""
    dialogue_targets.release.clear()
    turns = [BOOKING[0], {"user": "hang"}, BOOKING[2]]
    try:
        suite = run_suite(
            scenarios=[_dialogue("hangs", "plain", turns), _dialogue("fine", "plain", BOOKING[:1])],
            options=SuiteOptions(timeout=1, concurrency=2),
            targets={"plain": dialogue_targets.plain},
        )
    finally:
        dialogue_targets.release.set()
    by_id = {r.scenario_id: r for r in suite.results}
    assert by_id["hangs"].error == "turn 1: timed out after 1 s"
    assert [t["status"] for t in by_id["hangs"].to_json()["turns"]] == ["passed", "error", "not run"]
    assert by_id["fine"].status == "passed"


def test_a_stateful_langgraph_target_remembers_by_session(project: Path) -> None:
    agents = {"include": ["track"], "strict": False}  # the graph's node is read as an agent
    turns = [
        {
            "user": "A hotel for 2 people on Saturday",
            "expected": {"slots": {"hotel": {"bookpeople": "2", "bookday": "saturday"}}, "agents": agents},
        },
        {
            "user": "The Acorn please",
            "expected": {
                "slots": {"hotel": {"bookpeople": "2", "bookday": "saturday", "name": "acorn guest house"}},
                "action": "book",
                "agents": agents,
            },
        },
    ]
    suite = run_suite(
        scenarios=[_dialogue("graph-a", "graph", turns), _dialogue("graph-b", "graph", turns[:1])],
        options=SuiteOptions(concurrency=2),
    )
    by_id = {r.scenario_id: r.to_json() for r in suite.results}
    first = by_id["graph-a"]["turns"]
    # The second turn's message names no day: the day comes from the checkpointer's memory of turn 0.
    assert first[1]["state"]["slots"] == {
        "hotel": {"bookpeople": "2", "bookday": "saturday", "name": "acorn guest house"}
    }
    assert first[1]["output"] == "Booked acorn guest house."
    assert [t["metrics"]["jga"] for t in first] == [1.0, 1.0]
    assert first[1]["metrics"]["policy_compliant"] == 1.0  # the configured policy is met
    assert by_id["graph-a"]["status"] == "passed", suite.results[0].problems()
    # Another dialogue is another session: it starts with no memory.
    assert by_id["graph-b"]["turns"][0]["output"] == "Which name?"


def test_run_output_has_the_dialogue_figures_and_says_what_was_never_reported(project: Path) -> None:
    """`run --output` carries `run.dialogue` by each metric's dataset rule; the summary names the state
    keys no turn reported, once, with how to report them."""
    output = project / "out.json"
    booking = _dialogue("booking", "plain", BOOKING, goal={"book": ["hotel"]})
    short = _dialogue("short", "plain", BOOKING[:1], goal={"inform": ["acorn"]})
    suite = run_suite(
        scenarios=[booking, short],
        options=SuiteOptions(output=output),
        targets={"plain": dialogue_targets.plain},
    )
    document = json.loads(output.read_text())
    run = document["run"]["dialogue"]
    assert run["dialogues"] == 2 and run["turns"] == 4
    # 'booking' completes its goal; 'short' never mentions "acorn": 1 of 2 dialogues with a goal.
    assert run["task_completion"] == 0.5
    assert run["total_policy_violations"] == 0 and run["policy_violation_rate"] == 0.0
    assert run["jga"] == 1.0  # the mean over the 3 turns that expected slots
    assert run["act_accuracy"] is None  # never reported: not measured, not 0
    assert run["unreported"] == ["acts"]
    line = suite.results[0].metrics.get("dialogue").summary_line(run)  # type: ignore[union-attr]
    assert line is not None and "Never reported: acts" in line and "evaluator.Reply" in line
    assert [r["kind"] for r in document["results"]] == ["dialogue", "dialogue"]
    assert document["results"][1]["dialogue"]["task_completion"] == 0.0
    assert document["results"][1]["status"] == "failed"
    assert document["run"]["metrics"]["dialogue_task_completion"] == 0.5


def test_report_and_compare_show_the_dialogue_figures_by_their_dataset_rule(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """JGA's run figure is the mean over every measured turn, in `run.dialogue`, in the run's stored
    figures, in `report` and in `compare` alike; intent accuracy's is the mean of the dialogue means.
    Baseline: 'booking' matches both its turns with slots, 'sunday' misses its one turn: JGA 2/3 (the
    mean of the dialogue means would say 1/2). Candidate: 'sunday' expects what the user said: 3/3."""
    from evaluator.cli import main

    def sunday(day: str) -> Scenario:
        expected = {"intent": "book_hotel", "slots": {"hotel": {"bookpeople": "2", "bookday": day}}}
        turn = {"user": "A hotel for 2 people on Sunday", "expected": expected}
        return _dialogue("sunday", "plain", [turn])

    documents = []
    for name, day in (("base", "saturday"), ("cand", "sunday")):
        output = project / f"{name}.json"
        run_suite(
            scenarios=[_dialogue("booking", "plain", BOOKING), sunday(day)],
            options=SuiteOptions(output=output, run_name=name),
            targets={"plain": dialogue_targets.plain},
        )
        documents.append(json.loads(output.read_text())["run"])
    base, cand = documents
    assert round(base["dialogue"]["jga"], 4) == round(2 / 3, 4) == base["metrics"]["dialogue_jga"]
    assert cand["dialogue"]["jga"] == 1.0 == cand["metrics"]["dialogue_jga"]
    assert base["dialogue"]["intent_accuracy"] == 1.0 == base["metrics"]["dialogue_intent_accuracy"]
    # slot precision over the three turns with slots: 2/2, 4/4, then 1 of 2 (sunday for saturday)
    assert base["dialogue"]["details"]["slot_accuracy"]["precision"] == pytest.approx(2.5 / 3)

    def cli(*args: str) -> str:
        monkeypatch.setattr(sys, "argv", ["evaluator", *args])
        monkeypatch.setenv("COLUMNS", "200")
        with pytest.raises(SystemExit):
            main()
        return capsys.readouterr().out

    rows = json.loads(cli("report", "--by", "run", "--json"))["rows"]
    assert [r["dialogue_jga"] for r in rows] == [round(2 / 3, 4), 1.0]
    # the terminal's table has the headline dialogue figures as columns (no goal here: no task column)
    table = cli("report", "--by", "run")
    assert "Per run: dialogues" in table
    assert all(column in table for column in ("sys ok", "JGA", "slots", "policy")), table
    assert "66.7%" in table, table
    [check] = [
        c
        for c in json.loads(cli("compare", "base", "cand", "--json"))["checks"]
        if c["figure"] == "dialogue_jga"
    ]
    assert (check["baseline"], check["candidate"], check["change"]) == (round(2 / 3, 4), 1.0, 33.33)


def test_with_judges_the_turns_are_judged_and_verify_skips_dialogues(project: Path) -> None:
    from evaluator.judge import FakeJudgeModel
    from evaluator.run import verify_run

    quality = '{"answer_quality": 1.0, "factual_correctness": 1.0, "completeness": 1.0, "reasoning": "r"}'
    model = FakeJudgeModel(default=quality)
    single = Scenario.model_validate(
        {"id": "single", "target": "plain", "input": "hello", "expected": {"answer": {"criteria": "polite"}}}
    )
    suite = run_suite(
        scenarios=[_dialogue("judged", "plain", BOOKING[:1]), single],
        options=SuiteOptions(judge_model=model),
        targets={"plain": dialogue_targets.plain},
    )
    result = suite.results[0]
    [turn] = result.to_json()["turns"]
    assert turn["status"] == "passed"
    assert turn["judge_status"] == {"status": "scored", "reason": ""}
    assert turn["quality"]["answer_quality"] == 1.0
    assert len(model.calls) == 2  # the turn's and the single-turn scenario's
    assert sum("polite" in str(call) for call in model.calls) == 1
    report = verify_run(None, {}, [result], deadline_seconds=5)  # type: ignore[arg-type]
    assert report.missing == {"judged": "not checked: a dialogue (its turns are not verified yet)"}


def test_entity_hallucination_checks_replies_against_the_turns_tool_outputs(project: Path) -> None:
    """A catalogued name the reply gives that no tool of the turn returned is invented; a turn that ran
    no tool is not measured (the name may come from an earlier turn's search)."""
    turns = [{"user": "A hotel in the north"}, {"user": "The Acorn then"}]
    suite = run_suite(scenarios=[_dialogue("entities", "searcher", turns)])
    first, second = suite.results[0].to_json()["turns"]
    assert first["metrics"]["entity_hallucination_rate"] == 0.5
    assert first["details"]["entity_hallucination_rate"]["hallucinated"] == ["Hamilton Lodge"]
    assert first["metrics"]["system_correct"] == 0.0
    assert second["metrics"]["entity_hallucination_rate"] is None


def test_a_name_on_a_line_of_its_own_in_a_tool_output_was_returned(project: Path) -> None:
    """A tool that prints one hotel a line returned each name it printed: its output, however the
    trace writes it (JSON escapes the newline before the name), is read as the text the tool gave."""
    suite = run_suite(scenarios=[_dialogue("listed", "lister", [{"user": "A hotel in the north"}])])
    [turn] = suite.results[0].to_json()["turns"]
    assert turn["details"]["entity_hallucination_rate"]["hallucinated"] == []
    assert turn["metrics"]["entity_hallucination_rate"] == 0.0


def test_the_run_summary_gives_the_dialogue_figures_without_any_judge(
    project: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """`evaluator run` on dialogues, with no judge configured, ends with the run's dialogue figures
    (they were printed only beside the judges' usage, so a run without judges showed none)."""
    (project / "talk.yaml").write_text(
        "id: talk\ntarget: lister\nturns:\n  - user: A hotel in the north\n"
        "    expected: {slots: {hotel: {area: north}}}\n"
    )
    _code, text = cli("run", "talk.yaml", "--no-judge")
    said = " ".join(text.split())  # the console wraps long lines
    assert "dialogues: 1 dialogues, 1 turns, task completion not measured, JGA not measured" in said
    assert "Never reported: action, acts, domain, intent, slots: put them in the metadata" in said


def test_the_results_are_stored_while_the_collector_is_still_tuned_for_the_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's end (its result documents, totals and provenance) is written before the collector is
    restored (run._gc): a full collection there would walk everything the run had frozen (1 s at
    1,000 dialogues of 8 turns). Pinned by what the collector's settings are inside `finish_run`."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    seen: list[tuple[int, int]] = []
    finish_run = Store.finish_run

    def spying(self: Store, *args: Any, **kwargs: Any) -> None:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        finish_run(self, *args, **kwargs)

    monkeypatch.setattr(Store, "finish_run", spying)
    try:
        suite = run_suite(
            scenarios=[_dialogue("plain-booking", "plain", BOOKING)],
            targets={"plain": dialogue_targets.plain},
        )
        after = gc.get_threshold()[0], gc.get_freeze_count()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert suite.results[0].status != "error"
    [(young, frozen)] = seen
    assert young == YOUNG_THRESHOLD and frozen > 1000
    assert after == (700, 0)  # restored once the run is over


def test_the_console_names_a_state_of_a_shape_the_metrics_cannot_read(project: Path) -> None:
    """A state the metrics cannot read is not measured; the run's console summary says so (it was only
    in the result objects' `warnings`), and the "never reported" hint keeps its `[targets.X]`."""
    from rich.console import Console

    from evaluator.reports import print_summary
    from evaluator.run import Reply

    def garbled(request: Any) -> Reply:
        return Reply("Done.", state={"domain": ["hotel"], "slots": "hotel-area=centre"})

    turn = {"user": "A hotel", "expected": {"domain": "hotel", "slots": {"hotel": {"area": "centre"}}}}
    suite = run_suite(scenarios=[_dialogue("garbled", "g", [turn])], targets={"g": garbled})
    console = Console(record=True, width=300)
    print_summary(console, suite.run, suite.results, expected_count=1)
    text = console.export_text()
    assert "2 warning(s) in 1 scenario(s)" in text
    assert "garbled: turn 0: the reported domain ['hotel'] is not of a shape" in text
    assert "garbled: turn 0: the reported slots 'hotel-area=centre' is not of a shape" in text
    assert "renamed by [targets.X] state_keys" in text


def test_a_turn_the_evaluator_fails_ends_the_dialogue_as_an_evaluator_error_scored_against_nobody(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception inside the evaluator on a turn (DESIGN.md, The pipeline: "never scored against the
    agent") makes the dialogue an evaluator error: counted, in no figure, with no score. By hand, with
    'ok' (3 turns, passed) and 'bug' (turn 0 passed, turn 1 the evaluator's error, turn 2 not run):
    pass_rate = 1 / 1 = 1.0 (not 1 / 2 = 0.5: the bug was the agent's failure), evaluator_errors = 1;
    `run.dialogue` rests on 'ok' alone, dialogues = 1 and turns = 3 (not 2 and 4), as the run's
    `dialogue_*` figures do (dialogue_policy_compliant n = 1)."""
    from evaluator.run import pipeline

    real = pipeline.evaluate

    def evaluate(*args: Any, **kwargs: Any) -> Any:
        if any(getattr(arg, "id", None) == "bug#1" for arg in args):
            raise KeyError("an evaluator bug at bug#1")
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    output = project / "out.json"
    suite = run_suite(
        scenarios=[_dialogue("ok", "plain", BOOKING), _dialogue("bug", "plain", BOOKING)],
        options=SuiteOptions(output=output),
        targets={"plain": dialogue_targets.plain},
    )
    bug = next(r for r in suite.results if r.scenario_id == "bug")
    assert bug.status == "error" and bug.evaluator_error is not None
    assert bug.evaluator_error.message == "'an evaluator bug at bug#1'"
    assert scores_for(bug, run_id=suite.run.id) == []  # no dialogue_pass = 0 blaming the agent
    run = json.loads(output.read_text())["run"]
    assert run["metrics"]["pass_rate"] == 1.0 and run["metrics"]["evaluator_errors"] == 1
    assert (run["dialogue"]["dialogues"], run["dialogue"]["turns"]) == (1, 3)
    assert run["metrics"]["n"]["dialogue_policy_compliant"] == 1
