"""A comparison (reports/compare.py) for people: a terminal view and a markdown summary that fits a pull
request comment. Both say the verdict first, then the gated figures, then the scenarios that flipped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from evaluator.errors import did_you_mean
from evaluator.metrics import MetricSet
from evaluator.reports._markdown import markdown_text
from evaluator.reports._printable import printable
from evaluator.results import default_metrics

__all__ = ["compare_markdown", "figure_value", "headline", "p_value_text", "print_compare", "signed_change"]

_UNIT_SUFFIX = {"points": " pts", "score": "", "percent": " %"}


def figure_value(name: str, value: float | None, metrics: MetricSet | None = None) -> str:
    """A figure as people read it: rates (of `metrics`) in %, latency in ms, scores with two decimals."""
    if value is None:
        return "-"
    if name in (metrics or default_metrics()).rates:
        return f"{value:.0%}" if abs(value * 100 - round(value * 100)) < 0.05 else f"{value:.1%}"
    if name == "latency_ms":
        return f"{value:.0f} ms"
    return f"{value:.2f}"


def signed_change(check: Mapping[str, Any]) -> str:
    """A gated figure's change as the terminal writes it: "+0.33 pts", "-15.22 %", "-" when unknown."""
    change = check["change"]
    if change is None:
        return "-"
    return f"{change:+.2f}{_UNIT_SUFFIX[check['unit']]}"


def _limit(check: Mapping[str, Any]) -> str:
    sign = "-" if check["direction"] == "down" else "+"
    return f"{sign}{check['threshold']:g}{_UNIT_SUFFIX[check['unit']]}"


def p_value_text(check: Mapping[str, Any]) -> str:
    """A check's p-value with three decimals and whether it is beyond the noise; "-" when none."""
    if check["p_value"] is None:
        return "-"
    return f"{check['p_value']:.3f}" + (" (beyond noise)" if check["beyond_noise"] else " (within noise)")


def headline(doc: Mapping[str, Any]) -> str:
    base, cand = doc["baseline"], doc["candidate"]
    verdict = (
        f"REGRESSION ({', '.join(doc['regressions'])})" if doc["verdict"] == "regression" else "no regression"
    )
    return f"{_named(cand, base)} vs {_named(base, cand)}: {verdict}"


def _named(run: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """A run's name, with its id when the other run goes by the same name."""
    return (
        f"{run['name']} ({run['id']})"
        if run["name"] == other["name"] and run["id"] != run["name"]
        else run["name"]
    )


def _caveats(doc: Mapping[str, Any]) -> list[str]:
    notes = [
        f"{doc['paired_scenarios']} scenarios in both runs; noise: {doc['noise_test']}"
        + ("; only changes beyond the noise fail" if doc["significant_only"] else "")
        + "."
    ]
    if doc["baseline"]["id"] == doc["candidate"]["id"]:
        notes.append("The baseline and the candidate are the same run: nothing can have changed.")
    if doc["too_few_scenarios"]:
        notes.append(
            f"Too few scenarios: this verdict rests on {doc['paired_scenarios']} paired scenarios (fewer "
            f"than {doc['min_scenarios']}); treat it as a hint, not evidence."
        )
    for role in ("baseline", "candidate"):
        if stopped := doc[role].get("stopped"):
            notes.append(
                f"The {role} run did not run to its end ({stopped}): only the scenarios it "
                "finished are compared."
            )
    for key, label in (
        ("only_in_baseline", "only in the baseline"),
        ("only_in_candidate", "only in the candidate"),
    ):
        if doc[key]:
            notes.append(f"Not compared ({label}): {', '.join(doc[key])}.")
    notes += _groups_apart(doc)
    notes += _unused_thresholds(doc)
    notes += _not_comparable(doc)
    for change in doc["prompt_changes"]:
        notes.append(
            f"Prompt {change['name']}: {_versions(change['baseline'])} -> {_versions(change['candidate'])}."
        )
    models = doc.get("judge_models") or {}
    if models and models["baseline"] != models["candidate"]:
        before, after = (", ".join(models[side]) or "none (not judged)" for side in ("baseline", "candidate"))
        notes.append(f"Judge model: {before} -> {after}: the judged figures are not the same judge's.")
    return notes


def _groups_apart(doc: Mapping[str, Any]) -> list[str]:
    """Groups (agents) only one run has: listed, never gated as a drop."""
    notes = []
    for kind, apart in (doc.get("groups_apart") or {}).items():
        for key, label in (
            ("only_in_baseline", "only in the baseline"),
            ("only_in_candidate", "only in the candidate"),
        ):
            if apart[key]:
                notes.append(f"{kind.capitalize()}s {label} (listed, not gated): {', '.join(apart[key])}.")
    return notes


def _unused_thresholds(doc: Mapping[str, Any]) -> list[str]:
    """Per-group thresholds naming a group neither run has: the gate they meant does not exist."""
    return [
        f"[compare.thresholds] {row['key']} was not used: neither run has the {row['group_kind']} "
        f'"{row["group"]}"'
        + (did_you_mean(row["group"], row["groups"]) or f" (neither run has any {row['group_kind']})")
        + "."
        for row in doc.get("unused_thresholds") or []
    ]


def _not_comparable(doc: Mapping[str, Any]) -> list[str]:
    """Figures left out on some scenarios because the runs' values were made of different parts there
    (one run judged, the other not, say): one note per such pair of parts and count."""
    by_parts: dict[tuple[str, str, int], list[str]] = {}
    for row in doc.get("not_comparable") or []:
        by_parts.setdefault((row["baseline"], row["candidate"], row["scenarios"]), []).append(row["figure"])
    return [
        f"Not compared on {count} scenario(s), made of different parts (the baseline's {before}, the "
        f"candidate's {after}): {', '.join(figures)}."
        for (before, after, count), figures in by_parts.items()
    ]


def _all_checks(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The gated figures, then each group's (each agent's figures, labelled `<agent>: <figure>`)."""
    return [*doc["checks"], *(doc.get("group_checks") or [])]


def _versions(versions: list[int]) -> str:
    """`v1`, `v1/v2`; "not used" when none of the compared scenarios used the prompt (a judge prompt
    in a run whose judge gave no verdict)."""
    return "v" + "/".join(str(v) for v in versions) if versions else "not used"


def _plain(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _scenario_line(row: Mapping[str, Any]) -> str:
    """A changed scenario: its status, and each changed figure as the scenario has it (a pass rate's
    value for one scenario is its pass, named without `_rate`; other rates, a dialogue's hallucination
    or violation rate, keep their names)."""
    changed = ", ".join(
        f"{name.removesuffix('_rate') if name.endswith('_pass_rate') else name} "
        f"{_plain(v['baseline'])} -> {_plain(v['candidate'])}"
        for name, v in row["changes"].items()
    )
    flip = f" ({row['flip']})" if row["flip"] else ""
    return f"{row['scenario_id']}: {row['baseline']} -> {row['candidate']}{flip}" + (
        f"; {changed}" if changed else ""
    )


def _md(text: str) -> str:
    """Text from the runs (names of runs, agents, scenarios) as one line of a Markdown comment: a line
    break as a space, what Markdown, HTML or GitHub would read as markup escaped (reports/_markdown.py;
    `|` among it, so that a name holding one keeps to its table cell), and the characters a terminal
    would obey or that reorder or hide text as their escapes."""
    return printable(markdown_text(text.replace("\r\n", " ").replace("\n", " ")))


def compare_markdown(doc: Mapping[str, Any], metrics: MetricSet | None = None) -> str:
    """The comparison as Markdown (a pull request's comment): the headline, the caveats, a table of
    every figure and the scenarios that changed."""
    icon = ":x:" if doc["verdict"] == "regression" else ":white_check_mark:"
    lines = [f"### {icon} {_md(headline(doc))}", ""]
    lines += [f"> {_md(note)}" for note in _caveats(doc)] + [""]
    lines += [
        "| figure | baseline | candidate | change | threshold | scenarios | p | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in _all_checks(doc):
        lines.append(
            f"| {_md(c['label'])} | {figure_value(c['figure'], c['baseline'], metrics)} "
            f"| {figure_value(c['figure'], c['candidate'], metrics)} | {signed_change(c)} | {_limit(c)} "
            f"| {c['n']} | {p_value_text(c)} | {c['status']} |"
        )
    changed = [
        row
        for row in doc["scenarios"]
        if row["flip"] or row["changes"] or row["baseline"] != row["candidate"]
    ]
    lines += [
        "",
        f"**Scenarios that changed** ({len(changed)} of {doc['paired_scenarios']}, pass -> fail first):",
        "",
    ]
    lines += [f"- {_md(_scenario_line(row))}" for row in changed] or ["- none"]
    return "\n".join(lines) + "\n"


def print_compare(console: Console, doc: Mapping[str, Any], metrics: MetricSet | None = None) -> None:
    style = "bold red" if doc["verdict"] == "regression" else "bold green"
    console.print(Text(printable(headline(doc)), style=style))
    for note in _caveats(doc):
        console.print(escape(printable(note)), highlight=False, soft_wrap=True)
    table = Table(title="Gated figures")
    for column in ("figure", "baseline", "candidate", "change", "threshold", "scenarios", "p", "verdict"):
        table.add_column(column, justify="left" if column in ("figure", "verdict", "p") else "right")
    for c in _all_checks(doc):
        table.add_row(
            Text(printable(c["label"])), figure_value(c["figure"], c["baseline"], metrics),
            figure_value(c["figure"], c["candidate"], metrics),
            signed_change(c), _limit(c), str(c["n"]), p_value_text(c),
            Text(c["status"], style="red" if c["regression"] else ""),
        )  # fmt: skip
    console.print(table)
    changed = [
        row
        for row in doc["scenarios"]
        if row["flip"] or row["changes"] or row["baseline"] != row["candidate"]
    ]
    if not changed:
        console.print(f"No scenario changed (of {doc['paired_scenarios']}).", highlight=False)
    else:
        console.print(
            f"Scenarios that changed ({len(changed)} of {doc['paired_scenarios']}):", highlight=False
        )
    for row in changed:
        console.print("  " + escape(printable(_scenario_line(row))), highlight=False, soft_wrap=True)
