"""`MetricSet`: the metrics of one run, an ordered immutable value built once (from the configuration:
results/builtin.py) and handed to everything that reads verdicts: the pipeline, the result object, the
scores and score configs, the run figures, verify, the reports, compare and runs rebuilt from Langfuse.
There is no registry: what is not in the set does not exist for that run.

Order is meaning: metrics' fields appear in the result object in the set's order, and the figures are
the result's own first figure (`pass_rate`), every metric's figures in order, then the result's own last
ones (`latency_ms`, `cost`). Everything the set derives (figure names, rates, score types, gates) is
computed once, when it is built.

Every figure is the mean of a per-result value over the results that have it (weighted where the
figure says: a dialogue by the turns it measured), so a run, a prompt version, a scenario's history and
a pair of runs are all summarised the same way. Results with an
`evaluator_error` are counted but never enter a figure: the evaluator failed, not the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from evaluator.errors import ConfigError
from evaluator.metrics.base import (
    Breakdown,
    DataType,
    Figure,
    Gate,
    Metric,
    MetricContext,
    ScoreDefinition,
    SessionContext,
    Verdict,
    at,
    number_at,
    weighted_mean,
)

__all__ = ["COST", "LATENCY", "PASS_RATE", "MetricSet"]


def _passed(document: Mapping[str, Any]) -> float:
    return 1.0 if document.get("status") == "passed" else 0.0


# The result's own figures, whatever the metrics: whether it passed, and what it took.
PASS_RATE = Figure(
    name="pass_rate",
    value=_passed,
    rate=True,
    label="pass",
    chart="Scenarios passed",
    delta=True,
    change=False,  # the status itself, not one of a scenario's changes
)
LATENCY = Figure(
    name="latency_ms",
    value=number_at("latency_ms"),
    label="latency",
    change=False,
    gate=Gate(
        label="mean latency",
        direction="up",
        unit="percent",
        threshold=20.0,
        setting="latency_increase_percent",
        floor_setting="latency_floor_ms",
    ),
)
COST = Figure(name="cost", value=number_at("cost"), change=False)


class MetricSet:
    """The metrics of a run, in order (see the module docstring). Keys, score names and figure names
    must be unique across the set (ConfigError names the clash)."""

    __slots__ = (
        "_bases",
        "_by_key",
        "_inline",
        "_judges",
        "_metrics",
        "_sessions",
        "_weights",
        "breakdowns",
        "definitions",
        "figure_names",
        "figures",
        "gated",
        "rates",
        "score_levels",
        "score_types",
    )

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self._metrics: tuple[Metric, ...] = tuple(metrics)
        self._by_key = {m.key: m for m in self._metrics}
        _unique("metric key", [m.key for m in self._metrics])
        self._inline = tuple(m for m in self._metrics if m.stage == "inline" and m.level != "session")
        self._sessions = tuple(m for m in self._metrics if m.stage == "inline" and m.level == "session")
        self._judges = tuple(m for m in self._metrics if m.stage == "judge")
        self.definitions: tuple[ScoreDefinition, ...] = tuple(d for m in self._metrics for d in m.definitions)
        _unique("score name", [d.name for d in self.definitions])
        self.score_types: Mapping[str, DataType] = {d.name: d.data_type for d in self.definitions}
        self.score_levels: Mapping[str, str] = {
            d.name: getattr(d, "level", None) or m.level for m in self._metrics for d in m.definitions
        }
        self.figures: tuple[Figure, ...] = (
            PASS_RATE,
            *(f for m in self._metrics for f in m.figures),
            LATENCY,
            COST,
        )
        self.figure_names: tuple[str, ...] = tuple(f.name for f in self.figures)
        _unique("figure name", list(self.figure_names))
        # figures per group (each agent...): optional on a metric, so a metric of the project's own
        # that does not subclass MetricBase need not have them
        self.breakdowns: tuple[Breakdown, ...] = tuple(
            b for m in self._metrics for b in getattr(m, "breakdowns", ())
        )
        _unique("breakdown name", [b.name for b in self.breakdowns])
        self.rates = frozenset(f.name for f in self.figures if f.rate) | {
            b.name for b in self.breakdowns if b.rate
        }
        self.gated: tuple[Figure, ...] = tuple(f for f in self.figures if f.gate is not None)
        self._weights: tuple[tuple[str, Callable[[Mapping[str, Any]], float]], ...] = tuple(
            (f.name, f.weight) for f in self.figures if f.weight is not None
        )
        self._bases: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = tuple(
            (f.name, f.basis) for f in self.figures if f.basis is not None
        ) + tuple((b.name, b.basis) for b in self.breakdowns if b.basis is not None)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def __repr__(self) -> str:
        return f"MetricSet({', '.join(self._by_key)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetricSet) and self._metrics == other._metrics

    def __hash__(self) -> int:
        return hash(self._metrics)

    def __add__(self, extra: Iterable[Metric]) -> MetricSet:
        """A new set: this one's metrics, then `extra`."""
        return MetricSet((*self._metrics, *extra))

    def get(self, key: str) -> Metric | None:
        return self._by_key.get(key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self._by_key)

    @property
    def judges(self) -> tuple[Metric, ...]:
        """The judge-stage metrics, in order."""
        return self._judges

    # --- the metrics stage ----------------------------------------------------------------------------

    def evaluate(self, context: MetricContext) -> dict[str, Verdict]:
        """Each applicable inline metric's verdict, by key (one that does not apply is left out): the
        trace metrics, then the session metrics from them (the scenario's run is one session)."""
        verdicts: dict[str, Verdict] = {}
        for metric in self._inline:
            verdict = metric.evaluate(context)
            if verdict is not None:
                verdicts[metric.key] = verdict
        if self._sessions:
            session = SessionContext(scenario=context.scenario, traces=(dict(verdicts),))
            for metric in self._sessions:
                found = metric.evaluate_session(session)
                if found is not None:
                    verdicts[metric.key] = found
        return verdicts

    def roll_up(self, context: SessionContext) -> dict[str, Verdict]:
        """The roll-ups of the trace metrics over a dialogue's turns (`context.traces`: each turn's
        verdicts), by key: each inline trace metric's `evaluate_session`, where it has one to give."""
        verdicts: dict[str, Verdict] = {}
        for metric in self._inline:
            found = metric.evaluate_session(context)
            if found is not None:
                verdicts[metric.key] = found
        return verdicts

    # --- run figures ------------------------------------------------------------------------------------

    def scenario_values(self, result: Mapping[str, Any]) -> dict[str, float]:
        """The per-result value of every figure this result object has."""
        if result.get("evaluator_error"):
            return {}
        values: dict[str, float] = {}
        for figure in self.figures:
            value = figure.value(result)
            if value is not None:
                values[figure.name] = value
        return values

    def scenario_weights(self, result: Mapping[str, Any], values: Mapping[str, float]) -> dict[str, float]:
        """The weight of this result in each weighted figure (`Figure.weight`) it has a value of in
        `values` (its `scenario_values`); a figure missing here weighs 1."""
        return {name: weight(result) for name, weight in self._weights if name in values}

    def scenario_bases(self, result: Mapping[str, Any]) -> dict[str, str]:
        """What this result's value of each figure and breakdown with a `basis` is made of, by name."""
        return {name: basis(result) for name, basis in self._bases}

    def group_members(self, result: Mapping[str, Any]) -> dict[str, set[str]]:
        """Per breakdown (by name), the groups this result has, measured or not (`Breakdown.members`)."""
        if result.get("evaluator_error"):
            return {}
        return {
            b.name: set(b.members(result) if b.members is not None else b.groups(result))
            for b in self.breakdowns
        }

    def group_values(self, result: Mapping[str, Any]) -> dict[str, dict[str, float]]:
        """Per breakdown (by name), this result object's value per group (none for an evaluator error)."""
        if result.get("evaluator_error"):
            return {}
        return {b.name: dict(b.groups(result)) for b in self.breakdowns}

    def summarize(self, results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
        """Counts, then every figure's mean (weighted as its `weight` says; None when no result has it)
        and how many results it rests on (`n`: {figure: count})."""
        counts = {"scenarios": 0, "passed": 0, "failed": 0, "errors": 0, "evaluator_errors": 0}
        unscored = 0
        sums: dict[str, list[float]] = {}
        weights: dict[str, list[float]] = {}
        for result in results:
            counts["scenarios"] += 1
            status = result.get("status")
            counts["passed"] += status == "passed"
            counts["failed"] += status == "failed"
            counts["errors"] += status == "error"
            counts["evaluator_errors"] += bool(result.get("evaluator_error"))
            unscored += at(result, ("judge_status", "status")) == "unscored"
            values = self.scenario_values(result)
            for name, value in values.items():
                sums.setdefault(name, []).append(value)
            for name, weight in self.scenario_weights(result, values).items():
                weights.setdefault(name, []).append(weight)
        names = self.figure_names
        means = {name: _rounded(weighted_mean(sums.get(name, []), weights.get(name))) for name in names}
        return {
            **counts,
            "judge_unscored": unscored,
            **means,
            "n": {name: len(sums.get(name, [])) for name in names},
        }

    def judge_prompts(self, result: Mapping[str, Any]) -> list[tuple[str, int]]:
        """(name, version) of each judge prompt a result was judged with, in the judges' order (a
        dialogue's: those its turns were judged with, in turn order): from its verdict, or, when the
        judge could not score, from how the judgement went (`judge.<key>.prompt`), so a prompt version
        whose every judgement was unscored is in the trends too."""
        found = []
        for judged in _judged_parts(result):
            for metric in self._judges:
                prompt = at(judged, (metric.key, "prompt"))
                if not isinstance(prompt, Mapping):
                    prompt = at(judged, ("judge", metric.key, "prompt"))
                if isinstance(prompt, Mapping) and isinstance(prompt.get("name"), str):
                    version = prompt.get("version")
                    if isinstance(version, int) and (prompt["name"], version) not in found:
                        found.append((prompt["name"], version))
        return found

    def judge_models(self, result: Mapping[str, Any]) -> list[str]:
        """The model of each judgement of a result (a dialogue's: of its turns')."""
        return [
            model
            for judged in _judged_parts(result)
            for metric in self._judges
            if isinstance(model := at(judged, (metric.key, "model")), str)
        ]


def _judged_parts(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Where a result object's judgements are: in itself, and in a dialogue's turns (each judged as
    a single-turn scenario)."""
    turns = result.get("turns") if result.get("kind") == "dialogue" else None
    if not isinstance(turns, Sequence):
        return [result]
    return [result, *(turn for turn in turns if isinstance(turn, Mapping))]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _unique(what: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(
                f"two metrics declare the {what} {name!r}. Fix: give each metric its own {what}s."
            )
        seen.add(name)
