"""Reports over a store seeded by real runs of the bundled demo: research prompt v1, then v2 (which fixes
v1's needless web searches). The report's JSON is checked exactly (latencies, which vary, apart); compare
passes the improvement and fails the regression; the HTML page renders in a headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli import main
from evaluator.results import default_metrics
from tests.browser import measure

ROOT = Path(__file__).resolve().parents[2]
FIGURES = default_metrics().figure_names
JUDGE_FIGURES = [f for f in FIGURES if f.startswith(("quality_", "correctness_"))]


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out + captured.err


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo project, its store seeded by a v1 run and a v2 run (exit 1 each: some scenarios fail)."""
    folder = tmp_path_factory.mktemp("demo")
    config = (ROOT / "evaluator.toml").read_text()
    config = config.replace('path = ".evaluator/evaluator.db"', f'path = "{folder / "evaluator.db"}"')
    config = config.replace('dir = "prompts"', f'dir = "{ROOT / "prompts"}"')
    # The per-agent analysis has its own report (--by agent, test_per_agent.py): these pin the rest.
    config = config[: config.index("# Per-agent analysis")] + config[config.index("[run]") :]
    (folder / "evaluator.toml").write_text(config)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(ROOT))
        patch.chdir(folder)
        for version in (1, 2):
            patch.setattr(sys, "argv", ["evaluator", "run", str(ROOT / "scenarios/research"),
                                        "--run-name", f"research-v{version}",
                                        "--prompt", f"agents/research={version}",
                                        "--junit", str(folder / f"junit-v{version}.xml")])  # fmt: skip
            with pytest.raises(SystemExit) as info:
                main()
            assert info.value.code == 1
    yield folder


@pytest.fixture
def cli(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(ROOT))
    return lambda *args: _cli(monkeypatch, capsys, *args)


def _row(key: str, **figures: Any) -> dict[str, Any]:
    name, _, version = key.partition("@v")
    results, trajectories = figures.pop("results"), figures.pop("trajectories")
    counts = {f: 0 for f in FIGURES}
    counts |= {f: results for f in ("pass_rate", "workflow_pass_rate", "latency_ms")}
    counts |= {f: trajectories for f in FIGURES if f.startswith("trajectory_")}
    return {
        "group": "agent_prompt", "key": key, "name": name, "version": int(version), "sources": ["local"],
        **{k: figures.pop(k) for k in ("runs", "scenarios")}, "results": counts["pass_rate"],
        **{k: figures.pop(k) for k in ("passed", "failed")}, "errors": 0, "evaluator_errors": 0,
        "judge_unscored": 0, **dict.fromkeys(JUDGE_FIGURES), "cost": None, **figures, "n": counts,
    }  # fmt: skip


def _without_timing(row: dict[str, Any]) -> dict[str, Any]:
    assert row.pop("latency_ms") > 0
    for key in ("first_run", "last_run"):
        row[key] = row[key]["name"]
    if row["change"] is not None:
        row["change"].pop("latency_ms")
    return row


def test_report_per_prompt_version_is_exact(cli) -> None:
    code, out = cli("report", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["by"] == "prompt" and [r["name"] for r in document["runs"]] == [
        "research-v1",
        "research-v2",
    ]
    rows = {row["key"]: _without_timing(row) for row in document["rows"]}
    assert list(rows) == [
        "agents/clarification@v1", "agents/orchestrator@v1", "agents/research@v1", "agents/research@v2",
    ]  # fmt: skip
    trajectories = {"trajectory_partial_path": 0.8, "trajectory_full_path": 0.6, "trajectory_path_nodes": 0.8}
    v1 = _row("agents/research@v1", runs=1, scenarios=9, results=9, trajectories=5, passed=5, failed=4,
              pass_rate=0.5556, workflow_pass_rate=0.5556, trajectory_full_workflow=0.6,
              **trajectories)  # fmt: skip
    v1 |= {"first_run": "research-v1", "last_run": "research-v1", "change": None}
    assert rows["agents/research@v1"] == v1
    v2 = rows["agents/research@v2"]
    assert (v2["passed"], v2["failed"], v2["pass_rate"], v2["trajectory_full_workflow"]) == (
        8,
        1,
        0.8889,
        0.8,
    )
    change = {f: None for f in FIGURES if f != "latency_ms"} | {
        "pass_rate": 0.3333, "workflow_pass_rate": 0.3333, "trajectory_partial_path": 0.0,
        "trajectory_full_path": 0.2, "trajectory_path_nodes": 0.0, "trajectory_full_workflow": 0.2,
    }  # fmt: skip
    assert v2["change"] == {"against": "agents/research@v1", **change}
    orchestrator = rows["agents/orchestrator@v1"]
    assert (orchestrator["runs"], orchestrator["results"], orchestrator["passed"]) == (2, 22, 17)


def test_report_per_run_and_scenario(cli) -> None:
    runs = json.loads(cli("report", "--by", "run", "--json")[1])["rows"]
    assert [(r["key"].split(" ")[0], r["passed"], r["failed"]) for r in runs] == [
        ("research-v1", 7, 4), ("research-v2", 10, 1),
    ]  # fmt: skip
    assert runs[1]["change"]["workflow_pass_rate"] == 0.2727
    scenarios = {r["key"]: r for r in json.loads(cli("report", "--by", "scenario", "--json")[1])["rows"]}
    assert scenarios["research-pdf-only"]["pass_rate"] == 0.5
    assert scenarios["research-clarify-wordy-request"]["pass_rate"] == 0.0  # the orchestrator's flaw stays
    code, out = cli("report")
    assert code == 0 and "Per agent prompt version" in out and "agents/research@v2" in out


def test_compare_passes_the_improvement_and_fails_the_regression(cli) -> None:
    code, out = cli("compare", "previous", "latest", "--json")
    better = json.loads(out)
    assert code == 0 and better["verdict"] == "ok"
    assert better["prompt_changes"] == [{"name": "agents/research", "baseline": [1], "candidate": [2]}]
    assert [s["flip"] for s in better["scenarios"][:3]] == ["fail->pass"] * 3
    code, out = cli("compare", "latest", "previous", "--json")
    worse = json.loads(out)
    assert code == 1 and worse["regressions"][:2] == ["workflow pass rate", "full-workflow trajectory mean"]
    assert [s["scenario_id"] for s in worse["scenarios"][:3]] == [
        "research-pdf-only", "research-rag-evaluation", "research-rag-origin-trajectory",
    ]  # fmt: skip
    assert all(s["flip"] == "pass->fail" for s in worse["scenarios"][:3])
    assert worse["paired_scenarios"] == 11 and worse["too_few_scenarios"] is False
    assert cli("compare", "research-v1", "research-v2")[0] == 0


def test_run_header_and_junit(project: Path) -> None:
    root = ET.parse(project / "junit-v1.xml").getroot()  # noqa: S314 (our own file)
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "11",
        "4",
        "0",
    )
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert "research-pdf-only" in failed and len(failed) == 4


def test_run_with_a_baseline_compares_in_one_step(cli) -> None:
    code, out = cli(
        "run", str(ROOT / "scenarios/research"), "--baseline", "research-v2", "--run-name", "v1-again"
    )
    assert code == 1 and "v1-again vs research-v2: REGRESSION" in out
    assert cli("run", "--baseline", "no-such-run")[0] == 2  # checked before anything runs


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_the_html_page_renders_its_charts_and_tables(cli, project: Path) -> None:
    page = project / "report.html"
    code, out = cli("report", "--html", str(page), "--last", "2")
    assert code == 0 and f"HTML report: {page}" in out
    html = page.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained: nothing fetched
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium: `make test` installs Debian's chromium when run as root (apt-get)")
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert 'data-ready="yes"' in dom  # the page's script ran
    for figure in ("pass_rate", "workflow_pass_rate", "trajectory_full_workflow", "latency_ms"):
        assert f'data-figure="{figure}"' in dom
    assert dom.count("<circle") == 8  # one point per run in each of the four charts
    assert (
        dom.count('data-versions="agents/research v1"') == 4
        and dom.count('data-versions="agents/research v2"') == 4
    )
    assert 'id="agent_prompts"' in dom and 'id="comparison"' in dom and 'id="scenarios"' in dom
    assert "research-v2 vs v1-again" in dom or "no regression" in dom or "REGRESSION" in dom
    assert dom.count('<td class="failed"') >= 1 and "research-pdf-only" in dom


def test_the_html_page_fits_a_phone_a_tablet_and_a_desktop(cli, project: Path) -> None:
    page = project / "report-widths.html"
    assert cli("report", "--html", str(page), "--last", "2")[0] == 0
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium: `make test` installs Debian's chromium when run as root (apt-get)")
    for width, measured in measure(browser, page).items():
        assert measured["ready"] == "yes" and measured["scrollWidth"] <= width, (width, measured)
        assert [c["figure"] for c in measured["charts"]] == [
            "pass_rate", "workflow_pass_rate", "trajectory_full_workflow", "latency_ms",
        ]  # fmt: skip
        for chart in measured["charts"]:
            assert chart["clipped"] == 0 and chart["width"] <= width
            labels = [label["text"] for label in chart["labels"]]
            assert len(labels) == 2 and len(set(labels)) == 2  # each run labelled, apart
