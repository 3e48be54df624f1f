"""`evaluator report --by agent`: each agent's figures per agent prompt version, from the results' `per_agent`
fields (DESIGN.md, Per-agent analysis), and every tool issue, linked to its trace.

A result counts toward every agent prompt version it used (its `prompts`, as `--by prompt` counts it),
and toward "(no prompt)" when it used none; within each, one row per agent that ran: the results it ran
in, its tool calls and issues (sums), `tool_use_score` (its calls without an issue / its calls, over all
its results: None without calls), and the means of its `score` (the weighted agent score), latency,
tokens and cost over the results that have them, and of the per-agent judge's reasoning, handoff and
response quality over the results judged (not measured or not judged: None, never 0). Then every tool
issue and every recommendation, each linked to its trace. Results with no `per_agent` field (the analysis
did not apply) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import quote

from rich.table import Table
from rich.text import Text

from evaluator.metrics import number
from evaluator.reports._printable import printable
from evaluator.reports.runs import RunRecord
from evaluator.results import agent_prompts

__all__ = [
    "NO_PROMPT",
    "TraceLink",
    "agent_issues",
    "agent_recommendations",
    "agent_rows",
    "agent_tables",
    "agents_document",
    "agents_html",
    "trace_links",
]

NO_PROMPT = "(no prompt)"
TraceLink = Callable[[str, str | None], str | None]  # (trace id, observation id) -> its page, if known


def trace_links(traces_page: str) -> TraceLink:
    """Links to the trace pages under `traces_page` (Langfuse's `<base>/project/<id>/traces/`), on the
    observation when one is named. The ids come from the runs (or from Langfuse's scores) and are
    percent-encoded, so that whatever they hold (`/`, `?`, `#`, `..`) names a trace under that page and
    nothing else; no trace id: no link."""

    def link(trace_id: str, observation_id: str | None) -> str | None:
        if not trace_id:
            return None
        observation = f"?observation={quote(observation_id, safe='')}" if observation_id else ""
        return traces_page + quote(trace_id, safe="") + observation

    return link


@dataclass
class _Agent:
    results: int = 0
    tool_calls: int = 0
    faulty_calls: int = 0
    issues: int = 0
    means: dict[str, list[float]] = field(default_factory=dict)  # latency_ms, tokens, cost

    def add(self, entry: Mapping[str, Any]) -> None:
        self.results += 1
        calls = entry.get("tool_calls")
        found = entry.get("issues")
        issues: list[Any] = found if isinstance(found, list) else []
        self.tool_calls += calls if isinstance(calls, int) else 0
        self.faulty_calls += len({i.get("observation_id") for i in issues if isinstance(i, Mapping)})
        self.issues += len(issues)
        for name in _MEANS:
            value = number(entry.get(name))
            if value is not None:
                self.means.setdefault(name, []).append(value)

    def figures(self) -> dict[str, Any]:
        score = (self.tool_calls - self.faulty_calls) / self.tool_calls if self.tool_calls else None
        means = {name: round(sum(v) / len(v), 6) if (v := self.means.get(name)) else None for name in _MEANS}
        return {
            "results": self.results,
            "tool_calls": self.tool_calls,
            "issues": self.issues,
            "tool_use_score": round(score, 4) if score is not None else None,
            **means,
        }


_JUDGED = ("reasoning", "handoff", "response_quality")  # the per-agent judge's (0-1)
_MEANS = ("score", "latency_ms", "tokens", "cost", *_JUDGED)


def _agents_of(result: Mapping[str, Any]) -> Mapping[str, Any]:
    field_ = result.get("per_agent")
    agents = field_.get("agents") if isinstance(field_, Mapping) else None
    return agents if isinstance(agents, Mapping) else {}


def _versions(result: Mapping[str, Any]) -> list[str]:
    return [f"{name}@v{version}" for name, version, _ in agent_prompts(result)] or [NO_PROMPT]


def agent_rows(runs: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """One row per (agent prompt version, agent), by prompt version then agent name."""
    grouped: dict[tuple[str, str], _Agent] = {}
    for run in runs:
        for result in run.results:
            if result.get("evaluator_error"):
                continue  # the evaluator failed, not the agent
            agents = _agents_of(result)
            for version in _versions(result) if agents else ():
                for name, entry in agents.items():
                    if isinstance(entry, Mapping):
                        grouped.setdefault((version, str(name)), _Agent()).add(entry)
    return [
        {"prompt": version, "agent": agent, **grouped[(version, agent)].figures()}
        for version, agent in sorted(grouped, key=lambda k: (k[0] == NO_PROMPT, k))
    ]


def agent_issues(runs: Sequence[RunRecord], link: TraceLink | None = None) -> list[dict[str, Any]]:
    """Every tool issue of the runs, oldest run first, with its run, scenario, agent (None: outside
    every agent) and trace, and `url` (its trace's page, on the observation) when `link` knows it."""
    found = []
    for run in runs:
        for result in run.results:
            for agent, issue in _issues_of(result):
                # a dialogue's issue names its turn's trace; a single trace's is the result's
                trace_id = str(issue.get("trace_id") or result.get("trace_id") or "")
                observation = issue.get("observation_id")
                url = link(trace_id, observation if isinstance(observation, str) else None) if link else None
                found.append(
                    {"run": run.label, "scenario_id": result.get("scenario_id"), "agent": agent, **issue}
                    | {"trace_id": trace_id, "url": url}
                )
    return found


def agent_recommendations(runs: Sequence[RunRecord], link: TraceLink | None = None) -> list[dict[str, Any]]:
    """Every recommendation of the runs, oldest run first, with its run, scenario, agent, message, the
    observations that caused it and its trace (a dialogue's: its turn's, and its `turn`), and `url`
    (its trace's page, on the first of them) when `link` knows it."""
    found = []
    for run in runs:
        for result in run.results:
            if result.get("evaluator_error"):
                continue
            for name, entry in _agents_of(result).items():
                listed = entry.get("recommendations") if isinstance(entry, Mapping) else None
                for advice in listed if isinstance(listed, list) else ():
                    if not isinstance(advice, Mapping):
                        continue
                    # a dialogue's recommendation names its turn's trace; a single trace's is the result's
                    trace_id = str(advice.get("trace_id") or result.get("trace_id") or "")
                    ids = [i for i in advice.get("observation_ids") or () if isinstance(i, str)]
                    url = link(trace_id, ids[0] if ids else None) if link else None
                    found.append(
                        {"run": run.label, "scenario_id": result.get("scenario_id"), "agent": str(name)}
                        | {"message": advice.get("message"), "observation_ids": ids}
                        | ({"turn": advice["turn"]} if "turn" in advice else {})
                        | {"trace_id": trace_id, "url": url}
                    )
    return found


def _issues_of(result: Mapping[str, Any]) -> Iterable[tuple[str | None, Mapping[str, Any]]]:
    for name, entry in _agents_of(result).items():
        issues = entry.get("issues") if isinstance(entry, Mapping) else None
        for issue in issues if isinstance(issues, list) else ():
            if isinstance(issue, Mapping):
                yield str(name), issue
    field_ = result.get("per_agent")
    outside = field_.get("unattributed_issues") if isinstance(field_, Mapping) else None
    for issue in outside if isinstance(outside, list) else ():
        if isinstance(issue, Mapping):
            yield None, issue


def agents_document(runs: Sequence[RunRecord], source: str, link: TraceLink | None = None) -> dict[str, Any]:
    """What `evaluator report --by agent --json` prints."""
    return {
        "by": "agent",
        "source": source,
        "runs": [run.ref() for run in runs],
        "rows": agent_rows(runs),
        "issues": agent_issues(runs, link),
        "recommendations": agent_recommendations(runs, link),
    }


_COLUMNS = (
    "results",
    "tool_calls",
    "issues",
    "tool_use_score",
    "score",
    "latency_ms",
    "tokens",
    "cost",
    *_JUDGED,
)
_HEADINGS = {"latency_ms": "latency"}  # shown in seconds
_SCORES = ("score", *_JUDGED)  # 0-1, shown with two decimals


def _heading(name: str) -> str:
    return _HEADINGS.get(name, name.replace("_", " "))


def _shown(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name == "tool_use_score":
        return f"{value:.0%}"
    if name == "latency_ms":
        return f"{value / 1000:.2f} s"
    if name == "cost":
        return f"${value:.4f}"
    if name in _SCORES:
        return f"{value:.2f}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _by_prompt(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(str(row["prompt"]), []).append(row)
    return grouped


def _issue_text(issue: Mapping[str, Any]) -> str:
    return f"{issue.get('kind')}: {issue.get('message')}"


def _text(value: Any) -> Text:
    """A cell of text from the runs: as written (no markup), control characters as their escapes."""
    return Text(printable(str(value)))


def agent_tables(document: Mapping[str, Any]) -> list[Table]:
    """The console's tables: one per agent prompt version (a row per agent), then the issues."""
    tables = []
    for version, rows in _by_prompt(document["rows"]).items():
        table = Table(title=_text(f"Agents with {version}"))  # a prompt name from the runs: not markup
        table.add_column("agent", no_wrap=True)
        for name in _COLUMNS:
            table.add_column(_heading(name), justify="right")
        for row in rows:
            table.add_row(_text(row["agent"]), *(_shown(name, row[name]) for name in _COLUMNS))
        tables.append(table)
    if document["issues"]:
        table = Table(title="Tool issues")
        for name in ("run", "scenario", "agent", "issue", "trace"):
            table.add_column(name, overflow="fold")
        for issue in document["issues"]:
            table.add_row(
                _text(issue["run"]), _text(issue["scenario_id"]), _text(issue["agent"] or "-"),
                _text(_issue_text(issue)), _text(issue["url"] or issue["trace_id"]),
            )  # fmt: skip
        tables.append(table)
    if document.get("recommendations"):
        table = Table(title="Recommendations")
        for name in ("run", "scenario", "agent", "recommendation", "trace"):
            table.add_column(name, overflow="fold")
        for advice in document["recommendations"]:
            table.add_row(
                _text(advice["run"]), _text(advice["scenario_id"]), _text(advice["agent"]),
                _text(advice["message"]), _text(advice["url"] or advice["trace_id"]),
            )  # fmt: skip
        tables.append(table)
    return tables


def agents_html(runs: Sequence[RunRecord], link: TraceLink | None = None) -> str:
    """The HTML report's section: a table per agent prompt version, then the issues with their links
    ("" when no result has a `per_agent` field)."""
    document = agents_document(runs, "", link)
    if not document["rows"]:
        return ""
    parts = ["<h2>Each agent, per prompt version</h2>"]
    head = "<th>agent</th>" + "".join(f"<th>{_heading(name)}</th>" for name in _COLUMNS)
    for version, rows in _by_prompt(document["rows"]).items():
        body = "".join(
            f"<tr><td>{escape(str(row['agent']))}</td>"
            + "".join(f"<td>{escape(_shown(name, row[name]))}</td>" for name in _COLUMNS)
            + "</tr>"
            for row in rows
        )
        parts.append(
            f'<h3>{escape(version)}</h3><div class="scroll"><table class="sortable"><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div>"
        )
    if document["issues"]:
        items = "".join(
            f"<li>{escape(str(i['run']))}, {escape(str(i['scenario_id']))}, "
            f"<strong>{escape(str(i['agent'] or 'no agent'))}</strong>: {escape(_issue_text(i))} "
            + (
                f'(<a href="{escape(i["url"])}">trace</a>)'
                if i["url"]
                else f"(trace {escape(i['trace_id'])})"
            )
            + "</li>"
            for i in document["issues"]
        )
        parts.append(f'<h3>Tool issues</h3><ul class="issues">{items}</ul>')
    if document["recommendations"]:
        items = "".join(
            f"<li>{escape(str(a['run']))}, {escape(str(a['scenario_id']))}, "
            f"<strong>{escape(str(a['agent']))}</strong>: {escape(str(a['message']))} {_trace_html(a)}</li>"
            for a in document["recommendations"]
        )
        parts.append(f'<h3>Recommendations</h3><ul class="issues">{items}</ul>')
    return "".join(parts)


def _trace_html(issue: Mapping[str, Any]) -> str:
    if issue["url"]:
        return f'(<a href="{escape(issue["url"])}">trace</a>)'
    return f"(trace {escape(issue['trace_id'])})"
