"""The one shape of everything that yields a figure, as in pydantic_evals and inspect_ai: a metric declares
its key (its field in the result object), its *stage* (``inline``: pure and fast, in the metrics stage;
``judge``: in the judge pool, given the shared judge runtime), the *level* it scores (a trace, an
observation, a session, the run), the score definitions it yields, and its figures with their aggregates
(`Figure`, like inspect_ai's ``@scorer(metrics=[accuracy()])``). Everything downstream (the pass rule, the
result JSON, scores and score configs, run figures, verify, the reports, compare's gate, runs rebuilt from
Langfuse scores) reads metrics through this shape only, from the `MetricSet` of the run: a new metric
family is one module and its tests.

Levels: a *trace* metric scores one trace (a single-turn scenario's run); a *session* metric scores a
session, every trace of one scenario's run (`session_id`: ``<run id>:<scenario id>``, as dialogues share
in Langfuse), from its traces' verdicts (`SessionContext`), and its scores are session scores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evaluator.scenarios import Scenario
from evaluator.trace import DetailSource, Trace

__all__ = [
    "Breakdown",
    "DataType",
    "Direction",
    "Figure",
    "Gate",
    "JudgeStatus",
    "Level",
    "Metric",
    "MetricBase",
    "MetricContext",
    "ScoreDefinition",
    "ScoreValue",
    "SessionContext",
    "Stage",
    "Unit",
    "Verdict",
    "at",
    "number",
    "number_at",
    "session_id",
    "weighted_mean",
]

DataType = Literal["BOOLEAN", "NUMERIC", "CATEGORICAL"]
Stage = Literal["inline", "judge"]
Level = Literal["observation", "trace", "session", "run"]
Direction = Literal["down", "up"]
Unit = Literal["points", "score", "percent"]


@dataclass(frozen=True, kw_only=True)
class ScoreDefinition:
    """What a score name means: Langfuse shows it with this type, range (NUMERIC: `bounds`, 0-1 unless
    said; None: no bound on that side, a count's top) and description; CATEGORICAL scores list their
    categories."""

    name: str
    data_type: DataType
    description: str
    categories: tuple[str, ...] = ()
    bounds: tuple[float | None, float | None] = (0.0, 1.0)
    level: Level | None = None  # where its scores go, when not its metric's level (a roll-up's session)


@dataclass(frozen=True, kw_only=True)
class ScoreValue:
    """One score a verdict yields: a value of its definition's type (BOOLEAN as 1.0 / 0.0, CATEGORICAL
    as the category's name); `metadata` is added to the score's own (a judge's prompt, model, trace)."""

    name: str
    value: float | str
    comment: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    observation_id: str | None = None  # an observation-level score: its observation, in the trace


@dataclass(frozen=True, kw_only=True)
class JudgeStatus:
    """Why there is (or is no) judge-stage verdict. A judge that did not run is never a score."""

    status: Literal["scored", "skipped", "unscored"]
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class Gate:
    """`compare`'s regression check on a figure: a change of more than `threshold` (in `unit`) in the bad
    `direction` is a regression. `setting` names the `[compare]` key that overrides the threshold
    (default: the figure's name in `[compare.thresholds]`); `floor_setting` a key whose value the raw
    change must also exceed (latency: a few milliseconds are timer noise)."""

    label: str
    direction: Direction = "down"
    unit: Unit = "points"
    threshold: float
    setting: str | None = None
    floor_setting: str | None = None


def _observed(row: Mapping[str, Any]) -> bool:
    """Whether a score read back from Langfuse is an observation's."""
    subject = row.get("subject")
    return isinstance(subject, Mapping) and subject.get("kind") == "observation"


def _none(_: Mapping[str, Any]) -> float | None:
    return None


@dataclass(frozen=True, kw_only=True)
class Figure:
    """A run-level figure: each result's value drawn from its JSON (`value`: None when the result does
    not have it), aggregated over the results that have it (`aggregate`: the mean, the only one so far;
    a session figure's per-result value is its session's). `weight`: how much a result weighs in that
    mean (None: each the same); a dialogue's mean over its turns weighs the turns that measured it, so
    that the run's figure is the mean over every measured turn of the run. `rate`: a 0-1 rate, shown in
    % and compared in points. `label`: its column in the history tables (None: not a column); `chart`:
    its trend chart's title in the HTML report; `delta`: shown in the history's change column;
    `change`: listed among a scenario's changes by compare (latency and cost always differ a little).
    `basis`: what a result's value is made of, where that depends on how the run was set up rather than
    on the system (with or without a judge's parts, say): compare pairs two results' values only when
    their bases are equal, and says how many it left out and why (None: always comparable)."""

    name: str
    value: Callable[[Mapping[str, Any]], float | None] = _none
    aggregate: Literal["mean"] = "mean"
    weight: Callable[[Mapping[str, Any]], float] | None = None
    level: Level = "trace"
    rate: bool = False
    gate: Gate | None = None
    label: str | None = None
    chart: str | None = None
    delta: bool = False
    change: bool = True
    basis: Callable[[Mapping[str, Any]], str] | None = None


def _no_groups(_: Mapping[str, Any]) -> Mapping[str, float]:
    return {}


@dataclass(frozen=True, kw_only=True)
class Breakdown:
    """A figure per group whose groups come from the results, not from the configuration (each agent
    that ran, say): `groups` gives a result's value per group (a group the result does not have, or
    did not measure, is left out). `compare` pairs each group's values over the scenarios both runs
    have and gates each group like a figure: `gate.label` is prefixed with the group, the threshold
    comes from `[compare.thresholds]` by `<name>.<group>`, else by `name`, else the gate's own.
    `members`: the groups a result has, measured or not (None: those `groups` gives), from which compare
    tells a group added or removed; `basis`: as a `Figure`'s."""

    name: str
    groups: Callable[[Mapping[str, Any]], Mapping[str, float]] = _no_groups
    group_kind: str = "group"  # what a group is, for people ("agent")
    rate: bool = False
    gate: Gate
    members: Callable[[Mapping[str, Any]], Iterable[str]] | None = None
    basis: Callable[[Mapping[str, Any]], str] | None = None


def weighted_mean(values: Sequence[float], weights: Sequence[float] | None = None) -> float | None:
    """The mean of `values`, each weighing its `weights` entry (None: each 1); None when there is no
    value, or no weight."""
    if weights is None:
        return sum(values) / len(values) if values else None
    total = sum(weights)
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total if total else None


def number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (bools included)."""
    return float(value) if type(value) in (int, float) else None


def at(document: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at `path` inside a JSON document (None where a step is missing)."""
    value: Any = document
    for part in path:
        # dict first: documents are JSON objects, and the Mapping check alone is several times slower
        value = value.get(part) if isinstance(value, (dict, Mapping)) else None
    return value


def number_at(*path: str) -> Callable[[Mapping[str, Any]], float | None]:
    """A figure's value: the number at `path` in the result object."""

    def value(document: Mapping[str, Any]) -> float | None:
        return number(at(document, path))

    return value


@dataclass(frozen=True, kw_only=True)
class MetricContext:
    """Everything a trace-level check may look at: the scenario's expectations, the normalized trace,
    the answer, and (`detail`) how to get what the normalized trace leaves out: its observations and
    usage. `detail` is None where the source is not at hand; call it only when needed (it costs a
    pass over the trace), and at most once."""

    scenario: Scenario
    trace: Trace
    answer: Any  # the final answer the system gave
    detail: DetailSource | None = None
    # a dialogue's turn: the conversation before it, as `{role, content}` messages (None: not a turn)
    history: tuple[Mapping[str, str], ...] | None = None


@dataclass(frozen=True, kw_only=True)
class SessionContext:
    """What a session-level metric sees: the scenario, and the verdicts of each of the session's traces
    (by metric key, in trace order: one trace for a single-turn scenario, one per turn for a dialogue)."""

    scenario: Scenario
    traces: tuple[Mapping[str, Verdict], ...]


_SESSION_ID_LIMIT = 200  # the Langfuse SDK drops a propagated session id longer than this


def session_id(run_id: str, scenario_id: str) -> str:
    """The session of one scenario's run (DESIGN.md, Dialogues: every turn of it shares this id):
    `<run id>:<scenario id>`. One longer than Langfuse takes (200 characters: the SDK drops a longer
    one, so the turns would share no session, and the session scores would be on one with no traces)
    keeps its start and ends with a digest of the whole scenario id: ids alike up to the cut differ."""
    whole = f"{run_id}:{scenario_id}"
    if len(whole) <= _SESSION_ID_LIMIT:
        return whole
    digest = hashlib.sha256(scenario_id.encode("utf-8")).hexdigest()[:16]
    return f"{whole[: _SESSION_ID_LIMIT - len(digest) - 1]}-{digest}"


class Verdict(Protocol):
    """A check's typed result."""

    @property
    def passed(self) -> bool | None:
        """Whether the scenario passes on this check; None for a check that informs but never decides."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The verdict's field in the result object (DESIGN.md, Result object)."""
        ...

    def scores(self) -> list[ScoreValue]:
        """The scores it yields, by the names of its metric's definitions."""
        ...

    def problems(self) -> list[str]:
        """What went wrong, as short phrases for the summary ([] when nothing did)."""
        ...


class Metric(Protocol):
    """One metric. Inline trace metrics implement `evaluate`, inline session metrics `evaluate_session`
    (pure and fast, never touching Langfuse; None when the scenario does not ask for it); an inline
    trace metric may implement `evaluate_session` too, for its roll-up over a dialogue's turns (the
    dialogue's field and session scores; `MetricSet.roll_up`). Judge-stage metrics are run by the
    judge runtime (judge/). The rest says how the metric shows everywhere else; `MetricBase` gives the
    defaults."""

    @property
    def key(self) -> str:
        """Its field in the result object (and the prefix its figures and scores usually share)."""
        ...

    @property
    def stage(self) -> Stage: ...

    @property
    def level(self) -> Level: ...

    @property
    def definitions(self) -> tuple[ScoreDefinition, ...]:
        """Every score its verdicts can yield."""
        ...

    @property
    def figures(self) -> tuple[Figure, ...]:
        """Its run-level figures, in order."""
        ...

    @property
    def order_sensitive(self) -> bool:
        """Its verdict depends on the order of calls (verify: ties in start times)."""
        ...

    def evaluate(self, context: MetricContext) -> Verdict | None: ...

    def evaluate_session(self, context: SessionContext) -> Verdict | None: ...

    def error_scores(self, message: str) -> list[ScoreValue]:
        """The scores of a run that raised or timed out (usually none)."""
        ...

    def passed_in(self, field: Mapping[str, Any]) -> bool | None:
        """Whether its field of a result object (rebuilt from scores, say) says the scenario passed."""
        ...

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        """Its field of a result object, rebuilt from a scenario's scores in Langfuse (by name)."""
        ...

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        """Its run-level dictionary (the run's `metrics[key]`), from the run's verdicts; None: none."""
        ...

    def summary_line(self, summary: Mapping[str, Any]) -> str | None:
        """That dictionary in one line, for the console."""
        ...

    def cell(self, verdict: Verdict) -> str:
        """Its verdict in a cell of the console's table."""
        ...

    def column(self) -> str | None:
        """Its column's heading in the console's table (None: no column of its own)."""
        ...

    def order_free(self, field: Mapping[str, Any]) -> object:
        """What must still match when only the order of calls is unsure (verify)."""
        ...

    def stored_view(self, field: Mapping[str, Any]) -> object:
        """What of its field must come out the same from the trace as Langfuse stores it (verify):
        everything, but figures Langfuse keeps less precisely (timings: milliseconds)."""
        ...


class MetricBase:
    """Defaults for a metric: an inline trace metric with no figures, no run summary and no column.
    Subclass it and set `key` and `definitions` (and `figures`), then override what differs."""

    key: str = ""
    stage: Stage = "inline"
    level: Level = "trace"
    definitions: tuple[ScoreDefinition, ...] = ()
    figures: tuple[Figure, ...] = ()
    breakdowns: tuple[Breakdown, ...] = ()  # optional on any metric: figures per group (`Breakdown`)
    order_sensitive: bool = False

    def evaluate(self, context: MetricContext) -> Verdict | None:
        return None

    def evaluate_session(self, context: SessionContext) -> Verdict | None:
        return None

    def error_scores(self, message: str) -> list[ScoreValue]:
        return []

    def passed_in(self, field: Mapping[str, Any]) -> bool | None:
        passed = field.get("pass")
        return passed if isinstance(passed, bool) else None

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        """Default: each of its scores by name, its value as posted."""
        found = {d.name: scores[d.name].get("value") for d in self.definitions if d.name in scores}
        return found or None

    def from_score_rows(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """Its field, rebuilt from every score of a scenario in Langfuse, as the v3 API gives them
        (`name`, `value`, `metadata`, `subject`; observation-level ones included). For metrics with
        several scores of one name (one per agent, say); optional on any metric (the rebuild falls
        back to `from_scores`). Default: `from_scores`, one score of each name of the trace or session."""
        return self.from_scores({str(row.get("name")): row for row in rows if not _observed(row)})

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        return None

    def summary_line(self, summary: Mapping[str, Any]) -> str | None:
        return None

    def cell(self, verdict: Verdict) -> str:
        return ""

    def column(self) -> str | None:
        return None

    def order_free(self, field: Mapping[str, Any]) -> object:
        return field

    def stored_view(self, field: Mapping[str, Any]) -> object:
        return field
