"""Adding a metric is one module (here: this test's own) and one line of configuration, nothing else.

Two toy metrics live only in this file: `ToyMetric` scores each trace, `ToySessionMetric` scores the
session (every trace of a scenario's run) from the trace metric's verdicts. Named in `[metrics] extra`,
each shows in the result JSON, the scores and score configs Langfuse gets (the session one as a session
score), the run figures, `report`, `compare`'s gate (a drop of the toy figure alone is a regression,
exit 1) and the runs rebuilt from Langfuse (`report` and `compare --source langfuse`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluator.metrics import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    ScoreValue,
    SessionContext,
    number_at,
)
from tests.integration.conftest import ROOT, Cli
from tests.standin.langfuse_server import LangfuseStandIn

SCENARIOS = [str(ROOT / f"scenarios/research/research-{name}.yaml") for name in ("pdf-only", "pdf-then-web")]


@dataclass(frozen=True, kw_only=True)
class _Value:
    """A verdict of one number that informs and never decides pass or fail."""

    name: str
    value: float

    @property
    def passed(self) -> None:
        return None

    def to_json(self) -> dict[str, Any]:
        return {self.name: self.value}

    def scores(self) -> list[ScoreValue]:
        return [ScoreValue(name=self.name, value=self.value, comment="toy")]

    def problems(self) -> list[str]:
        return []


class ToyMetric(MetricBase):
    """Per trace: `toy_score`, whatever `score` says (the test turns it)."""

    score = 1.0
    key = "toy"
    definitions = (ScoreDefinition(name="toy_score", data_type="NUMERIC", description="a toy (0-1)"),)
    figures = (
        Figure(
            name="toy_score",
            value=number_at("toy", "toy_score"),
            rate=True,
            label="toy",
            gate=Gate(label="toy score", threshold=5.0),
        ),
    )

    def evaluate(self, context: MetricContext) -> _Value:
        return _Value(name="toy_score", value=ToyMetric.score)


class ToySessionMetric(MetricBase):
    """Per session: the mean of its traces' `toy_score`."""

    key = "toy_session"
    level = "session"
    definitions = (
        ScoreDefinition(name="toy_session_score", data_type="NUMERIC", description="a session toy (0-1)"),
    )
    figures = (
        Figure(
            name="toy_session_score",
            value=number_at("toy_session", "toy_session_score"),
            level="session",
            gate=Gate(label="toy session mean", unit="score", threshold=0.1),
        ),
    )

    def evaluate_session(self, context: SessionContext) -> _Value | None:
        values = [float(t["toy"].to_json()["toy_score"]) for t in context.traces if "toy" in t]
        return _Value(name="toy_session_score", value=sum(values) / len(values)) if values else None


@pytest.fixture
def toy_project(with_langfuse: Path) -> Path:
    config = with_langfuse / "evaluator.toml"
    config.write_text(
        config.read_text() + "\n[metrics]\nextra = ["
        '"tests.integration.test_metric_family:ToyMetric", '
        '"tests.integration.test_metric_family:ToySessionMetric"]\n'
    )
    return with_langfuse


def _run(cli: Cli, name: str) -> dict[str, Any]:
    code, text = cli("run", *SCENARIOS, "--no-judge", "--run-name", name, "--output", f"{name}.json")
    assert code in (0, 1), text
    document: dict[str, Any] = json.loads(Path(f"{name}.json").read_text())
    return document


def _json(cli: Cli, *args: str) -> tuple[int, dict[str, Any]]:
    code, text = cli(*args, "--json")
    return code, json.loads(text)


def test_toy_metrics_show_everywhere_with_no_other_edit(
    toy_project: Path, langfuse_standin: LangfuseStandIn, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _run(cli, "base")
    monkeypatch.setattr(ToyMetric, "score", 0.0)
    cand = _run(cli, "cand")

    # the result JSON: each toy's field, after the built-in ones
    for result in base["results"]:
        assert result["toy"] == {"toy_score": 1.0}
        assert result["toy_session"] == {"toy_session_score": 1.0}
        assert list(result)[list(result).index("correctness") + 1 :][:2] == ["toy", "toy_session"]
    assert {r["toy"]["toy_score"] for r in cand["results"]} == {0.0}
    # the run figures
    assert (base["run"]["metrics"]["toy_score"], cand["run"]["metrics"]["toy_score"]) == (1.0, 0.0)
    assert base["run"]["metrics"]["toy_session_score"] == 1.0
    assert cand["run"]["metrics"]["n"]["toy_session_score"] == 2

    # the scores in Langfuse: the trace toy on each trace, the session toy on each session; configs
    posted = langfuse_standin.scores
    for document in (base, cand):
        run_id = document["run"]["id"]
        for result in document["results"]:
            mine = [s for s in posted.values() if s["metadata"]["run_id"] == run_id
                    and s["metadata"]["scenario_id"] == result["scenario_id"]]  # fmt: skip
            [trace_toy] = [s for s in mine if s["name"] == "toy_score"]
            assert trace_toy["traceId"] == result["trace_id"] and "sessionId" not in trace_toy
            [session_toy] = [s for s in mine if s["name"] == "toy_session_score"]
            assert session_toy["sessionId"] == f"{run_id}:{result['scenario_id']}"
            assert "traceId" not in session_toy
            assert session_toy["value"] == result["toy_session"]["toy_session_score"]
    configs = {c["name"]: c for c in langfuse_standin.score_configs}
    assert configs["toy_score"]["dataType"] == "NUMERIC"
    assert configs["toy_session_score"]["dataType"] == "NUMERIC"

    # report, from the local store: figures per run, and the toy's column in the table
    _, report = _json(cli, "report", "--by", "run")
    assert [(r["toy_score"], r["toy_session_score"]) for r in report["rows"]] == [(1.0, 1.0), (0.0, 0.0)]
    code, text = cli("report", "--by", "run")
    assert code == 0 and "toy" in text

    # compare: the toy figures dropped, and nothing else is gated on them
    code, comparison = _json(cli, "compare", "base", "cand")
    assert code == 1 and comparison["verdict"] == "regression"
    gates = {c["figure"]: c for c in comparison["checks"]}
    assert gates["toy_score"]["regression"] and gates["toy_score"]["change"] == -100.0
    assert gates["toy_session_score"]["regression"] and gates["toy_session_score"]["unit"] == "score"
    assert {"toy score", "toy session mean"} <= set(comparison["regressions"])
    code, same = _json(cli, "compare", "base", "base")
    assert code == 0 and not same["regressions"]

    # the runs rebuilt from Langfuse's scores: the toys' fields, figures and gates
    _, remote = _json(cli, "report", "--by", "run", "--source", "langfuse")
    by_run = {r["key"]: r for r in remote["rows"]}
    assert by_run[base["run"]["id"]]["toy_score"] == 1.0
    assert by_run[base["run"]["id"]]["toy_session_score"] == 1.0
    assert by_run[cand["run"]["id"]]["toy_score"] == 0.0
    assert by_run[cand["run"]["id"]]["n"]["toy_session_score"] == 2
    code, remote_comparison = _json(
        cli, "compare", base["run"]["id"], cand["run"]["id"], "--source", "langfuse"
    )
    assert code == 1 and {"toy score", "toy session mean"} <= set(remote_comparison["regressions"])


def test_a_metric_that_is_not_one_is_bad_input(demo_project: Path, cli: Cli) -> None:
    config = demo_project / "evaluator.toml"
    config.write_text(config.read_text() + '\n[metrics]\nextra = ["tests.integration.conftest:ROOT"]\n')
    code, text = cli("report")
    assert code == 2
    assert "[metrics] extra" in text and "is not a metric" in text and "Fix:" in text


def test_a_metric_maker_that_fails_when_called_is_bad_input_not_a_traceback(
    demo_project: Path, cli: Cli
) -> None:
    """A function that needs arguments (a target's `run`, named by mistake) raised TypeError through
    every command that builds the metrics."""
    config = demo_project / "evaluator.toml"
    config.write_text(config.read_text() + '\n[metrics]\nextra = ["demo_agents.research:run"]\n')
    code, text = cli("lint", "scenarios")
    assert code == 2 and "Traceback" not in text
    assert (
        f'{config}: [metrics] extra: "demo_agents.research:run" made no metric when called with no arguments '
        "(TypeError: run() missing 1 required positional argument: 'request'). Fix: name a metric, or a "
        "class or function that makes one with no arguments."
    ) in " ".join(text.split())
