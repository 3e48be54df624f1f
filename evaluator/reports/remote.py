"""Runs rebuilt from the scores in Langfuse (`report --source langfuse`, `compare --source langfuse`), so a
team sees runs made on other machines and in CI.

Each scenario score carries metadata `run_id`, `scenario_id`, `prompts` ({name: version}) and, for judge
scores, `judge_prompt`, `judge_prompt_version` and `judge_model` (the per-judge-prompt trends; the
per-agent judge's `agent_*` observation scores go back into `per_agent`'s agents, its own `agent_judge`
field is not rebuilt); its subject is the scenario's trace, an
observation in it (the per-agent scores, several of one name: a metric with `from_score_rows` reads
them all), or for a session metric's score the scenario's session. From them each scenario's result
object is rebuilt with what scores can tell: each metric of the `MetricSet` rebuilds its own field
(`Metric.from_scores`: `workflow.pass`, the trajectory modes, `answer.pass`, the quality dimensions,
the correctness verdict...), the prompt versions (source unknown), and the status: an `error` result
has only its metrics' error scores (each with an "error: ..." comment); otherwise the scenario passed
when no rebuilt field says it failed and one says it passed (the workflow, the full-workflow trajectory
and the answer check, where present). Not in scores, so absent here: latency, cost, run names (runs
are named by their id), evaluator errors (never scored) and unscored judge counts.

A dialogue (DESIGN.md, "Dialogues") is rebuilt from its session scores (`dialogue_pass`,
`dialogue_<key>`: its `dialogue` field, the task completion's comment its reason) and from its turns'
scores, each turn's trace holding its single-turn scores (scenario id `<scenario id>#<turn>`) and its
`turn_<key>` scores (the dialogue's scenario id, and the turn in `turn`): per turn, its `trace_id`, its
`metrics` (a key without a score: not measured), each figure's comment as its `details` reason, its
single-turn fields, and its status (`error` for a turn with only error scores; `failed` when a check
or an expected key it measured failed (intent, domain, acts, JGA, policy compliance, or the action, which
its `turn_system_correct` comment names); else `passed`). A dialogue with an errored turn is `error`.
Scores carry no messages or states: a rebuilt turn has no `input`, `output`, `state` or `expected`, and
the turns that never ran have no scores, so they are absent. A turn's per-agent scores (observations)
are not rebuilt: a turn's `per_agent` is absent; they go to the dialogue's rows with their turn (in
`turn`), where its `per_agent` finds the issues of calls no agent made, which no session score carries.
The dialogue metric's code (its keys) is imported only to rebuild a dialogue's turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaluator.metrics import Metric, MetricSet, session_id
from evaluator.reports.runs import RunRecord
from evaluator.results import default_metrics

__all__ = ["runs_from_scores"]

_TURN = "#"  # in a dialogue turn's scenario id (`<scenario id>#<turn>`): never in a scenario's own
_TURN_INDEX = "turn"  # in a `turn_<key>` score's metadata: the turn's index
_TURN_SCORE = "turn_"  # a turn's dialogue figure: `turn_<key>`
# a scenario's trace, an observation in it (per-agent scores), or its session (session metrics)
_SUBJECTS = frozenset({"trace", "observation", "session"})
_WRONG_ACTION = "action "  # `turn_system_correct`'s comment on a wrong action: "action a instead of b"

ByName = Mapping[str, Mapping[str, Any]]  # a scenario's (or a turn's) scores by name


def runs_from_scores(
    scores: Iterable[Mapping[str, Any]], metrics: MetricSet | None = None
) -> list[RunRecord]:
    """Runs (oldest first) from v3 score rows, their results rebuilt by the metrics of `metrics` (the
    built-in ones by default); scores that are not scenario scores of these metrics are ignored
    (`_ours`)."""
    metrics = metrics or default_metrics()
    grouped: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}  # run -> scenario -> name -> score
    rows: dict[tuple[str, str], list[Mapping[str, Any]]] = {}  # every score, several of a name too
    turns: dict[
        str, dict[str, dict[int, dict[str, Mapping[str, Any]]]]
    ] = {}  # run -> dialogue -> turn -> ...
    for score in {str(s.get("id")): s for s in scores}.values():
        if not _ours(score, metrics):
            continue
        metadata, subject = score["metadata"], score["subject"]
        run_id, scenario_id = str(metadata["run_id"]), str(metadata["scenario_id"])
        name = str(score["name"])
        one_of_a_name = subject.get("kind") != "observation"  # per agent: several of a name
        turn = _turn_of(scenario_id, name, metadata)
        if turn is not None:  # a dialogue turn's score: the dialogue's turn
            dialogue, index = turn
            if one_of_a_name:
                turns.setdefault(run_id, {}).setdefault(dialogue, {}).setdefault(index, {})[name] = score
            else:  # an observation's (per agent): the dialogue's rows too, naming its turn
                rows.setdefault((run_id, dialogue), []).append({**score, _TURN_INDEX: index})
            continue
        rows.setdefault((run_id, scenario_id), []).append(score)
        if one_of_a_name:
            grouped.setdefault(run_id, {}).setdefault(scenario_id, {})[name] = score
    runs = []
    for run_id in {*grouped, *turns}:
        scenarios, dialogues = grouped.get(run_id, {}), turns.get(run_id, {})
        results = tuple(
            _result(sid, scenarios.get(sid, {}), metrics, rows=rows.get((run_id, sid), ()))
            if sid not in dialogues
            else _dialogue(
                run_id, sid, scenarios.get(sid, {}), dialogues[sid], metrics, rows=rows.get((run_id, sid), ())
            )
            for sid in sorted({*scenarios, *dialogues})
        )
        every = [*scenarios.values(), *(t for d in dialogues.values() for t in d.values())]
        stamps = sorted(str(s.get("timestamp")) for by_name in every for s in by_name.values())
        runs.append(
            RunRecord(
                id=run_id,
                name=run_id,
                started_at=stamps[0],
                finished_at=stamps[-1],
                info={"source": "langfuse"},
                results=results,
            )
        )
    return sorted(runs, key=lambda run: (run.started_at, run.id))


def _ours(score: Mapping[str, Any], metrics: MetricSet) -> bool:
    """Whether a score is a scenario score this evaluator posted: a name of `metrics`, on a trace, an
    observation or a session, with metadata naming its run and scenario. Other tools' scores in the same
    project (an annotation, another evaluator's, even one that also puts `run_id` and `scenario_id` in
    its metadata) are not: they would make runs of their own, every scenario failed."""
    metadata, subject = score.get("metadata"), score.get("subject")
    return (
        score.get("name") in metrics.score_types
        and isinstance(subject, Mapping)
        and subject.get("kind") in _SUBJECTS
        and isinstance(metadata, Mapping)
        and isinstance(metadata.get("run_id"), str)
        and isinstance(metadata.get("scenario_id"), str)
    )


def _turn_of(scenario_id: str, name: str, metadata: Mapping[str, Any]) -> tuple[str, int] | None:
    """(dialogue scenario id, turn) of a dialogue turn's score; None for any other score."""
    dialogue, mark, index = scenario_id.rpartition(_TURN)
    if mark and index.isdigit():
        return dialogue, int(index)
    turn = metadata.get(_TURN_INDEX)
    if name.startswith(_TURN_SCORE) and isinstance(turn, int) and not isinstance(turn, bool):
        return scenario_id, turn
    return None


def _errored(by_name: Mapping[str, Mapping[str, Any]], metrics: MetricSet) -> bool:
    """Whether these are the scores of a run that raised or timed out: its metrics' error scores only
    (each with an "error: ..." comment)."""
    names = {value.name for metric in metrics for value in metric.error_scores("")}
    return (
        bool(by_name)
        and set(by_name) <= names
        and all(str(score.get("comment") or "").startswith("error:") for score in by_name.values())
    )


def _status(fields: Mapping[str, Any], metrics: MetricSet) -> str:
    said = [
        metric.passed_in(field) for metric in metrics if isinstance(field := fields.get(metric.key), Mapping)
    ]
    return "passed" if True in said and False not in said else "failed"


def _trace_id(by_name: Mapping[str, Mapping[str, Any]]) -> str:
    """The trace of a scenario's scores (a session score's subject is its session, not the trace)."""
    subjects = [score.get("subject") or {} for score in by_name.values()]
    return next((str(s.get("id", "")) for s in subjects if s.get("kind") == "trace"), "")


def _field(metric: Metric, by_name: ByName, rows: Sequence[Mapping[str, Any]]) -> Any:
    """A metric's field: from every score when it reads them all (`from_score_rows`), else by name."""
    from_rows = getattr(metric, "from_score_rows", None)  # optional: a project's metric may lack it
    return from_rows(rows) if callable(from_rows) and rows else metric.from_scores(by_name)


def _result(
    scenario_id: str, by_name: ByName, metrics: MetricSet, rows: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    errored = _errored(by_name, metrics)
    fields = {m.key: None if errored else _field(m, by_name, rows) for m in metrics}
    status = "error" if errored else _status(fields, metrics)
    document: dict[str, Any] = {"scenario_id": scenario_id, "trace_id": _trace_id(by_name), "status": status}
    return {
        **document,
        **fields,
        "judge_status": None,
        "prompts": _prompts(by_name),
        "latency_ms": None,
    }


def _prompts(by_name: ByName) -> dict[str, Any]:
    """The prompt versions a scenario's scores name (source unknown)."""
    prompts = (next(iter(by_name.values())).get("metadata") or {}).get("prompts")
    if not isinstance(prompts, Mapping):
        return {}
    return {
        str(name): {"version": version, "source": "unknown"}
        for name, version in prompts.items()
        if isinstance(version, int)
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _comment(score: Mapping[str, Any] | None) -> str:
    return str((score or {}).get("comment") or "")


def _dialogue(
    run_id: str,
    scenario_id: str,
    by_name: ByName,
    turns: Mapping[int, ByName],
    metrics: MetricSet,
    *,
    rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """A dialogue's result object: its session scores as a scenario's (none when no turn ran to its
    end: no figure either), its turns from their scores."""
    rebuilt = [_turn(index, turns[index], metrics) for index in sorted(turns)]
    document = (
        _result(scenario_id, by_name, metrics, rows)
        if by_name
        else {
            "scenario_id": scenario_id,
            "status": "failed",
            **{m.key: None for m in metrics},
            "judge_status": None,
            "prompts": _prompts(next(iter(turns.values()))),
            "latency_ms": None,
        }
    )
    session = next(
        (str(s["subject"]["id"]) for s in by_name.values() if s["subject"].get("kind") == "session"),
        session_id(run_id, scenario_id),
    )
    completion = _comment(by_name.get("dialogue_task_completion"))
    error = next((t for t in rebuilt if t["status"] == "error"), None)
    return document | {
        "status": "error" if error is not None else document["status"],
        "trace_id": rebuilt[0]["trace_id"],  # as a dialogue's result names its first turn's trace
        "kind": "dialogue",
        "session_id": session,
        "dialogue_details": {"task_completion": {"reason": completion}} if completion else {},
        "turns": rebuilt,
        "error": None if error is None else f"turn {error['turn']}: {error['error']}",
    }


def _turn(index: int, by_name: ByName, metrics: MetricSet) -> dict[str, Any]:
    """One turn of a dialogue from its trace's scores (module docstring)."""
    from evaluator.metrics import dialogue as dm  # here: runs without dialogues do not load their code
    from evaluator.results import DECIDING_KEYS

    figures = {key: by_name.get(f"{_TURN_SCORE}{key}") for key in dm.TURN_KEYS}
    single = {name: score for name, score in by_name.items() if not name.startswith(_TURN_SCORE)}
    errored = _errored(single, metrics)
    fields = {m.key: None if errored else m.from_scores(single) for m in metrics if m.level != "session"}
    values = {key: None if score is None else _number(score.get("value")) for key, score in figures.items()}
    wrong_action = any(
        part.startswith(_WRONG_ACTION) for part in _comment(figures["system_correct"]).split("; ")
    )
    failed = (
        wrong_action
        or any(values[key] == 0.0 for key in DECIDING_KEYS)
        or any(m.passed_in(f) is False for m in metrics if isinstance(f := fields.get(m.key), Mapping))
    )
    trace = next((str((s.get("subject") or {}).get("id", "")) for s in by_name.values()), "")
    error = next((_comment(s).removeprefix("error:").strip() for s in single.values()), None)
    return {
        "turn": index,
        "trace_id": trace,
        "status": "error" if errored else "failed" if failed else "passed",
        "metrics": values,
        "details": {key: {"reason": _comment(score)} for key, score in figures.items() if _comment(score)},
        **fields,
        "error": error if errored else None,
    }
