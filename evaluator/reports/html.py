"""`report --html FILE`: one self-contained page (inline CSS, SVG and a few lines of JS; nothing fetched
from the network) that someone who never used a terminal can read and pass on:

1. what the page is and the runs it covers;
2. per prompt version (agent prompts, then judge prompts): the report rows of reports/history.py;
3. trend charts over runs, one per figure the tables show (the figures of the run's `MetricSet` that
   have a table label) that has a value, each point coloured by the
   prompt versions its run used (only the prompts whose version changed between runs), so a version
   change shows as a colour change; each run labelled by its name (or short id) and start time;
4. the latest run against the one before it (reports/compare.py), flips first, its numbers written as
   the terminal writes them (reports/compare_text.py);
5. a table per scenario: its status in each run;
6. the dialogues of the latest run with dialogues, turn by turn (reports/dialogues.py, imported with the
   dialogue metric's code only for a page with dialogues).

The page fits a phone: charts scale with the page (an SVG viewBox), and a table wider than the screen
scrolls sideways in a box of its own, never the page.

Text from the runs (names, ids, messages, what a dialogue's user and system said) is HTML-escaped where
it is placed, and on the whole page each character that reorders or hides text (a right-to-left
override, a zero-width space: reports/_printable.py) is written as its escape, `\\u202e`, as the
terminal shows it: the page's own markup has none, so every one came from the runs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from evaluator.config import CompareConfig
from evaluator.metrics import MetricSet
from evaluator.reports._printable import unhidden
from evaluator.reports.agents import TraceLink, agents_html
from evaluator.reports.compare import compare_runs
from evaluator.reports.compare_text import figure_value, headline, p_value_text, signed_change
from evaluator.reports.history import history
from evaluator.reports.runs import RunRecord
from evaluator.results import agent_prompts, default_metrics

__all__ = ["html_report"]

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d")
_MAX_SCENARIO_RUNS = 12
# The chart's coordinates (a viewBox: the drawing scales with the page). The margins leave room for the
# y-axis ticks and for half a run label, which is centred on its point.
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 600, 260, 58, 34, 14, 50
_MAX_LABELS = 9  # run labels under a chart at most (~60 units apart); every point names its run on hover
_NAME_CHARS = 11  # a run name longer than this is cut (with "…") under a chart; the hover shows it whole

_CSS = """
*,*::before,*::after{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2937;
  background:#f8fafc}
main{max-width:1100px;margin:0 auto;padding:24px;overflow-wrap:anywhere}
@media (max-width:600px){main{padding:12px}h1{font-size:22px}}
h1{font-size:26px;margin:0 0 4px}h2{margin-top:36px;border-bottom:2px solid #e5e7eb;padding-bottom:4px}
p.lead{color:#4b5563;margin-top:0}.note{color:#6b7280;font-size:13px}
.scroll{max-width:100%;overflow-x:auto;margin:12px 0}
table{border-collapse:collapse;background:#fff;font-size:14px;overflow-wrap:normal}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f1f5f9;cursor:pointer}
td:first-child,th:first-child{text-align:left}
.passed{background:#dcfce7}.failed{background:#fee2e2}.error{background:#fde68a}.missing{color:#9ca3af}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600}
.verdict.ok{background:#dcfce7}.verdict.regression{background:#fee2e2}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,440px),1fr));gap:16px}
.chart{margin:0;min-width:0;background:#fff;border:1px solid #e5e7eb;padding:8px}
.chart svg{display:block;width:100%;height:auto}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}
details.dialogue{background:#fff;border:1px solid #e5e7eb;border-radius:6px;margin:12px 0;padding:8px 12px}
details.dialogue summary{cursor:pointer}
.badge{display:inline-block;padding:0 6px;border-radius:4px;font-size:13px;font-weight:600;background:#e5e7eb}
.badge.passed{background:#dcfce7}.badge.failed{background:#fee2e2}.badge.error{background:#fde68a}
section.turn{border-left:4px solid #e5e7eb;margin:14px 0;padding:2px 0 2px 12px}
section.turn[data-status=passed]{border-color:#16a34a}section.turn[data-status=failed]{border-color:#dc2626}
section.turn[data-status=error]{border-color:#d97706}
section.turn h4{margin:4px 0}p.said{margin:4px 0}
ul.figures{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:2px 16px;font-size:13px}
table.state td,table.state th{white-space:normal;text-align:left}
ul.problems{margin:4px 0;color:#991b1b}
"""
_JS = """
document.querySelectorAll('table.sortable th').forEach(function (th, column) {
  th.title = 'Click to sort';
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var up = th.dataset.order !== 'up'; th.dataset.order = up ? 'up' : 'down';
    rows.sort(function (a, b) {
      var x = a.cells[th.cellIndex].dataset.value || a.cells[th.cellIndex].textContent;
      var y = b.cells[th.cellIndex].dataset.value || b.cells[th.cellIndex].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var d = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return up ? d : -d;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
document.body.dataset.ready = 'yes';
"""


def html_report(
    runs: Sequence[RunRecord],
    *,
    source: str,
    config: CompareConfig,
    generated_at: str,
    metrics: MetricSet | None = None,
    link: TraceLink | None = None,
) -> str:
    """The page for `runs` (oldest first), on the figures of `metrics` (the built-in ones by default);
    `link`: the trace pages the per-agent section's issues link to (when Langfuse is configured)."""
    metrics = metrics or default_metrics()
    body = [
        "<h1>Agent evaluation report</h1>",
        f'<p class="lead">{len(runs)} runs from {escape(source)}, '
        f"{escape(runs[0].started_at if runs else '-')} to {escape(runs[-1].started_at if runs else '-')}. "
        f"Generated {escape(generated_at)}.</p>",
        f'<p class="note">{_scenario_sets(runs)} A scenario '
        "passes when the right agents and tools were used, in the expected order, and the answer "
        "contains what it must. Higher is better everywhere except latency.</p>",
        _versions_section(runs, metrics),
        agents_html(runs, link),
        _trends_section(runs, metrics),
        _comparison_section(runs, config, metrics),
        _scenarios_section(runs),
        _dialogues_section(runs, link),
    ]
    return unhidden(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Agent evaluation report</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main><script>{_JS}</script></body></html>\n"
    )


def _dialogues_section(runs: Sequence[RunRecord], link: TraceLink | None) -> str:
    """The dialogues' section (reports/dialogues.py), "" when no run has a dialogue, as that section says
    then: its module, and with it the dialogue metric's code, is imported only for a page with one."""
    if not any(result.get("kind") == "dialogue" for run in runs for result in run.results):
        return ""
    from evaluator.reports.dialogues import dialogues_html  # here: see above

    return dialogues_html(runs, link)


def _cell(name: str, value: Any, metrics: MetricSet) -> str:
    number = "" if value is None else f' data-value="{value}"'
    return f"<td{number}>{escape(figure_value(name, value, metrics))}</td>"


def _table_figures(metrics: MetricSet) -> list[str]:
    """The figures the tables show (those with a table label), in their order; the trend charts draw
    the same ones."""
    return [f.name for f in metrics.figures if f.label is not None]


def _title(name: str, metrics: MetricSet) -> str:
    """A chart's title: its figure's `chart` title, or its name in words when it declares none."""
    chart = next((f.chart for f in metrics.figures if f.name == name), None)
    return chart or name.replace("_", " ").capitalize()


def _scroll(table: str) -> str:
    """A table in a box of its own that scrolls sideways when the table is wider than the screen."""
    return f'<div class="scroll">{table}</div>'


def _versions_section(runs: Sequence[RunRecord], metrics: MetricSet) -> str:
    rows = history(runs, "prompt", metrics)
    columns = _table_figures(metrics)
    parts = ["<h2>How each prompt version did</h2>"]
    for kind, title in (("agent_prompt", "Agent prompts"), ("judge_prompt", "Judge prompts")):
        chosen = [r for r in rows if r["group"] == kind]
        if not chosen:
            parts.append(f'<p class="note">{title}: none recorded in these runs.</p>')
            continue
        head = "".join(f"<th>{c}</th>" for c in ("version", "runs", "scenarios")) + "".join(
            f'<th data-figure="{escape(c)}">{escape(c.replace("_", " "))}</th>' for c in columns
        )
        body = "".join(
            f"<tr><td>{escape(r['key'])}</td><td>{r['runs']}</td><td>{r['scenarios']}</td>"
            + "".join(_cell(c, r[c], metrics) for c in columns)
            + "</tr>"
            for r in chosen
        )
        parts.append(
            f"<h3>{title}</h3>"
            + _scroll(
                f'<table class="sortable" id="{kind}s"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>"
            )
        )
    return "".join(parts)


def _signatures(runs: Sequence[RunRecord]) -> list[str]:
    """Per run, the versions of the prompts whose version differs between runs ("" when none does)."""
    used = [{(n, v) for r in run.results for n, v, _ in agent_prompts(r)} for run in runs]
    names = {n for uses in used for n, _ in uses}
    varying = sorted(n for n in names if len({frozenset(v for m, v in uses if m == n) for uses in used}) > 1)
    return [
        ", ".join(
            f"{n} v{'/'.join(str(v) for v in sorted(v for m, v in uses if m == n)) or '-'}" for n in varying
        )
        for uses in used
    ]


def _short_time(started_at: str) -> str:
    """ "2026-11-25T12:08:30.000Z" -> "11-25 12:08" (what else a run started at, as it is)."""
    match = re.match(r"\d{4}-(\d\d-\d\d)[T ](\d\d:\d\d)", started_at)
    return f"{match[1]} {match[2]}" if match else started_at


def _short_id(run_id: str) -> str:
    """The random tail of a generated id ("run-20261125T120830Z-3fa2c1" -> "3fa2c1"), or the id's end."""
    tail = run_id.rsplit("-", 1)[-1]
    return tail if 4 <= len(tail) <= _NAME_CHARS else run_id[-8:]


def _cut(name: str) -> str:
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "\u2026"


def run_labels(runs: Sequence[RunRecord]) -> list[tuple[str, str]]:
    """Per run, two short lines that tell it from the others: its name (cut) or, when it has none or
    the cut names and start minutes of two runs are alike, the short id; then the start time. Runs
    alike even so are numbered."""
    labels = [(_cut(run.name) if run.name not in ("", run.id) else _short_id(run.id)) for run in runs]
    times = [_short_time(run.started_at) for run in runs]
    seen = Counter(zip(labels, times, strict=True))
    labels = [
        _short_id(run.id) if seen[(label, time)] > 1 else label
        for run, label, time in zip(runs, labels, times, strict=True)
    ]
    seen = Counter(zip(labels, times, strict=True))
    return [
        (f"{label} #{index + 1}" if seen[(label, time)] > 1 else label, time)
        for index, (label, time) in enumerate(zip(labels, times, strict=True))
    ]


def _trends_section(runs: Sequence[RunRecord], metrics: MetricSet) -> str:
    signatures = _signatures(runs)
    colors = {sig: _PALETTE[i % len(_PALETTE)] for i, sig in enumerate(dict.fromkeys(signatures))}
    summaries = [metrics.summarize(run.results) for run in runs]
    axis = _Axis(runs=runs, labels=run_labels(runs), signatures=signatures, colors=colors)
    charts = [
        _chart(name, [s[name] for s in summaries], axis, metrics)
        for name in _table_figures(metrics)
        if any(s[name] is not None for s in summaries)
    ]
    legend = "".join(
        f'<span><i style="background:{color}"></i>{escape(sig or "same prompt versions in every run")}</span>'
        for sig, color in colors.items()
    )
    return (
        '<h2>Trends over runs</h2><p class="note">One point per run, oldest on the left (hover a point '
        "or a label for the run). The colour shows which prompt versions the run used.</p>"
        f'<div class="legend">{legend}</div><div class="charts">{"".join(charts)}</div>'
    )


@dataclass(frozen=True, kw_only=True)
class _Axis:
    """What every chart shares: the runs along the x axis, their labels and their points' colours."""

    runs: Sequence[RunRecord]
    labels: Sequence[tuple[str, str]]
    signatures: Sequence[str]
    colors: Mapping[str, str]

    def x(self, index: int) -> float:
        count, width = len(self.runs), _W - _LEFT - _RIGHT
        return _LEFT + (index * width / (count - 1) if count > 1 else width / 2)

    def labelled(self) -> list[int]:
        """The runs labelled under a chart: all, or _MAX_LABELS spread evenly, first and last included."""
        count = len(self.runs)
        if count <= _MAX_LABELS:
            return list(range(count))
        return sorted({round(k * (count - 1) / (_MAX_LABELS - 1)) for k in range(_MAX_LABELS)})

    def hover(self, index: int) -> str:
        run = self.runs[index]
        return f"{run.label}, started {run.started_at}"


@dataclass(frozen=True, kw_only=True)
class _Scale:
    """The y axis of one figure, from its values: 0 to 1 for rates and scores, down to -1 for a figure
    with values below 0, and up to a round number above the largest value for figures past 1."""

    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> _Scale:
        least, most = min(values), max(values)
        high = 1.0 if most <= 1 else _round_up(most)
        low = 0.0 if least >= 0 else (-1.0 if least >= -1 else -_round_up(-least))
        return cls(low=low, high=high)

    def y(self, value: float) -> float:
        share = (min(self.high, max(self.low, value)) - self.low) / (self.high - self.low)
        return _TOP + (1 - share) * (_H - _TOP - _BOTTOM)

    def ticks(self) -> list[tuple[float, float]]:
        """Evenly spaced round values, bottom to top (quarters, or fifths when a quarter is not round:
        0 to 2500 ms goes by 500), each with its y."""
        span = self.high - self.low
        parts = 4 if _round_up(span / 4) == span / 4 else 5
        return [(value, self.y(value)) for value in (self.low + k * span / parts for k in range(parts + 1))]


def _round_up(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `value` (> 0)."""
    magnitude = 10.0 ** math.floor(math.log10(value))
    return next(step * magnitude for step in (1, 2, 2.5, 5, 10) if value <= step * magnitude)


def _chart(name: str, values: Sequence[float | None], axis: _Axis, metrics: MetricSet) -> str:
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    scale = _Scale.of([v for _, v in points])
    grid = "".join(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>'
        f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
        f"{escape(figure_value(name, t, metrics))}</text>"
        for t, y in scale.ticks()
    )
    line = " ".join(f"{axis.x(i):.1f},{scale.y(v):.1f}" for i, v in points)
    dots = "".join(
        f'<circle cx="{axis.x(i):.1f}" cy="{scale.y(v):.1f}" r="5" fill="{axis.colors[axis.signatures[i]]}" '
        f'data-run="{escape(axis.runs[i].id)}" data-value="{v}" data-versions="{escape(axis.signatures[i])}">'
        f"<title>{escape(axis.hover(i))}: {escape(figure_value(name, v, metrics))}"
        f"{' - ' + escape(axis.signatures[i]) if axis.signatures[i] else ''}</title></circle>"
        for i, v in points
    )
    title = _title(name, metrics)
    return (
        f'<figure class="chart"><figcaption><b>{escape(title)}</b></figcaption>'
        f'<svg class="trend" data-figure="{escape(name)}" viewBox="0 0 {_W} {_H}" width="100%" '
        f'role="img" aria-label="{escape(title)} per run">{grid}'
        f'<polyline points="{line}" fill="none" stroke="#94a3b8" stroke-width="2"/>{dots}'
        f"{_run_labels(axis)}</svg></figure>"
    )


def _run_labels(axis: _Axis) -> str:
    """Each labelled run's two lines, centred under its point; the whole name and id on hover."""
    top = _H - _BOTTOM + 18
    return "".join(
        f'<text class="run" x="{axis.x(i):.1f}" y="{top}" font-size="9.5" text-anchor="middle" '
        f'fill="#374151"><title>{escape(axis.hover(i))}</title>'
        f'<tspan x="{axis.x(i):.1f}">{escape(axis.labels[i][0])}</tspan>'
        f'<tspan x="{axis.x(i):.1f}" dy="12">{escape(axis.labels[i][1])}</tspan></text>'
        for i in axis.labelled()
    )


def _comparison_section(runs: Sequence[RunRecord], config: CompareConfig, metrics: MetricSet) -> str:
    if len(runs) < 2:
        return "<h2>Latest run against the one before</h2><p>Only one run so far: nothing to compare.</p>"
    doc = compare_runs(runs[-2], runs[-1], config, metrics=metrics)
    if not doc["paired_scenarios"]:  # as `evaluator compare` says it: no verdict on nothing
        return (
            "<h2>Latest run against the one before</h2>"
            f'<p id="verdict">{escape(runs[-1].label)} and {escape(runs[-2].label)} have no scenario in '
            "common: there is nothing to compare (a run of another suite, or of another --tag "
            "selection). <code>evaluator compare</code> compares any two runs of the same scenarios.</p>"
        )
    rows = "".join(
        f"<tr><td>{escape(c['label'])}</td>"
        f"{_cell(c['figure'], c['baseline'], metrics)}{_cell(c['figure'], c['candidate'], metrics)}"
        f"<td>{escape(signed_change(c))}</td><td>{c['n']}</td>"
        f"<td>{escape(p_value_text(c))}</td>"
        f'<td class="{"failed" if c["regression"] else "passed"}">{escape(c["status"])}</td></tr>'
        for c in [*doc["checks"], *doc["group_checks"]]  # each agent's gated figures too
    )
    flips = "".join(
        f"<li>{escape(r['scenario_id'])}: {escape(r['baseline'])} &rarr; {escape(r['candidate'])}</li>"
        for r in doc["scenarios"]
        if r["flip"]
    )
    small = (
        f"<p><b>Few scenarios:</b> this rests on {doc['paired_scenarios']} scenarios; treat it as a hint.</p>"
        if doc["too_few_scenarios"]
        else ""
    )
    return (
        "<h2>Latest run against the one before</h2>"
        f'<p class="verdict {doc["verdict"]}" id="verdict">{escape(headline(doc))}</p>{small}'
        f'<p class="note">Noise check: {escape(doc["noise_test"])}.</p>'
        + _scroll(
            '<table id="comparison"><thead><tr><th>figure</th><th>before</th><th>now</th><th>change</th>'
            f"<th>scenarios</th><th>p</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        + f"<p>Scenarios that changed between passing and failing:</p><ul>{flips or '<li>none</li>'}</ul>"
    )


def _scenarios_section(runs: Sequence[RunRecord]) -> str:
    shown = list(runs[-_MAX_SCENARIO_RUNS:])
    by_run = [{str(r.get("scenario_id")): r for r in run.results} for run in shown]
    scenario_ids = sorted({sid for results in by_run for sid in results})
    labels = run_labels(shown)
    head = "".join(
        f'<th title="{escape(run.label)}, started {escape(run.started_at)}">'
        f"{escape(name)}<br>{escape(time)}</th>"
        for run, (name, time) in zip(shown, labels, strict=True)
    )
    rows = []
    for sid in scenario_ids:
        cells = []
        for results in by_run:
            result = results.get(sid)
            status = str(result.get("status")) if result is not None else "missing"
            mark = {"passed": "pass", "failed": "FAIL", "error": "ERROR"}.get(status, "-")
            cells.append(f'<td class="{escape(status)}" title="{escape(status)}">{mark}</td>')
        rows.append(f"<tr><td>{escape(sid)}</td>{''.join(cells)}</tr>")
    more = f" (the last {len(shown)} of {len(runs)} runs)" if len(runs) > len(shown) else ""
    return f"<h2>Each scenario, run by run{more}</h2>" + _scroll(
        f'<table class="sortable" id="scenarios"><thead><tr><th>scenario</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _scenario_sets(runs: Sequence[RunRecord]) -> str:
    """Whether the runs ran the same scenarios (figures of runs over other sets do not compare)."""
    sets = {frozenset(str(r.get("scenario_id")) for r in run.results) for run in runs}
    stopped = [run.label for run in runs if run.stopped]
    said = (
        "Each run ran the same set of test scenarios against the agents."
        if len(sets) <= 1
        else "The runs ran different sets of test scenarios (a --tag selection, say): a change in a "
        "run's figures may come from its scenarios; `evaluator compare` pairs them."
    )
    if stopped:
        said += f" Did not run to their end: {', '.join(stopped)}."
    return escape(said)
