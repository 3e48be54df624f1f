"""The per-agent judge (DESIGN.md, Per-agent analysis; seed multi-agent-evaluation-plan.md): one call
to the agent prompt (`prompts/evaluation/agent/vN.prompt`) per agent of the trace, with what that agent
received, its tool calls, its output and the agents it delegated to (judge/agent_view.py); each reply
scores the agent's `reasoning` (null: it shows none), `handoff` (null: it did not delegate),
`response_quality` (0-1, every agent) and `coordination` (the judge's view of how it worked with the
others; null: it was the only agent), each with a reason.

It applies where the per-agent analysis is configured for the scenario's target (the target declares
`agent_tools` or `tool_schemas`, or the scenario has `expected.agent_tools`). Its verdict is the
result's `agent_judge` field: per agent the four values with their reasons and how its judgement went
(an agent whose judgement failed is null there, its reason kept), and `coordination`, the mean of the
agents' coordination values (the judge's view of the run's coordination). The judgement is *unscored*
only when every agent's is; it counts every call and token of them (`parts`: each agent's own).
`with_agent_judgement` puts the values into the result's `per_agent` entries (DESIGN.md's result
object), after the judge stage.

Scores: `agent_reasoning`, `agent_handoff`, `agent_response_quality` on each agent's observation
(observation-level, as `agent_tool_use`); figures: each one's mean over a result's agents.

A planned judge (judge/metric.py): `asks` lists the requests, `combine` reads the answers in the same
order; `judge` is `ask_each`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.judge.agent_view import AgentWork, agent_variables, agent_works
from evaluator.judge.metric import Answer, Ask, JudgeRuntime, PromptRef, ask_each
from evaluator.judge.model import TokenUsage
from evaluator.judge.replies import AgentReply
from evaluator.judge.verdicts import Judgement, JudgeOutcomeStatus
from evaluator.metrics import (
    Figure,
    MetricBase,
    MetricContext,
    PerAgentMetric,
    PerAgentVerdict,
    ScoreDefinition,
    ScoreValue,
    Verdict,
    number,
)
from evaluator.scenarios import Scenario

__all__ = [
    "DIMENSIONS",
    "AgentJudge",
    "AgentJudgeVerdict",
    "AgentRating",
    "with_agent_judgement",
]

DIMENSIONS = ("reasoning", "handoff", "response_quality")  # scored; coordination feeds coordination_score
_ASPECTS = (*DIMENSIONS, "coordination")
_DESCRIBED = {
    "reasoning": "the agent's reasoning",
    "handoff": "the context the agent passed when it delegated",
    "response_quality": "the agent's output, appropriate for its role",
}
DEFINITIONS = tuple(
    ScoreDefinition(
        name=f"agent_{name}",
        data_type="NUMERIC",
        description=f"Per-agent LLM judge: {described}, on the agent's observation (0-1)",
    )
    for name, described in _DESCRIBED.items()
)
NOT_DELEGATED = "it did not delegate to another agent"
ALONE = "it was the only agent of the run"


@dataclass(frozen=True, kw_only=True)
class AgentRating:
    """The judge's view of one agent: each aspect's score (None: not applicable, or unscored) and
    reason, and how its judgement went."""

    agent: str
    observation_id: str | None
    scores: Mapping[str, float | None]  # by aspect
    reasons: Mapping[str, str]
    judgement: Judgement

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for aspect in _ASPECTS:
            document[aspect] = self.scores.get(aspect)
            document[f"{aspect}_reason"] = self.reasons.get(aspect, "")
        return document | {"status": self.judgement.status, "reason": self.judgement.reason}


@dataclass(frozen=True, kw_only=True)
class AgentJudgeVerdict:
    """The per-agent judge's verdict on one trace: each agent's rating (by name, first call first)
    and the judge's view of the coordination (the mean of the agents' that have one)."""

    agents: Mapping[str, AgentRating]
    judgement: Judgement

    @property
    def passed(self) -> None:
        return None  # judges inform and never decide

    @property
    def coordination(self) -> float | None:
        return _mean(rating.scores.get("coordination") for rating in self.agents.values())

    def values(self) -> dict[str, dict[str, float | None]]:
        """Each agent's reasoning, handoff and response_quality (the `per_agent` entries' values)."""
        return {name: {d: r.scores.get(d) for d in DIMENSIONS} for name, r in self.agents.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": {name: rating.to_json() for name, rating in self.agents.items()},
            "coordination": self.coordination,
            "prompt": self.judgement.prompt_json(),
            "model": self.judgement.model,
        }

    def scores(self) -> list[ScoreValue]:
        found = []
        for name, rating in self.agents.items():
            if rating.observation_id is None or rating.judgement.status != "scored":
                continue
            metadata = {"agent": name, **rating.judgement.score_metadata()}
            for dimension in DIMENSIONS:
                value = rating.scores.get(dimension)
                if value is not None:
                    found.append(
                        ScoreValue(
                            name=f"agent_{dimension}",
                            value=value,
                            comment=f"{name}: {rating.reasons.get(dimension, '')}",
                            metadata=metadata,
                            observation_id=rating.observation_id,
                        )
                    )
        return found

    def problems(self) -> list[str]:
        return []


def _aspect_mean(aspect: str) -> Callable[[Mapping[str, Any]], float | None]:
    """A result's value: the mean of its agents' `aspect` (None: no agent has one)."""

    def value(document: Mapping[str, Any]) -> float | None:
        field = document.get("agent_judge")
        agents = field.get("agents") if isinstance(field, dict) else None
        if not isinstance(agents, dict):
            return None
        return _mean(number(e.get(aspect)) for e in agents.values() if isinstance(e, dict))

    return value


class AgentJudge(MetricBase):
    """The per-agent judge (see the module docstring). `targets`: the targets the per-agent analysis
    is configured for; `budget_chars`: the characters of an agent's material shown to the judge."""

    key = "agent_judge"
    stage = "judge"
    definitions = DEFINITIONS
    # No column in the history tables: `report --by agent` shows them per agent.
    figures = tuple(Figure(name=f"agent_{d}", value=_aspect_mean(d)) for d in DIMENSIONS)

    def __init__(
        self, targets: Collection[str] = (), *, prompt: str = "evaluation/agent", budget_chars: int = 12_000
    ) -> None:
        self._targets = frozenset(targets)
        self.prompt_name = prompt
        self.budget_chars = budget_chars

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AgentJudge) and (self._targets, self.prompt_name, self.budget_chars) == (
            other._targets,
            other.prompt_name,
            other.budget_chars,
        )

    def __hash__(self) -> int:
        return hash(self.key)

    def applies(self, scenario: Scenario) -> bool:
        return scenario.target in self._targets or bool(scenario.expected.agent_tools)

    def prompt(self, scenario: Scenario) -> PromptRef:
        return PromptRef(name=self.prompt_name)

    def asks(self, context: MetricContext) -> list[Ask]:
        """One request per agent of the trace, first call first (none: no agent)."""
        names = context.trace.agent_names
        return [
            Ask(
                judge=f"{self.key}:{work.name}",
                prompt=self.prompt(context.scenario),
                variables=agent_variables(context.scenario.input, work, names, self.budget_chars),
                reply_type=AgentReply,
            )
            for work in agent_works(context.trace)
        ]

    def combine(self, context: MetricContext, answers: Sequence[Answer]) -> tuple[Verdict | None, Judgement]:
        """The verdict from the answers to `asks(context)`, in its order."""
        works = agent_works(context.trace)
        if not works:
            reason = "no agent in the trace: nothing to judge per agent"
            return None, Judgement(judge=self.key, status="skipped", reason=reason, decided_by="none")
        if len(answers) != len(works):
            raise ValueError(f"{len(answers)} answers to the per-agent judge's {len(works)} requests")
        alone = len(works) == 1
        agents = {
            work.name: _rating(work, reply if isinstance(reply, AgentReply) else None, judgement, alone=alone)
            for work, (reply, judgement) in zip(works, answers, strict=True)
        }
        judgement = combined_judgement(self.key, [judgement for _, judgement in answers])
        if judgement.status != "scored":
            return None, judgement
        return AgentJudgeVerdict(agents=agents, judgement=judgement), judgement

    def judge(
        self, context: MetricContext, runtime: JudgeRuntime, run_id: str
    ) -> tuple[Verdict | None, Judgement]:
        return ask_each(self, context, runtime, run_id)

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        """Each aspect's mean over the agents judged in the run (`agents`: how many; `unscored`: the
        agents whose judgement failed within results that were judged); None: none judged."""
        ratings = [r for v in verdicts if isinstance(v, AgentJudgeVerdict) for r in v.agents.values()]
        scored = [r for r in ratings if r.judgement.status == "scored"]
        if not scored:
            return None
        means = {a: _rounded(_mean(r.scores.get(a) for r in scored)) for a in _ASPECTS}
        return {"agents": len(scored), "unscored": len(ratings) - len(scored), **means}

    def summary_line(self, summary: Mapping[str, Any]) -> str:
        def shown(aspect: str) -> str:
            value = summary.get(aspect)
            return f"{value:.2f}" if isinstance(value, float) else "-"

        unscored = f", {summary['unscored']} unscored" if summary.get("unscored") else ""
        return (
            f"Agents (LLM judge, {summary['agents']} agents judged{unscored}): reasoning "
            f"{shown('reasoning')}, handoff {shown('handoff')}, response quality "
            f"{shown('response_quality')}, coordination {shown('coordination')}"
        )

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        return None  # observation-level scores are not read back into a result (yet)


def _rating(work: AgentWork, reply: AgentReply | None, judgement: Judgement, *, alone: bool) -> AgentRating:
    """One agent's rating; what the trace settles wins over the reply: no handoff score for an agent
    that did not delegate, no coordination score for the only agent."""
    if reply is None:
        return AgentRating(
            agent=work.name,
            observation_id=work.observation_id,
            scores=dict.fromkeys(_ASPECTS),
            reasons={},
            judgement=judgement,
        )
    rated = {a: getattr(reply, a) for a in _ASPECTS}
    scores: dict[str, float | None] = {a: r.score for a, r in rated.items()}
    reasons = {a: r.reason for a, r in rated.items()}
    if not work.delegated:
        scores["handoff"], reasons["handoff"] = None, NOT_DELEGATED
    if alone:
        scores["coordination"], reasons["coordination"] = None, ALONE
    return AgentRating(
        agent=work.name,
        observation_id=work.observation_id,
        scores=scores,
        reasons=reasons,
        judgement=judgement,
    )


def combined_judgement(judge: str, parts: Sequence[Judgement]) -> Judgement:
    """One judgement of several (each agent's): unscored only when every part is, its reason then
    each part's; calls and tokens summed; from the cache when every part was."""
    unscored = [p for p in parts if p.status == "unscored"]
    reason = "; ".join(f"{p.judge.partition(':')[2] or p.judge}: {p.reason}" for p in unscored)
    status: JudgeOutcomeStatus = "unscored" if parts and len(unscored) == len(parts) else "scored"
    if unscored and status == "scored":
        reason = f"{len(unscored)} of {len(parts)} agents unscored: {reason}"
    usage = TokenUsage()
    for part in parts:
        usage += part.usage
    return Judgement(
        judge=judge,
        status=status,
        reason=reason,
        decided_by="cache" if parts and all(p.decided_by == "cache" for p in parts) else "judge",
        prompt=next((p.prompt for p in parts if p.prompt is not None), None),
        model=next((p.model for p in parts if p.model is not None), None),
        calls=sum(p.calls for p in parts),
        usage=usage,
        usage_reported=not parts or any(p.usage_reported for p in parts),
        failed=bool(parts) and all(p.failed for p in parts),
        parts=tuple(parts),
    )


def with_agent_judgement(
    verdicts: Mapping[str, Verdict], judged: Mapping[str, Verdict]
) -> dict[str, Verdict]:
    """`verdicts` with the per-agent judge's values in the `per_agent` verdict's entries (its
    reasoning, handoff and response_quality), when both are there."""
    found = judged.get(AgentJudge.key)
    per_agent = verdicts.get(PerAgentMetric.key)
    if not isinstance(found, AgentJudgeVerdict) or not isinstance(per_agent, PerAgentVerdict):
        return dict(verdicts)
    return {**verdicts, PerAgentMetric.key: per_agent.with_judged(found.values(), found.coordination)}


def _mean(values: Any) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) / len(found) if found else None


def _rounded(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None
