"""The metrics of a run, as a `MetricSet` built from the configuration: the rule checks (workflow,
trajectory, answer), the per-agent analysis with each target's declared tools and schemas, the judges
(quality, correctness, and the per-agent judge where the per-agent analysis is on) with their
configured prompts, source budget and miss phrases, then the
project's own (`[metrics] extra`, each `module:attribute`). Commands build it once per run (and
`report`, `compare` once per command) and pass it on. A run with dialogues (and a report of one) adds
the dialogue metric (`with_dialogues`). The per-agent analysis and the dialogue metric are imported
only when the configuration or the run has them: a single-turn run without them does not load them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from evaluator._secrets import failure_text
from evaluator.config import Config, JudgeConfig
from evaluator.errors import ConfigError
from evaluator.judge import CorrectnessJudge, QualityJudge
from evaluator.metrics import AnswerContainsMetric, Metric, MetricSet, TrajectoryMetric, WorkflowValidator
from evaluator.results.tool_schema_files import ToolSchemaFile

if TYPE_CHECKING:
    from evaluator.metrics import TargetAgents

__all__ = ["builtin_metrics", "configured_metric", "default_metrics", "with_dialogues", "with_dialogues_for"]

_SHAPE = ("key", "stage", "level", "definitions", "figures")  # what a metric must have (metrics/base.py)


def builtin_metrics(config: Config | None = None, *, extra: Sequence[Metric] = ()) -> MetricSet:
    """The built-in metrics with `config`'s judge settings (the defaults without one), then the
    configuration's own metrics, then `extra`."""
    judge = config.settings.judge if config is not None else JudgeConfig()
    own = [configured_metric(spec, config) for spec in config.settings.metrics.extra] if config else []
    agents = _target_agents(config) if config is not None else {}
    return MetricSet(
        (
            WorkflowValidator(),
            TrajectoryMetric(),
            AnswerContainsMetric(),
            *_per_agent(config, agents),
            *_agent_judge(agents, judge),  # its field next to per_agent's
            QualityJudge(prompt=judge.quality_prompt, source_budget_chars=judge.source_budget_chars),
            CorrectnessJudge(prompt=judge.correctness_prompt, miss_phrases=judge.miss_phrases),
            *own,
            *extra,
        )
    )


def with_dialogues(metrics: MetricSet) -> MetricSet:
    """`metrics` with the dialogue metric (DESIGN.md, Dialogues) after them, unless it has it already.
    It is added only where dialogues are: a single-turn run's result objects and figures stay as they
    were."""
    from evaluator.metrics import dialogue as dialogue_metrics  # here: loaded only where dialogues are

    if metrics.get(dialogue_metrics.DialogueMetric.key) is not None:
        return metrics
    return MetricSet((*metrics, dialogue_metrics.DialogueMetric()))


def with_dialogues_for(metrics: MetricSet, documents: Iterable[Mapping[str, Any]]) -> MetricSet:
    """`metrics`, with the dialogue metric when any of the result objects is a dialogue's."""
    if any(document.get("kind") == "dialogue" for document in documents):
        return with_dialogues(metrics)
    return metrics


def _agent_judge(targets: Mapping[str, TargetAgents], judge: JudgeConfig) -> list[Metric]:
    """The per-agent judge, beside the per-agent metric (present when a target declares `agent_tools`
    or `tool_schemas`; otherwise the result has neither field, as before the analysis existed),
    unless `[judge] per_agent = false`."""
    if not targets or not judge.per_agent:
        return []
    from evaluator.judge import AgentJudge  # here: only with the per-agent analysis (_target_agents)

    return [AgentJudge(targets, prompt=judge.agent_prompt, budget_chars=judge.source_budget_chars)]


def _per_agent(config: Config | None, targets: Mapping[str, TargetAgents]) -> list[Metric]:
    """The per-agent metric, when a target declares `agent_tools` or `tool_schemas` (otherwise the
    result has no `per_agent` field at all, as before the analysis existed), with the configured
    weights and recommendation threshold."""
    if config is None or not targets:
        return []
    from evaluator.metrics import AgentWeights, OverallWeights, PerAgentMetric, ScoreWeights  # here: as above

    settings = config.settings.per_agent
    weights = ScoreWeights(
        agent=AgentWeights(**settings.agent_weights.model_dump()),
        overall=OverallWeights(**settings.weights.model_dump()),
    )
    return [PerAgentMetric(targets, weights=weights, recommend_below=settings.recommend_below)]


def _target_agents(config: Config) -> dict[str, TargetAgents]:
    """Each target's per-agent declarations: its `agent_tools`, and its `tool_schemas` file, read when
    a check first needs it (results/tool_schema_files.py: InputError names evaluator.toml, the field
    and the fix)."""
    declaring = {n: t for n, t in config.settings.targets.items() if t.agent_tools or t.tool_schemas}
    if not declaring:
        return {}
    from evaluator.metrics import TargetAgents  # here: a run without the analysis does not load it

    return {
        name: TargetAgents(
            agent_tools=target.agent_tools,
            schemas=ToolSchemaFile(config, name, target.tool_schemas) if target.tool_schemas else {},
        )
        for name, target in declaring.items()
    }


@cache
def default_metrics() -> MetricSet:
    """The built-in metrics with the default settings: for library callers that give no set."""
    return builtin_metrics()


def configured_metric(spec: str, config: Config) -> Metric:
    """The metric `[metrics] extra` names as `module:attribute` (a class or function is called with no
    arguments); ConfigError says what is wrong and how to fix it."""
    where = f"{config.source or 'evaluator.toml'}: [metrics] extra"
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        fix = 'write it like "mypkg.metrics:MyMetric"'
        raise ConfigError(f'{where}: "{spec}" is not of the form module:attribute. Fix: {fix}.')
    found: object = _module(module_name, where, config.base_dir)
    for part in attr.split("."):
        if not hasattr(found, part):
            fix = "name a metric defined there"
            raise ConfigError(f'{where}: module "{module_name}" has no attribute "{attr}". Fix: {fix}.')
        found = getattr(found, part)
    maker = isinstance(found, type) or (callable(found) and not hasattr(found, "key"))
    try:
        metric = found() if maker and callable(found) else found
    except Exception as exc:  # noqa: BLE001 - its maker failed (a target's function, say): not a traceback
        raise ConfigError(
            f'{where}: "{spec}" made no metric when called with no arguments ({type(exc).__name__}: {exc}). '
            "Fix: name a metric, or a class or function that makes one with no arguments."
        ) from None
    missing = [name for name in _SHAPE if not hasattr(metric, name)]
    if missing:
        raise ConfigError(
            f'{where}: "{spec}" is not a metric (it has no {", ".join(missing)}). Fix: name a metric '
            "(evaluator.metrics.MetricBase shows the shape), or a class that makes one."
        )
    return cast(Metric, metric)  # its shape checked above


def _module(name: str, where: str, base_dir: Path) -> object:
    if str(base_dir) not in sys.path:  # the configuration's folder is importable, like a cwd
        sys.path.insert(0, str(base_dir))
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        fix = f"check the module path, relative to {base_dir}"
        raise ConfigError(f'{where}: cannot import module "{name}" ({exc}). Fix: {fix}.') from None
    except Exception as exc:  # noqa: BLE001 - the module itself is broken: say where, not a traceback
        failed = failure_text(exc)
        raise ConfigError(f'{where}: importing "{name}" failed: {failed}. Fix: correct the module.') from None
