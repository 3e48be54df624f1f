"""The HTML report (`report --html`) as people meet it, in a real headless Chromium at 360, 768 and 1400 px:
no sideways scrolling of the page (wide tables scroll in their own box, charts scale), run labels that
tell nine runs started in the same minute apart (never clipped), a trend chart for every figure the
tables show a value of (latency and the judges' figures included), and numbers written as the terminal
writes them. Without Chromium the browser checks skip, saying why."""

from __future__ import annotations

import re
import sys
from html import escape, unescape
from pathlib import Path

import pytest

from evaluator.cli import main
from evaluator.run import Reply, TargetRequest
from evaluator.storage import Store
from tests.browser import WIDTHS, chromium, measure
from tests.dialogue_page import dialogue_sections
from tests.integration.conftest import ROOT
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


# A dialogue (DESIGN.md, "Dialogues") whose messages and state carry markup: the page must show them as
# text. Worked out by hand: turn 0 reports intent book_hotel, domain hotel, the expected slots and the
# expected action `request` (every key matched: passed); turn 1 expects `book` but the target reports
# `request` again: its action differs, so system_correct is 0 ("action request instead of book") and
# the turn fails, while intent, domain and slots (JGA) still match. No action starting with "book"
# occurred, so the goal `book: [hotel]` is not completed ("no booking action"); system correctness is
# 1 correct turn of 2 = 50%; no policy, so no violation.
SCRIPT = '<script>alert("x")</script>'
IMAGE = "<img src=x onerror=alert(1)>"
ESCAPING = f"""\
id: escaping
target: echo
goal: {{book: [hotel]}}
turns:
  - user: 'A hotel called {SCRIPT} & co'
    expected: {{intent: book_hotel, slots: {{hotel: {{name: "{IMAGE}"}}}}, action: request}}
  - user: Book it
    expected: {{intent: book_hotel, slots: {{hotel: {{name: "{IMAGE}"}}}}, action: book}}
"""


def echo(request: TargetRequest) -> Reply:
    """Repeats the user's message; never books."""
    state = {
        "intent": "book_hotel",
        "domain": "hotel",
        "slots": {"hotel": {"name": IMAGE}},
        "action": "request",
    }
    return Reply(f"You said: {request.input}", state=state)


@pytest.fixture
def dialogue_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    config = config_for(
        tmp_path,
        f'[prompts]\ndir = "{ROOT / "prompts"}"\n[targets.echo]\nentry = "{__name__}:echo"\n',
    )
    (tmp_path / "escaping.yaml").write_text(ESCAPING)
    _cli(monkeypatch, capsys, config, "run", str(tmp_path / "escaping.yaml"), "--no-judge")
    target = tmp_path / "report.html"
    _cli(monkeypatch, capsys, config, "report", "--html", str(target))
    return target


def test_a_dialogue_is_shown_turn_by_turn_with_what_failed(dialogue_page: Path) -> None:
    page = dialogue_page.read_text()
    [dialogue] = dialogue_sections(page)
    assert dialogue["scenario"] == "escaping" and dialogue["status"] == "failed"
    assert "goal NOT completed: no booking action" in dialogue["summary"]
    assert dialogue["figures"]["system_correctness"] == "0.5"
    assert dialogue["figures"]["task_completion"] == "0"
    first, second = dialogue["turns"]
    assert (first["status"], first["problems"]) == ("passed", [])
    assert second["status"] == "failed"
    assert second["problems"] == ["not system-correct: action request instead of book"]
    assert second["verdicts"] == {
        "intent": "matched", "domain": "matched", "acts": "not measured", "slots": "matched",
        "action": "differs",
    }  # fmt: skip
    assert second["figures"]["system_correct"] == "0" and second["figures"]["jga"] == "1"


def test_the_dialogue_view_escapes_what_the_run_said(dialogue_page: Path) -> None:
    page = dialogue_page.read_text()
    assert SCRIPT not in page and IMAGE not in page and "onerror=alert(1)>" not in page
    assert escape(f"A hotel called {SCRIPT} & co") in page  # the user's message
    assert escape(f"You said: A hotel called {SCRIPT} & co") in page  # the reply
    assert escape(IMAGE) in page  # in the reported and expected slots
    assert page.count("<script>") == 1  # the page's own


def test_the_dialogue_view_fits_a_phone(dialogue_page: Path) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip(NO_BROWSER)
    measured = measure(browser, dialogue_page, [360])[360]
    assert measured["ready"] == "yes" and measured["scrollWidth"] <= 360
