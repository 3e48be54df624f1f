"""The comparison as text: the Markdown of a pull request's comment keeps names from the runs in their
place (tests/unit/test_compare.py has the comparison itself)."""

from __future__ import annotations

from typing import Any

from evaluator.config import CompareConfig
from evaluator.metrics import MetricSet, PerAgentMetric
from evaluator.reports import compare_markdown, compare_runs
from evaluator.reports.runs import RunRecord

METRICS = MetricSet([PerAgentMetric()])


def _result(scenario_id: str, status: str, agents: dict[str, float]) -> dict[str, Any]:
    entries = {name: {"tool_calls": 2, "issues": [], "tool_use_score": s} for name, s in agents.items()}
    return {"scenario_id": scenario_id, "status": status, "per_agent": {"agents": entries}}


def test_markdown_keeps_a_name_with_a_bar_or_a_control_character_in_its_table_cell_and_line() -> None:
    agent, scenario = "tools|search\x1b[31m", "s|0\nsecond line"
    base = RunRecord(id="b", name="b", started_at="b", results=(_result(scenario, "passed", {agent: 1.0}),))
    cand = RunRecord(id="c", name="c", started_at="c", results=(_result(scenario, "failed", {agent: 0.5}),))
    text = compare_markdown(compare_runs(base, cand, CompareConfig(), metrics=METRICS), METRICS)
    row = next(line for line in text.splitlines() if line.startswith("| tools"))
    assert row.startswith("| tools\\|search\\x1b[31m: ")  # the bar escaped, the escape shown, not sent
    assert row.count("|") - row.count("\\|") == 9  # 8 cells: the name's bar is no cell border
    assert "- s\\|0 second line: passed -> failed" in text  # one line of the list
    assert "\x1b" not in text
