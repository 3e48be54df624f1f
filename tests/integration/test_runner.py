"""The runner with real SDK tracing in embedded mode and toy targets."""

from __future__ import annotations

import _thread
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.results import PromptUse, ScenarioResult
from evaluator.run import Pipeline, RunOptions
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Store
from tests.builders import scenario
from tests.integration import toy_targets


def _items(*inputs: str, target: str = "toy", **expected: object) -> list[LoadedScenario]:
    return [
        LoadedScenario(
            scenario=scenario(id=f"s{i}", input=text, target=target, expected=expected or {}),
            path=Path(f"s{i}.yaml"),
        )
        for i, text in enumerate(inputs)
    ]


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _runner(tracing: Tracing, tmp_path: Path, target: object = toy_targets.by_input) -> Pipeline:
    prompt = tmp_path / "prompts" / "agents" / "toy"
    prompt.mkdir(parents=True)
    (prompt / "v1.prompt").write_text("---\n---\nQ: {{question}}. ")
    (prompt / "v2.prompt").write_text("---\n---\nQuestion: {{question}}. ")
    return Pipeline(
        tracer=tracing,
        targets={"toy": target},  # type: ignore[dict-item]
        prompts=PromptLibrary(tmp_path / "prompts"),
        recorder=Store(None),
    )


def test_results_in_scenario_order_with_verdicts(tracing: Tracing, tmp_path: Path) -> None:
    items = _items(
        "one",
        "two",
        agents={"include": ["worker"]},
        tools={"include": ["lookup"]},
        trajectory={"tools": ["lookup"], "flow": "lookup"},
    )
    run, results = _runner(tracing, tmp_path).run(items, RunOptions(concurrency=2, run_id="run-x"))
    assert [r.scenario_id for r in results] == ["s0", "s1"]
    assert [r.status for r in results] == ["passed", "passed"]
    assert results[0].output == "found one"
    assert results[0].trace_id == tracing.trace_id_for("run-x", "s0")
    assert results[0].trajectory is not None and results[0].trajectory.actual_flow == "lookup"
    assert run.id == "run-x" and run.finished_at is not None and not run.interrupted


def test_raise_and_hang_become_errors_and_the_rest_go_on(tracing: Tracing, tmp_path: Path) -> None:
    items = _items("raise", "hang", "fine", agents={"include": ["worker"]}, tools={"include": ["lookup"]})
    started = time.monotonic()
    _, results = _runner(tracing, tmp_path).run(items, RunOptions(concurrency=3, timeout_seconds=0.5))
    assert time.monotonic() - started < 10
    by_id = {r.scenario_id: r for r in results}
    assert by_id["s0"].status == "error"
    assert by_id["s0"].error == "RuntimeError: the agent crashed"
    assert by_id["s0"].workflow is None  # no verdict from a run that did not finish
    assert by_id["s1"].status == "error"
    assert by_id["s1"].error == "timed out after 0.5 s"
    assert by_id["s2"].status == "passed"


def test_concurrency_is_bounded(tracing: Tracing, tmp_path: Path) -> None:
    toy_targets.gauge = toy_targets.Gauge()
    items = _items(*["sleep:0.05"] * 12)
    _runner(tracing, tmp_path).run(items, RunOptions(concurrency=3))
    assert 1 < toy_targets.gauge.peak <= 3


def test_each_result_is_handed_over_as_it_finishes(tracing: Tracing, tmp_path: Path) -> None:
    finished_at: dict[str, float] = {}

    def on_result(result: ScenarioResult) -> None:
        finished_at[result.scenario_id] = time.monotonic()

    items = _items("sleep:0.01", "sleep:0.8")  # s0 is stored within the record window (0.2 s)
    start = time.monotonic()
    _runner(tracing, tmp_path).run(items, RunOptions(concurrency=2), on_result=on_result)
    assert finished_at["s0"] - start < finished_at["s1"] - start
    assert finished_at["s1"] - finished_at["s0"] > 0.4  # s0 was delivered long before s1 ended


def test_prompt_pins_are_used_and_recorded(tracing: Tracing, tmp_path: Path) -> None:
    runner = _runner(tracing, tmp_path, toy_targets.uses_prompt)
    _, [default] = runner.run(_items("x"), RunOptions())
    _, [pinned] = runner.run(_items("x"), RunOptions(prompt_pins={"agents/toy": 1}))
    assert default.prompts == {"agents/toy": PromptUse(version=2)} and default.output.startswith(
        "Question: x."
    )
    assert pinned.prompts == {"agents/toy": PromptUse(version=1)} and pinned.output.startswith("Q: x.")


def test_async_target(tracing: Tracing, tmp_path: Path) -> None:
    _, [result] = _runner(tracing, tmp_path, toy_targets.async_target).run(
        _items("a", agents={"include": ["worker"]}, tools={"include": ["lookup"]}), RunOptions()
    )
    assert result.status == "passed"
    assert result.output == "found a"


def test_ctrl_c_returns_what_finished_at_once(tracing: Tracing, tmp_path: Path) -> None:
    seen: list[str] = []

    def interrupt_after_first(result: ScenarioResult) -> None:
        seen.append(result.scenario_id)
        _thread.interrupt_main()  # Ctrl-C, as the main thread receives it

    items = _items("sleep:0.01", "sleep:5", "sleep:5")
    started = time.monotonic()
    run, results = _runner(tracing, tmp_path).run(
        items, RunOptions(concurrency=3), on_result=interrupt_after_first
    )
    assert time.monotonic() - started < 4  # it did not wait for the 5 s scenarios
    assert run.interrupted
    assert [r.scenario_id for r in results] == seen == ["s0"]


def test_markup_in_an_error_message_prints_literally(tracing: Tracing, tmp_path: Path) -> None:
    from rich.console import Console

    from evaluator.reports import print_summary

    def raises_markup(request: object) -> str:
        raise ValueError("bad [/] closing tag [red]")

    run, results = _runner(tracing, tmp_path, raises_markup).run(_items("x"), RunOptions())
    console = Console(record=True, width=200)
    print_summary(console, run, results, expected_count=1)
    assert "ValueError: bad [/] closing tag [red]" in console.export_text()


def _untraced(request: object) -> str:
    return "paid"  # the system ran, but recorded nothing: its framework's tracing was never set up


def test_a_system_that_traced_nothing_is_neither_missing_nor_avoided(
    tracing: Tracing, tmp_path: Path
) -> None:
    """Only the evaluator's root span: the agents and tools the scenario names ran or not, the trace
    cannot tell. Not "correctly avoided" (a false pass), not "missing" (a false failure): an error
    naming the fix. A scenario that expects nothing of the workflow is checked as usual."""
    avoided = _items("was invoice 42 paid?", agents={"exclude": ["billing"]}, tools={"exclude": ["lookup"]})
    found = _items("was invoice 42 paid?", agents={"include": ["billing"]})
    path = _items("was invoice 42 paid?", trajectory={"tools": ["lookup"]})
    answer = _items("was invoice 42 paid?", answer={"contains": ["paid"]})
    for items, status in ((avoided, "error"), (found, "error"), (path, "error"), (answer, "passed")):
        [result] = _runner(tracing, tmp_path / status / str(id(items)), _untraced).run(items, RunOptions())[1]
        assert result.status == status, result
        assert result.output == "paid"
        if status == "error":
            assert result.workflow is None and result.error is not None
            assert "holds nothing of target toy but the evaluator's own root span" in result.error
            assert "cannot be checked (neither found nor avoided)" in result.error
            assert "OpenAIAgentsInstrumentor" in result.error
