"""The HTML report's dialogues (`report --html`; DESIGN.md, "Dialogues"): each dialogue of the latest run
that has dialogues, turn by turn.

Per dialogue: its status, whether its goal was completed (and why not), and its figures (the means of
the per-turn keys over the turns that measured them, and the per-dialogue keys). Per turn: what the user
said, what the system replied, the state the target reported against the one expected (intent, domain,
acts, slots, action: `matched`, `differs` or `not measured`, as the turn's figures decided it), the
turn's figures, and what failed on it (the error, the workflow, the trajectory, the answer check, the
correctness verdict, each expected key that differed, the policy, hallucinated slots and entities,
system correctness).

It reads result objects only, so it shows runs from the local store and runs rebuilt from Langfuse's
scores alike; a rebuilt turn has its figures and verdicts, but neither its messages nor its state
(scores do not carry them): those cells say so. Every value from the run (messages, states, reasons)
is untrusted and escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evaluator.metrics import AnswerContainsMetric, TrajectoryMetric, WorkflowValidator
from evaluator.metrics import dialogue as dm
from evaluator.reports.agents import TraceLink
from evaluator.reports.runs import RunRecord
from evaluator.results import DECIDING_KEYS

__all__ = ["dialogues_html", "is_dialogue", "turn_problems"]

_STATE_KEYS = (  # (state key, the turn figure that compares it, label); the action is compared here
    ("intent", "intent_accuracy", "intent"),
    ("domain", "domain_accuracy", "domain"),
    ("acts", "act_accuracy", "acts"),
    ("slots", "jga", "slots (JGA)"),
    ("action", None, "action"),
)
_DIFFERS = {  # what each figure that fails a turn when 0 (results' DECIDING_KEYS) means then
    "intent_accuracy": "intent differs",
    "domain_accuracy": "domain differs",
    "act_accuracy": "acts differ",
    "jga": "slots differ (JGA)",
    "policy_compliant": "policy violated",
}
_COUNTS = frozenset({"policy_violations"})
_SCORES = frozenset({"multi_turn_conversation_score"})
_NOT_RECORDED = "not in the scores"
_MAX_DIALOGUES = 100  # per page: a run of thousands of dialogues would make a page nobody reads


def _mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object of a result object, or an empty one when it is anything else (null, say)."""
    return value if isinstance(value, Mapping) else {}


def is_dialogue(result: Mapping[str, Any]) -> bool:
    """Whether a result object is a dialogue's."""
    return result.get("kind") == "dialogue"


def dialogues_html(runs: Sequence[RunRecord], link: TraceLink | None = None) -> str:
    """The section: the dialogues of the latest run that has any ("" when no run has one), failed and
    errored ones first and open, each turn linked to its trace when `link` knows its page."""
    run = next((r for r in reversed(runs) if any(is_dialogue(d) for d in r.results)), None)
    if run is None:
        return ""
    dialogues = sorted(
        (d for d in run.results if is_dialogue(d)),
        key=lambda d: (d.get("status") == "passed", str(d.get("scenario_id"))),
    )
    passed = sum(d.get("status") == "passed" for d in dialogues)
    shown = dialogues[:_MAX_DIALOGUES]
    more = (
        f" The first {len(shown)} are shown, failed ones first; the result objects of `run --output` "
        "have them all."
        if len(dialogues) > len(shown)
        else ""
    )
    return (
        '<h2 id="dialogues">Dialogues, turn by turn</h2>'
        f'<p class="note">Run {escape(run.label)}, started {escape(run.started_at)}: {passed} of '
        f"{len(dialogues)} dialogues passed.{more} A turn passes when its checks pass and every "
        "expected key it measured matched; a dialogue passes when every turn passed and its goal, if "
        "it has one, was completed. <i>not measured</i>: the target did not report that key, or the "
        "turn expects none; never a failure.</p>" + "".join(_dialogue(d, link) for d in shown)
    )


def _dialogue(result: Mapping[str, Any], link: TraceLink | None) -> str:
    status = str(result.get("status") or "-")
    sid = str(result.get("scenario_id"))
    figures = _mapping(result.get("dialogue"))
    turns = [t for t in result.get("turns") or () if isinstance(t, Mapping)]
    ran = [t for t in turns if t.get("status") != "not run"]
    rebuilt = bool(turns) and all("input" not in t for t in turns)  # from scores: the turns that ran
    counted = f"{len(ran)} turns in the scores" if rebuilt else f"{len(ran)} of {len(turns)} turns ran"
    error = f' <span class="note">{escape(str(result["error"]))}</span>' if result.get("error") else ""
    return (
        f'<details class="dialogue" data-scenario="{escape(sid)}" data-status="{escape(status)}"'
        f"{' open' if status != 'passed' else ''}><summary>{_badge(status)} "
        f"<b>{escape(sid)}</b>: {escape(_goal(result, figures))}; "
        f"{counted}{error}</summary>"
        f"{_figures_list(figures, dm.TURN_KEYS + dm.DIALOGUE_KEYS, 'dialogue-figures')}"
        f'<p class="note">Session {escape(str(result.get("session_id") or "-"))}</p>'
        + "".join(_turn(turn, link) for turn in turns)
        + "</details>"
    )


def _badge(status: str) -> str:
    """A status in its colour (the scenario table's: passed green, failed red, error amber)."""
    return f'<span class="badge {escape(status.replace(" ", "-"))}">{escape(status)}</span>'


def _goal(result: Mapping[str, Any], figures: Mapping[str, Any]) -> str:
    completion = figures.get("task_completion")
    details = result.get("dialogue_details") or {}
    reason = str((details.get("task_completion") or {}).get("reason") or "")
    if completion is None:
        return "goal not measured" + (f" ({reason})" if reason else "")
    if completion == 1:
        return "goal completed"
    return "goal NOT completed" + (f": {reason}" if reason else "")


def _shown(key: str, value: Any) -> str:
    """A dialogue figure as people read it: yes / no for the per-turn yes-or-no keys of one turn,
    rates in %, the violation count as a count, the conversation score with two decimals."""
    if value is None:
        return "not measured"
    if key in _COUNTS:
        return f"{value:g}"
    if key in _SCORES:
        return f"{value:.2f}"
    return f"{value:.0%}" if abs(value * 100 - round(value * 100)) < 0.05 else f"{value:.1%}"


def _figures_list(figures: Mapping[str, Any], keys: Sequence[str], kind: str, *, turn: bool = False) -> str:
    items = []
    for key in keys:
        value = figures.get(key)
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        yes_no = turn and key in dm.BOOLEAN_KEYS and number is not None
        shown = ("yes" if number else "no") if yes_no else None
        data = "" if number is None else f' data-value="{number:g}"'
        items.append(
            f'<li data-key="{key}"{data}>{key.replace("_", " ")}: '
            f"<b>{escape(shown or _shown(key, number))}</b></li>"
        )
    return f'<ul class="figures {kind}">{"".join(items)}</ul>'


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def _turn(turn: Mapping[str, Any], link: TraceLink | None) -> str:
    index, status = turn.get("turn"), str(turn.get("status") or "-")
    head = f"<h4>{_badge(status)} Turn {escape(str(index))}"
    trace = str(turn.get("trace_id") or "")
    url = link(trace, None) if link is not None and trace else None
    head += f' <a class="note" href="{escape(url)}">trace</a>' if url else ""
    head += f' <span class="note">trace {escape(trace)}</span>' if trace and not url else ""
    if status == "not run":
        return (
            f'<section class="turn" data-turn="{escape(str(index))}" data-status="not run">{head}</h4>'
            + _said("User", turn, "input")
            + "</section>"
        )
    metrics = _mapping(turn.get("metrics"))
    problems = turn_problems(turn)
    failed = (
        '<p><b>What failed:</b></p><ul class="problems">'
        + "".join(f"<li>{escape(p)}</li>" for p in problems)
        + "</ul>"
        if problems
        else ""
    )
    return (
        f'<section class="turn" data-turn="{escape(str(index))}" data-status="{escape(status)}">'
        f"{head}</h4>{_said('User', turn, 'input')}{_said('Reply', turn, 'output')}"
        f"{_state_table(turn, metrics)}"
        f"{_figures_list(metrics, dm.TURN_KEYS, 'turn-figures', turn=True)}{failed}</section>"
    )


def _said(who: str, turn: Mapping[str, Any], key: str) -> str:
    """What the user said or the system replied; a turn rebuilt from scores has neither (no key)."""
    if key not in turn:
        shown = f'<span class="missing">{_NOT_RECORDED}</span>'
    else:
        text = _text(turn[key])
        shown = (
            escape(text)
            if text
            else f'<span class="missing">{"-" if turn[key] is None else "(empty)"}</span>'
        )
    return f'<p class="said"><b>{who}:</b> {shown}</p>'


def _state_table(turn: Mapping[str, Any], metrics: Mapping[str, Any]) -> str:
    recorded = "state" in turn and "expected" in turn  # a turn rebuilt from scores has neither
    state = _mapping(turn.get("state"))
    expected = _mapping(turn.get("expected"))
    rows = []
    for key, figure, label in _STATE_KEYS:
        verdict = _verdict(metrics.get(figure) if figure else _action_match(state, expected))
        if figure is None and not recorded:
            verdict = ("missing", _NOT_RECORDED)
        cells = (
            f"<td>{_state_cell(state, key)}</td><td>{_state_cell(expected, key, expected=True)}</td>"
            if recorded
            else f'<td class="missing">{_NOT_RECORDED}</td>' * 2
        )
        rows.append(
            f'<tr data-key="{key}"><td>{escape(label)}</td>{cells}'
            f'<td class="{verdict[0]}">{escape(verdict[1])}</td></tr>'
        )
    return (
        '<div class="scroll"><table class="state"><thead><tr><th>state</th><th>reported</th>'
        f"<th>expected</th><th>verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _state_cell(values: Mapping[str, Any], key: str, *, expected: bool = False) -> str:
    if key not in values or values[key] is None:
        if expected and key == "domain" and (implied := _implied_domain(values.get("intent"))) is not None:
            return f'{escape(implied)} <span class="note">(from the intent)</span>'
        return '<span class="missing">-</span>'
    return escape(_text(values[key]))


def _implied_domain(intent: Any) -> str | None:
    """The domain an expected state without one is compared on (the metric's `expected_domain`)."""
    if isinstance(intent, str) or (isinstance(intent, list) and all(isinstance(i, str) for i in intent)):
        return dm.expected_domain(dm.DialogueState.of(intent=intent))
    return None


def _verdict(value: Any) -> tuple[str, str]:
    """(class, words) of a comparison: 1 matched, 0 differs, None not measured."""
    if value is None:
        return ("missing", "not measured")
    return ("passed", "matched") if value == 1 else ("failed", "differs")


def _action_match(state: Any, expected: Any) -> float | None:
    """1 / 0 when the turn expects an action and the target reported one (compared as the metrics
    compare labels), else None."""
    wanted = expected.get("action") if isinstance(expected, Mapping) else None
    got = state.get("action") if isinstance(state, Mapping) else None
    if not isinstance(wanted, str) or not isinstance(got, str):
        return None
    return 1.0 if dm.normalise_label(wanted) == dm.normalise_label(got) else 0.0


def turn_problems(turn: Mapping[str, Any]) -> list[str]:
    """What failed on a turn, as short phrases, from its result object (as stored, or rebuilt from
    scores: then with what the scores tell)."""
    if turn.get("status") == "error":
        return [f"error: {turn.get('error') or 'the turn did not finish'}"]
    found = [*_single_turn(turn)]
    metrics = _mapping(turn.get("metrics"))
    details = _mapping(turn.get("details"))
    for key in DECIDING_KEYS:
        if metrics.get(key) == 0:
            found.append(_with_reason(_DIFFERS.get(key, f"{key} failed"), details.get(key)))
    for key, what in (("slot_hallucination_rate", "slots"), ("entity_hallucination_rate", "entities")):
        rate = metrics.get(key)
        if isinstance(rate, int | float) and rate > 0:
            named = (details.get(key) or {}).get("hallucinated") or []
            found.append(
                f"hallucinated {what}: {', '.join(str(n) for n in named)}"
                if named
                else f"hallucinated {what}: {_shown(key, rate)} of those checked"
            )
    if metrics.get("system_correct") == 0:  # a wrong action says so here (and in the state table)
        found.append(_with_reason("not system-correct", details.get("system_correct")))
    return found


def _with_reason(words: str, details: Any) -> str:
    reason = str(details.get("reason") or "") if isinstance(details, Mapping) else ""
    return f"{words}: {reason}" if reason else words


# The single-turn checks whose failures a turn shows, each deciding by its own field (`passed_in`).
_WORKFLOW, _TRAJECTORY, _ANSWER = WorkflowValidator(), TrajectoryMetric(), AnswerContainsMetric()


def _single_turn(turn: Mapping[str, Any]) -> list[str]:
    """The turn's single-turn checks that failed: workflow, trajectory, answer, correctness."""
    found = []
    workflow = turn.get(WorkflowValidator.key)
    if isinstance(workflow, Mapping) and _WORKFLOW.passed_in(workflow) is False:
        named = [
            f"{label} {kind} {', '.join(str(n) for n in names)}"
            for kind in ("agents", "tools")
            for label in ("missing", "unexpected")
            if (names := (workflow.get(kind) or {}).get(label))
        ]
        found.append("workflow: " + ("; ".join(named) or "failed"))
    trajectory = turn.get(TrajectoryMetric.key)
    if isinstance(trajectory, Mapping) and _TRAJECTORY.passed_in(trajectory) is False:
        actual, expected = trajectory.get("actual"), trajectory.get("expected")
        path = (
            f"path {' > '.join(actual) or '(none)'}, expected {' > '.join(expected) or '(none)'}"
            if isinstance(actual, list) and isinstance(expected, list)
            else "not the expected path or flow"
        )
        flow = _mapping(trajectory.get("flow"))
        if flow.get("expected") is not None and flow.get("actual") != flow.get("expected"):
            path += f"; flow {flow.get('actual')} (expected {flow.get('expected')})"
        found.append(f"trajectory: {path}")
    answer = turn.get(AnswerContainsMetric.key)
    if isinstance(answer, Mapping) and _ANSWER.passed_in(answer) is False:
        missing = answer.get("missing")
        found.append(
            f"answer lacks {', '.join(repr(s) for s in missing)}" if missing else "answer check failed"
        )
    correctness = turn.get("correctness")
    if isinstance(correctness, Mapping) and correctness.get("verdict") not in (None, "correct"):
        reason = correctness.get("reason")
        found.append(f"correctness: {correctness['verdict']}" + (f" ({reason})" if reason else ""))
    return found
