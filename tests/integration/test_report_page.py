"""The HTML report (`report --html`) as people meet it, in a real headless Chromium at 360, 768 and 1400 px:
no sideways scrolling of the page (wide tables scroll in their own box, charts scale), run labels that
tell nine runs started in the same minute apart (never clipped), a trend chart for every figure the
tables show a value of (latency and the judges' figures included), and numbers written as the terminal
writes them. Without Chromium the browser checks skip, saying why."""

from __future__ import annotations

import re
import sys
from html import unescape
from pathlib import Path

import pytest

from evaluator.cli import main
from evaluator.storage import Store
from tests.browser import WIDTHS, chromium, measure
from tests.stored_runs import config_for, result, store_run

RUN_IDS = [f"run-20261125T12083{i}Z-{i:x}{i:x}a{i:x}c1" for i in range(9)]
NO_BROWSER = "no Chromium: `make browser` installs Debian's chromium (apt-get) as root"


def _cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], config: Path, *args: str
) -> str:
    monkeypatch.setattr(sys, "argv", ["evaluator", *args, "--config", str(config)])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code in (0, 1, None)
    return capsys.readouterr().out


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """Nine unnamed runs, all started in the same minute (their generated ids differ from the 18th
    character on), judged, prompt v1 then v2; the page of all nine."""
    config = config_for(tmp_path)
    store = Store(tmp_path / "evaluator.db")
    for index, run_id in enumerate(RUN_IDS):
        results = [
            result(f"s{n}", workflow=n != index % 4, quality=0.5 + index / 20, verdict="correct",
                   latency_ms=800.0 + 150 * index + n, agent_version=1 + index // 5)
            for n in range(6)
        ]  # fmt: skip
        store_run(store, run_id, results, minute=0)
    store.close()
    target = tmp_path / "report.html"
    _cli(monkeypatch, capsys, config, "report", "--html", str(target))
    return target


def _figures_with_values(text: str) -> set[str]:
    """The figures the agent-prompt table shows a value of in some row."""
    table = text.split('id="agent_prompts"', 1)[1].split("</table>", 1)[0]
    head = re.findall(r'<th data-figure="([a-z_]+)"', table)
    shown: set[str] = set()
    for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1]):
        cells = [unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)][3:]
        shown |= {figure for figure, cell in zip(head, cells, strict=True) if cell != "-"}
    return shown


def test_every_figure_with_a_value_has_its_chart(page: Path) -> None:
    text = page.read_text()
    charted = re.findall(r'<svg class="trend" data-figure="([a-z_]+)"', text)
    assert len(charted) == len(set(charted))
    assert set(charted) == _figures_with_values(text)
    assert {"latency_ms", "quality_mean", "correctness_accuracy", "pass_rate"} <= set(charted)
    assert 'width="680"' not in text and "viewBox" in text  # drawn to scale with the page


def test_the_comparison_writes_numbers_as_the_terminal_does(
    page: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = page.parent / "evaluator.toml"
    markdown = _cli(monkeypatch, capsys, config, "compare", "previous", "latest", "--format", "markdown")
    terminal = {
        cells[0]: (cells[1], cells[2], cells[3], cells[6])  # before, now, change, p
        for line in markdown.splitlines()
        if line.startswith("| ") and not line.startswith(("| figure", "|---"))
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    table = page.read_text().split('id="comparison"', 1)[1].split("</table>", 1)[0]
    shown = {
        cells[0]: (cells[1], cells[2], cells[3], cells[5])
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1])
        for cells in [[unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]]
    }
    assert terminal and shown == terminal


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_fits_the_screen_and_labels_every_run_apart(page: Path, width: int) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip(NO_BROWSER)
    measured = measure(browser, page, [width])[width]
    assert measured["ready"] == "yes" and measured["width"] == width
    assert measured["scrollWidth"] <= width  # no sideways scrolling of the page
    charts = measured["charts"]
    assert [c["figure"] for c in charts] == re.findall(
        r'<svg class="trend" data-figure="([a-z_]+)"', page.read_text()
    )
    for chart in charts:
        assert 0 < chart["width"] <= width and chart["clipped"] == 0, chart
        texts = [label["text"] for label in chart["labels"]]
        assert len(texts) == len(RUN_IDS) and len(set(texts)) == len(texts), texts
        hover = sorted(label["title"].split(",")[0] for label in chart["labels"])
        assert hover == RUN_IDS  # the full id on hover
    if width == 1400:  # a desktop shows the charts side by side, each wider than the old fixed 680 px / 2
        assert all(chart["width"] > 400 for chart in charts)
