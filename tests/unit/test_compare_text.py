"""The comparison as text: the Markdown of a pull request's comment keeps names from the runs in their
place (tests/unit/test_compare.py has the comparison itself)."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from markdown_it import MarkdownIt

from evaluator.config import CompareConfig
from evaluator.metrics import MetricSet, PerAgentMetric
from evaluator.reports import compare_markdown, compare_runs
from evaluator.reports._markdown import markdown_text
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


# Names as a trace or a scenario file could give them: each would be a link, an image, a mention, HTML,
# code, emphasis, maths, or a list, heading, quote or task box at the start of a list item.
HOSTILE = [
    "[click](https://evil.example)",
    "![x](https://tracker.example/p.png)",
    "@someone and @org/team",
    "<img src=x onerror=alert(1)> <!-- hidden --> <b>bold</b>",
    "&amp; &#64;me &lt;i&gt;",
    "`code` ``two`` \\*not\\*",
    "*em* _em_ **strong** __strong__ ~~gone~~ ~gone~ $x^2$",
    "#12 fixes owner/repo#3",
    "1. first",
    "- item",
    "> quote",
    "# heading",
    "[x] done",
]


def _rendered(markdown: str) -> str:
    """The comment as a GitHub-flavoured Markdown renderer makes it HTML (CommonMark with GFM's tables
    and strike-through)."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)


def _text(html: str) -> str:
    """What a reader sees of an HTML fragment: its text, the code marks of `@` and `#` taken away."""
    return unescape(re.sub(r"</?code>", "", html))


def test_markdown_shows_hostile_names_as_written_when_rendered() -> None:
    """The comment is pasted into a pull request: a name must not link, load an image, mention someone,
    insert HTML or markup, or start a list, heading, quote or task box of its own."""
    agent, run_name = "tool [x](https://evil.example) @admin <script>", "**pr** @someone #1 <b>"
    base = RunRecord(id="b", name="main", started_at="b",
                     results=tuple(_result(s, "passed", {agent: 1.0}) for s in HOSTILE))  # fmt: skip
    cand = RunRecord(id="c", name=run_name, started_at="c",
                     results=tuple(_result(s, "failed", {agent: 0.5}) for s in HOSTILE))  # fmt: skip
    html = _rendered(compare_markdown(compare_runs(base, cand, CompareConfig(), metrics=METRICS), METRICS))

    tags = set(re.findall(r"</?([a-z0-9]+)", html))
    assert tags <= {"h3", "p", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "ul", "li",
                    "strong", "code"}  # fmt: skip
    assert set(re.findall(r"<code>(.*?)</code>", html)) == {"@", "#"}  # no code but the marks
    assert "@" not in re.sub(r"<code>@</code>", "", html)  # each @ in code: no mention
    heading = re.search(r"<h3>(.*?)</h3>", html)
    assert heading and _text(heading[1]).startswith(f":x: {run_name} vs main: REGRESSION")
    cells = re.findall(r"<tr>\s*<td>(.*?)</td>", html)
    assert f"{agent}: tool use" in [_text(cell) for cell in cells]
    items = [_text(item) for item in re.findall(r"<li>(.*?)</li>", html)]
    assert sorted(item.split(": passed -> failed")[0] for item in items) == sorted(HOSTILE)


def test_markdown_escapes_only_what_could_be_markup() -> None:
    """Ordinary names stay readable in the comment's source; what could be markup is escaped there."""
    for name, written in [
        ("booking_flow-2", "booking_flow-2"),  # `_` inside a word is no emphasis; `-` mid-line no list
        ("agents/research v2.1 (draft) p < 0.05", "agents/research v2.1 (draft) p < 0.05"),
        ("[click](https://evil)", "\\[click\\](https://evil)"),
        ("![x](https://t/p.png)", "![x\\](https://t/p.png)"),
        ("hi @someone", "hi `@`someone"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"),
        ("<!-- x -->", "&lt;!-- x -->"),
        ("&amp; R&D", "&amp;amp; R&D"),
        ("_x_ *y* `z` ~w~ $v$ a\\b", "\\_x\\_ \\*y\\* \\`z\\` \\~w\\~ \\$v\\$ a\\\\b"),
        ("# title", "\\# title"),
        ("12. twelve", "12\\. twelve"),
    ]:
        base = RunRecord(id="b", name="b", started_at="b", results=(_result(name, "passed", {"a": 1.0}),))
        cand = RunRecord(id="c", name="c", started_at="c", results=(_result(name, "failed", {"a": 1.0}),))
        text = compare_markdown(compare_runs(base, cand, CompareConfig(), metrics=METRICS), METRICS)
        assert f"\n- {written}: passed -> failed" in text, name


def test_an_emoji_code_in_a_name_is_shown_as_written_and_a_time_untouched() -> None:
    """GitHub turns `:white_check_mark:` in the rendered text into the emoji the heading's own verdict
    uses, so a run named with it could pass for a good one; never inside code. A time is no emoji code."""
    base = RunRecord(
        id="b", name="10:30:00 main", started_at="b", results=(_result("s", "passed", {"a": 1.0}),)
    )
    cand = RunRecord(id="c", name=":white_check_mark: PASS", started_at="c",
                     results=(_result("s", "failed", {"a": 1.0}),))  # fmt: skip
    markdown = compare_markdown(compare_runs(base, cand, CompareConfig(), metrics=METRICS), METRICS)
    html = _rendered(markdown)

    assert html.count(":white_check_mark:") == 1  # the heading's own mark; the name's `:` in code
    assert "<code>:</code>white_check_mark: PASS" in html
    assert "10:30:00 main" in markdown


def test_a_name_indented_four_spaces_or_naming_gh_issues_renders_as_written() -> None:
    """Four leading spaces made a name a code block inside its list item (its escapes shown); `GH-12`
    is an issue reference on GitHub, as `#12` is."""
    names = ["    spaced name", "see GH-12 first", "\t- tabbed"]
    base = RunRecord(
        id="b", name="b", started_at="b", results=tuple(_result(n, "passed", {"a": 1.0}) for n in names)
    )
    cand = RunRecord(
        id="c", name="c", started_at="c", results=tuple(_result(n, "failed", {"a": 1.0}) for n in names)
    )
    html = _rendered(compare_markdown(compare_runs(base, cand, CompareConfig(), metrics=METRICS), METRICS))

    assert "<pre>" not in html and "<ul>\n<li>" in html and html.count("<li>") == 3
    items = sorted(_text(item).split(": passed -> failed")[0] for item in re.findall(r"<li>(.*?)</li>", html))
    assert items == sorted(names)
    assert "<code>G</code>H-12" in html


def test_an_emoji_code_is_told_from_a_time_by_its_name() -> None:
    """Only a name with a letter (or GitHub's 100, 1234, +1, -1) is an emoji code; a long name with no
    closing `:` is none (its check reads the characters after the `:` once: see _markdown._INLINE)."""
    assert markdown_text("qwen3:8b 10:30:00 :100: :1:") == "qwen3:8b 10:30:00 `:`100: :1:"
    assert markdown_text("x:" + "a" * 50_000 + " y") == "x:" + "a" * 50_000 + " y"
