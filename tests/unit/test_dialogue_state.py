"""A dialogue turn's state as read from its trace (DESIGN.md, "Dialogues"): per key, the last observation
by end time whose metadata carries it, JSON strings parsed, names renamed by `state_keys`; an
`evaluator.Reply`'s state wins per key; a shape the metrics cannot read is a warning, not a 0."""

from dataclasses import replace

from evaluator.metrics.dialogue import DialogueState
from evaluator.run.dialogue import predicted_state, read_state
from evaluator.trace import TraceRules, build_trace
from tests.builders import TraceBuilder


def test_the_last_observation_by_end_time_reports_each_key() -> None:
    builder = TraceBuilder()
    late = builder.agent("triage", metadata={"intent": "find_hotel", "domain": "hotel"})
    builder.observations[-1] = replace(builder.observations[-1], end_time=5_000.0)
    builder.agent(
        "policy",
        parent=late,
        metadata={"intent": "book_hotel", "belief_state": '{"hotel": {"area": "north"}}'},
    )
    builder.agent("memory", metadata={"belief_state": "not json {"})
    builder.observations[-1] = replace(builder.observations[-1], end_time=None)
    rules = TraceRules(state_keys=("intent", "domain", "acts", "belief_state", "action"))
    trace = build_trace("t", builder.observations, rules=rules)
    # triage ends last, so its intent wins over policy's; an observation without an end time counts
    # as ending first, so the JSON belief state of policy wins over memory's.
    assert trace.reported == {
        "intent": "find_hotel",
        "domain": "hotel",
        "belief_state": {"hotel": {"area": "north"}},
    }
    state = read_state(trace, {"action": "request", "intent": "book_hotel"}, {"slots": "belief_state"})
    assert state == {
        "intent": "book_hotel",  # the Reply's state wins
        "domain": "hotel",
        "slots": {"hotel": {"area": "north"}},
        "action": "request",
    }


def test_unreadable_shapes_are_not_measured_with_a_warning() -> None:
    state, warnings = predicted_state({"intent": 3, "slots": {"hotel": "north"}, "acts": ["Hotel-Inform"]})
    assert state == DialogueState(acts=frozenset({"hotel-inform"}))
    assert len(warnings) == 2 and "reported intent 3" in warnings[0] and "slots" in warnings[1]


def test_a_dialogue_the_run_stops_in_keeps_its_finished_turns_and_is_unfinished() -> None:
    import threading
    from pathlib import Path

    from evaluator.metrics import JudgeStatus
    from evaluator.results import ScenarioResult, default_metrics
    from evaluator.run.dialogue import TurnCall, run_dialogue
    from evaluator.scenarios import LoadedScenario, Scenario
    from evaluator.storage import Finished

    scenario = Scenario.model_validate(
        {
            "id": "d",
            "target": "t",
            "turns": [{"user": "hi", "expected": {"action": "greet"}}, {"user": "bye"}],
        }
    )
    stopping = threading.Event()
    recorded: list[Finished] = []

    def attempt_turn(item: LoadedScenario, call: TurnCall) -> None:
        result = ScenarioResult(
            scenario_id=item.scenario.id,
            trace_id=f"t{call.index}",
            status="passed",
            judge_status=JudgeStatus(status="skipped", reason="none"),
            output="hello",
        )
        call.deliver(Finished(result, ()), None, {"action": "greet"})
        stopping.set()  # Ctrl-C while the first turn ran

    run_dialogue(
        LoadedScenario(scenario=scenario, path=Path("d.yaml")),
        run_id="run",
        attempt_turn=attempt_turn,
        record=recorded.append,
        stopping=stopping,
        judge_status=JudgeStatus(status="skipped", reason="none"),
        metrics=default_metrics(),
    )
    [done] = recorded
    assert done.result.status == "error"
    assert done.result.error == "the run stopped before turn 1: the dialogue is unfinished"
    turns = done.result.to_json()["turns"]
    assert [t["status"] for t in turns] == ["passed", "not run"]
    assert turns[0]["metrics"]["system_correct"] == 1.0  # the finished turn is kept, scored
