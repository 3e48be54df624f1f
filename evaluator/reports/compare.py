"""`evaluator compare`: what changed from a baseline run to a candidate run, and the regression verdict.

Both runs are compared on the scenarios they both have (paired), so a figure rests on the same scenarios
on both sides; scenarios only one run has are listed apart. The verdict follows the thresholds
(`[compare]` in evaluator.toml, defaults from the seed's regression table): a change *more than* a
threshold in the bad direction is a regression. Each gated figure also gets the paired test of
reports/noise.py; `significant_only` makes only regressions beyond the noise count. A verdict resting on
fewer than `min_scenarios` paired scenarios is flagged as too small to mean much.

A metric's breakdowns (figures per group whose groups come from the results: each agent's
`tool_use_score`, say) are gated the same way, group by group, on the scenarios both runs have where
both measured it (`group_checks`); a group only one run has over those scenarios (an agent added or
removed; read from the groups a result has, measured or not: `Breakdown.members`) is listed, never
gated as a drop.

A figure whose value is made of different parts depending on how the run was set up (`Figure.basis`:
the per-agent judge's parts in `overall_score`, when that judge ran) is compared only on the scenarios
where both runs' values were made of the same parts; the others are counted in `not_comparable`, so a
run whose judge was down is not read as a change in the agents.

The per-agent analysis and the dialogue metric are imported by the check of `[compare.thresholds]`
(`threshold_problems`) only, which knows their figures: a command that imports this module and checks
no thresholds (`evaluator run` without `--baseline`) does not load them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evaluator.config import CONFIG_FILE, CompareConfig, Config
from evaluator.errors import ConfigError, Problem, did_you_mean
from evaluator.metrics import Breakdown, Figure, Gate, MetricSet, Unit, weighted_mean
from evaluator.reports.noise import METHOD, sign_flip_p
from evaluator.reports.runs import RunRecord
from evaluator.results import agent_prompts, default_metrics

__all__ = ["Check", "Unit", "check_thresholds", "checks", "compare_runs", "threshold_problems"]


@dataclass(frozen=True, kw_only=True)
class Check:
    figure: str
    label: str
    direction: Literal["down", "up"]  # the bad direction
    unit: Unit
    threshold: float
    floor: float | None = None  # the raw change must also exceed this (latency: timer noise)


def _setting(config: CompareConfig, name: str | None) -> float | None:
    value = getattr(config, name, None) if name else None
    return float(value) if isinstance(value, int | float) else None


def _gate(figure: Figure, gate: Gate, config: CompareConfig) -> Check:
    """The check of a gated figure: its threshold from its `[compare]` setting, else from
    `[compare.thresholds]` by the figure's name, else the metric's default."""
    threshold = _setting(config, gate.setting)
    if threshold is None:
        threshold = config.thresholds.get(figure.name, gate.threshold)
    return Check(
        figure=figure.name,
        label=gate.label,
        direction=gate.direction,
        unit=gate.unit,
        threshold=threshold,
        floor=_setting(config, gate.floor_setting),
    )


def checks(config: CompareConfig, metrics: MetricSet | None = None) -> list[Check]:
    """The regression checks: one per gated figure of `metrics`, in the figures' order."""
    gated = (metrics or default_metrics()).gated
    return [_gate(figure, figure.gate, config) for figure in gated if figure.gate is not None]


def threshold_problems(config: Config, metrics: MetricSet) -> list[Problem]:
    """Each `[compare.thresholds]` key that names no figure compare gates: it would never be read, and
    the figure it meant would keep its default gate without a word. Known are the gated figures and
    breakdowns of `metrics`, and of the built-in metrics a run adds (the dialogue metric) or the
    configuration turns on (the per-agent analysis), so a threshold kept for those is no error. Of
    `<breakdown>.<group>`, only the breakdown is checked: the groups (agents) come from the runs'
    results, which may hold agents no target declares."""
    # here: only this check reads these metrics' figures; a run without --baseline does not load them
    from evaluator.metrics import PerAgentMetric
    from evaluator.metrics import dialogue as dm

    figures = (*metrics.figures, *PerAgentMetric.figures, *dm.DialogueMetric.figures)
    gated = {f.name for f in figures if f.gate is not None}
    breakdowns = {b.name: b.group_kind for b in (*metrics.breakdowns, *PerAgentMetric.breakdowns)}
    allowed = [*sorted(gated), *(f"{name}[.<{kind}>]" for name, kind in sorted(breakdowns.items()))]
    names = {f.name for f in figures}
    wrong = {
        key: _unknown_threshold(key, gated, set(breakdowns), names)
        for key in config.settings.compare.thresholds
    }
    return [
        Problem(
            source=str(config.source or CONFIG_FILE),
            field=f"compare.thresholds.{key}",
            found=found,
            fix=f"name a figure compare gates: {', '.join(allowed)}",
        )
        for key, found in wrong.items()
        if found is not None
    ]


def _unknown_threshold(key: str, gated: set[str], breakdowns: set[str], figures: set[str]) -> str | None:
    """What is wrong with a `[compare.thresholds]` key (None: it names a gated figure, or a breakdown
    alone or with a group)."""
    name, dot, _ = key.partition(".")
    if name in breakdowns or (not dot and name in gated):
        return None
    if dot and name in gated:
        return f'"{name}" is gated as one figure for the whole run, never per group'
    if not dot and name in figures:
        return f'"{name}" is not gated: compare shows its change but never fails on it'
    return f'unknown figure "{name}"' + did_you_mean(name, breakdowns if dot else gated | breakdowns)


def check_thresholds(config: Config, metrics: MetricSet) -> None:
    """ConfigError naming every `[compare.thresholds]` key that names no gated figure (see
    `threshold_problems`), as an unknown key of the configuration is named."""
    problems = threshold_problems(config, metrics)
    if problems:
        raise ConfigError("\n".join(str(p) for p in problems))


def _group_check(breakdown: Breakdown, group: str, config: CompareConfig) -> Check:
    """A group's check: its threshold from `[compare.thresholds]` by `<breakdown>.<group>`, else by the
    breakdown's name, else the breakdown's gate's."""
    gate = breakdown.gate
    threshold = config.thresholds.get(f"{breakdown.name}.{group}", config.thresholds.get(breakdown.name))
    return Check(
        figure=breakdown.name,
        label=f"{group}: {gate.label}",
        direction=gate.direction,
        unit=gate.unit,
        threshold=gate.threshold if threshold is None else threshold,
        floor=_setting(config, gate.floor_setting),
    )


def _groups(
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
    shared: Sequence[str],
    metrics: MetricSet,
    config: CompareConfig,
    *,
    strict: bool,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, list[str]]], Unlike, dict[str, set[str]]]:
    """Each breakdown's groups gated (those with paired values, made of the same parts: `basis`; in
    breakdown, then group order); by group kind the groups only one run has over the shared scenarios
    (not gated); per breakdown the scenarios left out for their parts, by the two bases; and by group
    kind every group either run has over the shared scenarios."""
    pairs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    seen: dict[str, tuple[set[str], set[str]]] = {}
    unlike: Unlike = {}
    for scenario_id in shared:
        first, second = base[scenario_id], cand[scenario_id]
        b, c = metrics.group_values(first), metrics.group_values(second)
        mb, mc = metrics.group_members(first), metrics.group_members(second)
        bb, bc = metrics.scenario_bases(first), metrics.scenario_bases(second)
        for breakdown in metrics.breakdowns:
            in_base, in_cand = seen.setdefault(breakdown.group_kind, (set(), set()))
            in_base.update(mb.get(breakdown.name, ()))
            in_cand.update(mc.get(breakdown.name, ()))
            if bb.get(breakdown.name) != bc.get(breakdown.name):
                if b and c:  # neither an evaluator error (which has no group values)
                    unlike.setdefault(breakdown.name, Counter())[
                        (bb[breakdown.name], bc[breakdown.name])
                    ] += 1
                continue
            before, after = b.get(breakdown.name, {}), c.get(breakdown.name, {})
            for group in before.keys() & after.keys():
                pairs.setdefault((breakdown.name, group), []).append((before[group], after[group]))
    rows = []
    for breakdown in metrics.breakdowns:
        for group in sorted(g for name, g in pairs if name == breakdown.name):
            row = _check(
                _group_check(breakdown, group, config), pairs[(breakdown.name, group)], config, strict
            )
            rows.append({**row, "group": group, "group_kind": breakdown.group_kind})
    apart = {
        kind: {"only_in_baseline": sorted(b - c), "only_in_candidate": sorted(c - b)}
        for kind, (b, c) in seen.items()
        if b != c
    }
    return rows, apart, unlike, {kind: b | c for kind, (b, c) in seen.items()}


def _unused_thresholds(
    config: CompareConfig, metrics: MetricSet, groups: Mapping[str, set[str]]
) -> list[dict[str, Any]]:
    """The `[compare.thresholds]` keys `<breakdown>.<group>` whose group neither run has over the
    scenarios both ran (a misspelled agent, say): never read, so the gate meant for that group does not
    exist. Only a run's results know its groups, so this is said with the comparison, not refused."""
    kinds = {b.name: b.group_kind for b in metrics.breakdowns}
    unused = []
    for key in config.thresholds:
        name, dot, group = key.partition(".")
        if not dot or name not in kinds:
            continue
        known = groups.get(kinds[name], set())
        if group not in known:
            unused.append({"key": key, "group_kind": kinds[name], "group": group, "groups": sorted(known)})
    return unused


def _by_scenario(run: RunRecord) -> dict[str, Mapping[str, Any]]:
    return {str(r.get("scenario_id")): r for r in run.results}


Pairs = dict[str, list[tuple[float, float]]]
Unlike = dict[str, Counter[tuple[str, str]]]  # by figure: (baseline's basis, candidate's) -> scenarios


def _paired_values(
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
    shared: Sequence[str],
    metrics: MetricSet,
) -> tuple[Pairs, Pairs, Unlike]:
    """Per figure, the (baseline, candidate) values of the scenarios that have it in both runs, made
    of the same parts (`Figure.basis`); per weighted figure (`Figure.weight`), those scenarios'
    (baseline, candidate) weights; and per figure with a basis, the scenarios left out because their
    bases differ, by the two bases."""
    names = metrics.figure_names
    pairs: Pairs = {name: [] for name in names}
    weights: Pairs = {}
    unlike: Unlike = {}
    for scenario_id in shared:
        before, after = base[scenario_id], cand[scenario_id]
        b, c = metrics.scenario_values(before), metrics.scenario_values(after)
        wb, wc = metrics.scenario_weights(before, b), metrics.scenario_weights(after, c)
        bb, bc = metrics.scenario_bases(before), metrics.scenario_bases(after)
        for name in names:
            if name not in b or name not in c:
                continue
            if bb.get(name) != bc.get(name):
                unlike.setdefault(name, Counter())[(bb[name], bc[name])] += 1
                continue
            pairs[name].append((b[name], c[name]))
            if name in wb:
                weights.setdefault(name, []).append((wb[name], wc[name]))
    return pairs, weights, unlike


def _not_comparable(unlike: Unlike, metrics: MetricSet) -> list[dict[str, Any]]:
    """The figures (and breakdowns) compared on fewer scenarios because the runs' values were made of
    different parts there: how many, and the parts each side's were made of."""
    order = [*metrics.figure_names, *(b.name for b in metrics.breakdowns)]
    return [
        {"figure": name, "scenarios": count, "baseline": before, "candidate": after}
        for name in order
        for (before, after), count in sorted(unlike.get(name, Counter()).items())
    ]


def _means(
    pairs: Sequence[tuple[float, float]], weights: Sequence[tuple[float, float]] | None
) -> tuple[float | None, float | None]:
    """Each side's mean of the paired values, weighted when weights are given."""
    sides = list(zip(*pairs, strict=True)) or [(), ()]
    if weights is None:
        return weighted_mean(sides[0]), weighted_mean(sides[1])
    by_side = list(zip(*weights, strict=True))
    return weighted_mean(sides[0], by_side[0]), weighted_mean(sides[1], by_side[1])


def _change(unit: Unit, before: float, after: float) -> float | None:
    if unit == "points":
        return round((after - before) * 100, 6)
    if unit == "percent":
        return round((after - before) / before * 100, 6) if before > 0 else None
    return round(after - before, 6)


def _figure_row(
    name: str, pairs: Sequence[tuple[float, float]], weights: Sequence[tuple[float, float]] | None
) -> dict[str, Any]:
    before, after = _means(pairs, weights)
    return {
        "figure": name,
        "baseline": None if before is None else round(before, 4),
        "candidate": None if after is None else round(after, 4),
        "n": len(pairs),
    }


def _check(
    check: Check,
    pairs: Sequence[tuple[float, float]],
    config: CompareConfig,
    strict: bool,
    weights: Sequence[tuple[float, float]] | None = None,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "figure": check.figure,
        "label": check.label,
        "direction": check.direction,
        "unit": check.unit,
        "threshold": check.threshold,
        "n": len(pairs),
        "baseline": None,
        "candidate": None,
        "change": None,
        "p_value": None,
        "beyond_noise": None,
        "regression": False,
        "status": "not measured",
    }
    before, after = _means(pairs, weights)
    if before is None or after is None:  # no pair (or a figure's weights were all 0)
        return row
    change = _change(check.unit, before, after)
    p_value = round(sign_flip_p([c - b for b, c in pairs]), 4)
    worse = change is not None and (-change if check.direction == "down" else change) > check.threshold
    bad_change = after - before if check.direction == "up" else before - after
    if check.floor is not None and bad_change <= check.floor:
        worse = False  # a few milliseconds more is timer noise, whatever the percentage
    beyond = p_value < config.alpha
    regression = worse and (beyond or not strict)
    status = "regression" if regression else "worse, within the noise" if worse else "ok"
    return row | {
        "baseline": round(before, 4),
        "candidate": round(after, 4),
        "change": round(change, 2) if change is not None else None,
        "p_value": p_value,
        "beyond_noise": beyond,
        "regression": regression,
        "status": status,
    }


def _flip(before: str, after: str) -> str | None:
    if before == "passed" and after != "passed":
        return "pass->fail"
    if before != "passed" and after == "passed":
        return "fail->pass"
    return None


def _scenario_row(
    scenario_id: str, base: Mapping[str, Any], cand: Mapping[str, Any], metrics: MetricSet
) -> dict[str, Any]:
    """Its status either side, the flip, and its figures that changed (not latency and cost, which
    always differ a little, nor pass, which is the status itself)."""
    b, c = metrics.scenario_values(base), metrics.scenario_values(cand)
    changes = {
        f.name: {"baseline": b.get(f.name), "candidate": c.get(f.name)}
        for f in metrics.figures
        if f.change and b.get(f.name) != c.get(f.name)
    }
    before, after = str(base.get("status")), str(cand.get("status"))
    return {
        "scenario_id": scenario_id,
        "baseline": before,
        "candidate": after,
        "flip": _flip(before, after),
        "changes": changes,
        "latency_ms": {"baseline": b.get("latency_ms"), "candidate": c.get("latency_ms")},
    }


_ORDER = {"pass->fail": 0, "fail->pass": 1}


def _scenario_rows(
    base: Mapping[str, Mapping[str, Any]],
    cand: Mapping[str, Mapping[str, Any]],
    shared: Sequence[str],
    metrics: MetricSet,
) -> list[dict[str, Any]]:
    """Flips pass -> fail first, then fail -> pass, then other changes, then the unchanged."""
    rows = [_scenario_row(s, base[s], cand[s], metrics) for s in shared]

    def rank(row: Mapping[str, Any]) -> tuple[int, str]:
        flip = row["flip"]
        order = _ORDER[flip] if flip else 2 if row["changes"] or row["baseline"] != row["candidate"] else 3
        return order, row["scenario_id"]

    return sorted(rows, key=rank)


def _prompt_versions(run: RunRecord, scenarios: set[str], metrics: MetricSet) -> dict[str, list[int]]:
    """The prompt versions the run's results for these scenarios used, by prompt."""
    versions: dict[str, set[int]] = {}
    for result in run.results:
        if str(result.get("scenario_id")) not in scenarios:
            continue
        used = [(n, v) for n, v, _ in agent_prompts(result)] + metrics.judge_prompts(result)
        for name, version in used:
            versions.setdefault(name, set()).add(version)
    return {name: sorted(v) for name, v in sorted(versions.items())}


def _prompt_changes(
    baseline: RunRecord, candidate: RunRecord, shared: Sequence[str], metrics: MetricSet
) -> list[dict[str, Any]]:
    """Prompts whose versions differ over the compared scenarios (a prompt only the scenarios of one
    run used did not change)."""
    compared = set(shared)
    before = _prompt_versions(baseline, compared, metrics)
    after = _prompt_versions(candidate, compared, metrics)
    return [
        {"name": name, "baseline": before.get(name, []), "candidate": after.get(name, [])}
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    ]


def _judge_models(run: RunRecord, scenarios: set[str], metrics: MetricSet) -> list[str]:
    """The models that gave the judgements of these scenarios' results (as the endpoint named them)."""
    return sorted(
        {m for r in run.results if str(r.get("scenario_id")) in scenarios for m in metrics.judge_models(r)}
    )


def compare_runs(
    baseline: RunRecord,
    candidate: RunRecord,
    config: CompareConfig,
    *,
    significant_only: bool = False,
    metrics: MetricSet | None = None,
) -> dict[str, Any]:
    """The comparison document (what `compare --json` prints) on the figures of `metrics` (the
    built-in ones by default); `verdict` is "regression" or "ok"."""
    metrics = metrics or default_metrics()
    base, cand = _by_scenario(baseline), _by_scenario(candidate)
    shared = sorted(set(base) & set(cand))
    pairs, weights, unlike = _paired_values(base, cand, shared, metrics)
    gated = [
        _check(check, pairs[check.figure], config, significant_only, weights.get(check.figure))
        for check in checks(config, metrics)
    ]
    group_checks, apart, unlike_groups, groups = _groups(
        base, cand, shared, metrics, config, strict=significant_only
    )
    regressions = [row["label"] for row in (*gated, *group_checks) if row["regression"]]
    figures = [_figure_row(name, pairs[name], weights.get(name)) for name in metrics.figure_names]
    return {
        "baseline": baseline.ref(),
        "candidate": candidate.ref(),
        "prompt_changes": _prompt_changes(baseline, candidate, shared, metrics),
        "judge_models": {
            "baseline": _judge_models(baseline, set(shared), metrics),
            "candidate": _judge_models(candidate, set(shared), metrics),
        },
        "paired_scenarios": len(shared),
        "only_in_baseline": sorted(set(base) - set(cand)),
        "only_in_candidate": sorted(set(cand) - set(base)),
        "min_scenarios": config.min_scenarios,
        "too_few_scenarios": len(shared) < config.min_scenarios,
        "noise_test": f"{METHOD}; beyond the noise when p < {config.alpha:g}",
        "significant_only": significant_only,
        "checks": gated,
        "group_checks": group_checks,
        "groups_apart": apart,
        "unused_thresholds": _unused_thresholds(config, metrics, groups),
        "not_comparable": _not_comparable({**unlike, **unlike_groups}, metrics),
        "figures": figures,
        "scenarios": _scenario_rows(base, cand, shared, metrics),
        "regressions": regressions,
        "verdict": "regression" if regressions else "ok",
    }
