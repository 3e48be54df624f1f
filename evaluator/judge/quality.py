"""The quality judge (seed workflow-and-quality-metrics.md), for scenarios with `expected.answer.criteria`:
one call to the quality prompt with the question, the answer, the criteria and the sources the agents
used (tool outputs, trimmed to `source_budget_chars`); the reply scores answer_quality,
factual_correctness and completeness (0-1). Its figures: each dimension's mean (`quality_<dimension>`)
and `quality_mean` (per result, the mean of its dimensions), which compare gates in its own 0-1 units.
The scenario's `judge:` may name another prompt, version or label.

On a dialogue's turn (the context has the conversation before it, `history`), the judge asks the turn
prompt (`evaluation/turn_quality`): the same three scores of the reply, given the conversation so far,
with the seed's metric-11 rubric (dialogue-metrics-mas4cs.md: helpful, correct, clear, policy
adherence) as `answer_quality`. Every turn of a dialogue is judged: against the turn's own criteria, or
`TURN_CRITERIA` (which the run puts in for a turn that gives none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evaluator.judge.metric import Answer, Ask, JudgeRuntime, PromptRef, ask_each, judge_of
from evaluator.judge.render import history_block, quality_variables, sources_block
from evaluator.judge.replies import QualityReply
from evaluator.judge.verdicts import Judgement, QualityVerdict
from evaluator.metrics import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    Verdict,
    final_answer,
    number,
)
from evaluator.scenarios import Scenario

__all__ = ["DEFINITIONS", "DIMENSIONS", "TURN_CRITERIA", "QualityJudge", "quality_means"]

DIMENSIONS = ("answer_quality", "factual_correctness", "completeness")
TURN_CRITERIA = (
    "A good reply to the customer's message in this turn, given the conversation so far: helpful (it "
    "moves the customer toward what they came for), correct, clear, and adhering to the service's policy "
    "(it asks for what a booking still needs instead of booking without it)."
)
"""A dialogue turn's criteria when it gives none: the seed's metric-11 rubric (dialogue-metrics-mas4cs.md)."""
DEFINITIONS = (
    ScoreDefinition(
        name="quality_answer_quality",
        data_type="NUMERIC",
        description="LLM judge: clear, well-structured, helpful (0-1)",
    ),
    ScoreDefinition(
        name="quality_factual_correctness",
        data_type="NUMERIC",
        description="LLM judge: supported by the sources, no hallucination (0-1)",
    ),
    ScoreDefinition(
        name="quality_completeness",
        data_type="NUMERIC",
        description="LLM judge: meets the scenario's expected answer criteria (0-1)",
    ),
)


def _dimension(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def value(document: Mapping[str, Any]) -> float | None:
        quality = document.get("quality")
        return number(quality.get(name)) if isinstance(quality, dict) else None

    return value


def _mean(document: Mapping[str, Any]) -> float | None:
    quality = document.get("quality")
    if not isinstance(quality, dict):
        return None
    values = [v for d in DIMENSIONS if (v := number(quality.get(d))) is not None]
    return sum(values) / len(values) if values else None


class QualityJudge(MetricBase):
    key = "quality"
    stage = "judge"
    definitions = DEFINITIONS
    figures = (
        *(Figure(name=f"quality_{d}", value=_dimension(d)) for d in DIMENSIONS),
        Figure(
            name="quality_mean",
            value=_mean,
            label="quality",
            chart="Answer quality (LLM judge, 0-1)",
            delta=True,
            gate=Gate(label="mean quality", unit="score", threshold=0.1, setting="quality_drop"),
        ),
    )

    def __init__(
        self,
        *,
        prompt: str = "evaluation/quality",
        source_budget_chars: int = 12_000,
        turn_prompt: str = "evaluation/turn_quality",
    ) -> None:
        self.prompt_name = prompt
        self.turn_prompt_name = turn_prompt
        self.source_budget_chars = source_budget_chars

    def applies(self, scenario: Scenario) -> bool:
        """A scenario with answer criteria; a dialogue (each of its turns is judged)."""
        spec = scenario.expected.answer
        return scenario.turns is not None or (spec is not None and bool(spec.criteria))

    def prompt(self, scenario: Scenario) -> PromptRef:
        """The configured prompt (a dialogue's: the turn prompt), or the one the scenario's `judge:`
        names (its version or label)."""
        return self._prompt(scenario, turn=scenario.turns is not None)

    def _prompt(self, scenario: Scenario, *, turn: bool) -> PromptRef:
        name = self.turn_prompt_name if turn else self.prompt_name
        spec = scenario.judge
        if spec is None:
            return PromptRef(name=name)
        return PromptRef(name=spec.prompt or name, version=spec.version, label=spec.label)

    def judge(
        self, context: MetricContext, runtime: JudgeRuntime, run_id: str
    ) -> tuple[Verdict | None, Judgement]:
        return ask_each(self, context, runtime, run_id)

    def asks(self, context: MetricContext) -> list[Ask]:
        scenario = context.scenario
        criteria = scenario.expected.answer.criteria if scenario.expected.answer is not None else ""
        sources = sources_block(context.trace.tools, self.source_budget_chars)
        variables = quality_variables(
            question=scenario.input,
            answer=final_answer(context.answer, context.trace.agent_names),
            criteria=criteria or "",
            sources=sources,
        )
        turn = context.history is not None
        if context.history is not None:
            history = history_block(context.history, self.source_budget_chars)
            variables |= {"history": history.text, "history_note": history.note}
        prompt = self._prompt(scenario, turn=turn)
        return [Ask(judge=self.key, prompt=prompt, variables=variables, reply_type=QualityReply)]

    def combine(self, context: MetricContext, answers: Sequence[Answer]) -> tuple[Verdict | None, Judgement]:
        ((reply, judgement),) = answers
        if not isinstance(reply, QualityReply):
            return None, judgement
        verdict = QualityVerdict(
            answer_quality=reply.answer_quality,
            factual_correctness=reply.factual_correctness,
            completeness=reply.completeness,
            reasoning=reply.reasoning,
            judgement=judgement,
        )
        return verdict, judgement

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        """The mean of each dimension over the results it scored (`scored`); None: none."""
        return quality_means([v.to_json() for v in verdicts])

    def summary_line(self, summary: Mapping[str, Any]) -> str:
        return (
            f"Quality (mean of {summary['scored']}): answer quality {summary['answer_quality']:.2f}, "
            f"factual correctness {summary['factual_correctness']:.2f}, "
            f"completeness {summary['completeness']:.2f}"
        )

    def cell(self, verdict: Verdict) -> str:
        q = verdict.to_json()
        return f"{q['answer_quality']:.2f} / {q['factual_correctness']:.2f} / {q['completeness']:.2f}"

    def column(self) -> str:
        return "quality / factual / complete"

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        found = {
            d: v for d in DIMENSIONS if (v := number(scores.get(f"quality_{d}", {}).get("value"))) is not None
        }
        if not found:
            return None
        return {**found, **judge_of(scores[f"quality_{next(iter(found))}"])}


def quality_means(scored: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The mean of each dimension over these quality verdicts (their JSON); None: none."""
    if not scored:
        return None
    means: dict[str, Any] = {"scored": len(scored)}
    for name in DIMENSIONS:
        means[name] = round(sum(float(doc[name]) for doc in scored) / len(scored), 4)
    return means
