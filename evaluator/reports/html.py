"""`report --html FILE`: one self-contained page (inline CSS, SVG and a few lines of JS; nothing fetched
from the network) that someone who never used a terminal can read and pass on:

1. what the page is and the runs it covers;
2. per prompt version (agent prompts, then judge prompts): the report rows of reports/history.py;
3. trend charts over runs, one per figure, each point coloured by the prompt versions its run used
   (only the prompts whose version changed between runs), so a version change shows as a colour change;
4. the latest run against the one before it (reports/compare.py), flips first;
5. a table per scenario: its status in each run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evaluator.config import CompareConfig
from evaluator.reports.compare import compare_runs
from evaluator.reports.compare_text import figure_value, headline
from evaluator.reports.history import history
from evaluator.reports.runs import RunRecord
from evaluator.results import agent_prompts, summarize

__all__ = ["html_report"]

CHARTED = (
    ("pass_rate", "Scenarios passed"),
    ("workflow_pass_rate", "Workflow passed (right agents and tools)"),
    ("trajectory_full_workflow", "Tool path and flow exactly as expected (full workflow)"),
    ("quality_mean", "Answer quality (LLM judge, 0-1)"),
    ("correctness_accuracy", "Correct answers (correctness judge)"),
)
_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d")
_MAX_SCENARIO_RUNS = 12
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 680, 230, 52, 20, 16, 64

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2937;
  background:#f8fafc}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{margin-top:36px;border-bottom:2px solid #e5e7eb;padding-bottom:4px}
p.lead{color:#4b5563;margin-top:0}.note{color:#6b7280;font-size:13px}
table{border-collapse:collapse;margin:12px 0;background:#fff;font-size:14px}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:right}th{background:#f1f5f9;cursor:pointer}
td:first-child,th:first-child{text-align:left}
.passed{background:#dcfce7}.failed{background:#fee2e2}.error{background:#fde68a}.missing{color:#9ca3af}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600}
.verdict.ok{background:#dcfce7}.verdict.regression{background:#fee2e2}
.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{background:#fff;border:1px solid #e5e7eb;padding:8px}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}
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


def html_report(runs: Sequence[RunRecord], *, source: str, config: CompareConfig, generated_at: str) -> str:
    """The page for `runs` (oldest first)."""
    body = [
        "<h1>Agent evaluation report</h1>",
        f'<p class="lead">{len(runs)} runs from {escape(source)}, '
        f"{escape(runs[0].started_at if runs else '-')} to {escape(runs[-1].started_at if runs else '-')}. "
        f"Generated {escape(generated_at)}.</p>",
        f'<p class="note">{_scenario_sets(runs)} A scenario '
        "passes when the right agents and tools were used, in the expected order, and the answer "
        "contains what it must. Higher is better everywhere except latency.</p>",
        _versions_section(runs),
        _trends_section(runs),
        _comparison_section(runs, config),
        _scenarios_section(runs),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Agent evaluation report</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(body)}</main><script>{_JS}</script></body></html>\n"
    )


def _cell(name: str, value: Any) -> str:
    number = "" if value is None else f' data-value="{value}"'
    return f"<td{number}>{escape(figure_value(name, value))}</td>"


def _versions_section(runs: Sequence[RunRecord]) -> str:
    rows = history(runs, "prompt")
    columns = [name for name, _ in CHARTED] + ["correctness_truthfulness", "latency_ms"]
    parts = ["<h2>How each prompt version did</h2>"]
    for kind, title in (("agent_prompt", "Agent prompts"), ("judge_prompt", "Judge prompts")):
        chosen = [r for r in rows if r["group"] == kind]
        if not chosen:
            parts.append(f'<p class="note">{title}: none recorded in these runs.</p>')
            continue
        head = "".join(
            f"<th>{escape(c.replace('_', ' '))}</th>" for c in ["version", "runs", "scenarios", *columns]
        )
        body = "".join(
            f"<tr><td>{escape(r['key'])}</td><td>{r['runs']}</td><td>{r['scenarios']}</td>"
            + "".join(_cell(c, r[c]) for c in columns)
            + "</tr>"
            for r in chosen
        )
        parts.append(
            f'<h3>{title}</h3><table class="sortable" id="{kind}s"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
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


def _trends_section(runs: Sequence[RunRecord]) -> str:
    signatures = _signatures(runs)
    colors = {sig: _PALETTE[i % len(_PALETTE)] for i, sig in enumerate(dict.fromkeys(signatures))}
    summaries = [summarize(run.results) for run in runs]
    charts = [
        _chart(
            name, title, runs=runs, values=[s[name] for s in summaries], signatures=signatures, colors=colors
        )
        for name, title in CHARTED
        if any(s[name] is not None for s in summaries)
    ]
    legend = "".join(
        f'<span><i style="background:{color}"></i>{escape(sig or "same prompt versions in every run")}</span>'
        for sig, color in colors.items()
    )
    return (
        '<h2>Trends over runs</h2><p class="note">One point per run, oldest on the left. The colour '
        "shows which prompt versions the run used.</p>"
        f'<div class="legend">{legend}</div><div class="charts">{"".join(charts)}</div>'
    )


def _x(index: int, count: int) -> float:
    return _LEFT + (index * (_W - _LEFT - _RIGHT) / (count - 1) if count > 1 else (_W - _LEFT - _RIGHT) / 2)


def _y(value: float) -> float:
    return _TOP + (1 - max(0.0, min(1.0, value))) * (_H - _TOP - _BOTTOM)


def _chart(
    name: str,
    title: str,
    *,
    runs: Sequence[RunRecord],
    values: Sequence[float | None],
    signatures: Sequence[str],
    colors: Mapping[str, str],
) -> str:
    grid = "".join(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_y(t):.1f}" y2="{_y(t):.1f}" stroke="#e5e7eb"/>'
        f'<text x="{_LEFT - 6}" y="{_y(t) + 4:.1f}" text-anchor="end" font-size="11">{t:.0%}</text>'
        for t in (0.0, 0.25, 0.5, 0.75, 1.0)
    )
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    line = " ".join(f"{_x(i, len(runs)):.1f},{_y(v):.1f}" for i, v in points)
    step = max(1, len(runs) // 10)
    labels = "".join(
        f'<text x="{_x(i, len(runs)):.1f}" y="{_H - _BOTTOM + 16}" font-size="10" text-anchor="end" '
        f'transform="rotate(-30 {_x(i, len(runs)):.1f} {_H - _BOTTOM + 16})">{escape(run.name[:18])}</text>'
        for i, run in enumerate(runs)
        if i % step == 0 or i == len(runs) - 1
    )
    dots = "".join(
        f'<circle cx="{_x(i, len(runs)):.1f}" cy="{_y(v):.1f}" r="5" fill="{colors[signatures[i]]}" '
        f'data-run="{escape(runs[i].id)}" data-value="{v}" data-versions="{escape(signatures[i])}">'
        f"<title>{escape(runs[i].label)}: {escape(figure_value(name, v))}"
        f"{' - ' + escape(signatures[i]) if signatures[i] else ''}</title></circle>"
        for i, v in points
    )
    return (
        f'<figure class="chart"><figcaption><b>{escape(title)}</b></figcaption>'
        f'<svg class="trend" data-figure="{name}" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        f'role="img" aria-label="{escape(title)} per run">{grid}'
        f'<polyline points="{line}" fill="none" stroke="#94a3b8" stroke-width="2"/>{dots}{labels}'
        "</svg></figure>"
    )


def _comparison_section(runs: Sequence[RunRecord], config: CompareConfig) -> str:
    if len(runs) < 2:
        return "<h2>Latest run against the one before</h2><p>Only one run so far: nothing to compare.</p>"
    doc = compare_runs(runs[-2], runs[-1], config)
    rows = "".join(
        f"<tr><td>{escape(c['label'])}</td>"
        f"{_cell(c['figure'], c['baseline'])}{_cell(c['figure'], c['candidate'])}"
        f"<td>{escape(_signed(c))}</td><td>{c['n']}</td>"
        f"<td>{'-' if c['p_value'] is None else c['p_value']}</td>"
        f'<td class="{"failed" if c["regression"] else "passed"}">{escape(c["status"])}</td></tr>'
        for c in doc["checks"]
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
        '<table id="comparison"><thead><tr><th>figure</th><th>before</th><th>now</th><th>change</th>'
        f"<th>scenarios</th><th>p</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<p>Scenarios that changed between passing and failing:</p><ul>{flips or '<li>none</li>'}</ul>"
    )


def _signed(check: Mapping[str, Any]) -> str:
    return "-" if check["change"] is None else f"{check['change']:+.2f} {check['unit']}"


def _scenarios_section(runs: Sequence[RunRecord]) -> str:
    shown = list(runs[-_MAX_SCENARIO_RUNS:])
    by_run = [{str(r.get("scenario_id")): r for r in run.results} for run in shown]
    scenario_ids = sorted({sid for results in by_run for sid in results})
    head = "".join(f'<th title="{escape(run.label)}">{escape(run.name[:18])}</th>' for run in shown)
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
    return (
        f"<h2>Each scenario, run by run{more}</h2>"
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
