"""The correctness judge (seed crag-llm-judge-evaluator.md), for scenarios with
`expected.answer.ground_truth`, in the seed's order: a miss ("I don't know" and its variants, or an
empty answer) is `miss`; an exact match after normalisation is `correct` with no call; otherwise the
correctness prompt's CORRECT / WRONG is `correct` / `hallucination`. The first two steps need no model:
`decide_by_rule` runs them in the metrics stage, so they decide without a judge (no endpoint,
`--no-judge`); an answer only the third step can decide then has no verdict (not measured, never a
`hallucination`), its judgement *skipped* with the reason and how to enable a judge.

Its figures, over the results with a verdict: `correctness_accuracy` (correct), `_hallucination_rate`,
`_missing_rate`, and `_truthfulness` (+1 correct, 0 miss, -1 hallucination; its mean is
(2*correct + miss)/n - 1). Its run-level dictionary is CRAG's (`crag_metrics`):

    total          N results with a verdict (correct, miss or hallucination)
    exact_match    correct_exact / N           (correct by exact match, no LLM call)
    accuracy       correct / N                 (exact or judged CORRECT)
    missing        miss / N                    ("I don't know" and its variants)
    hallucination_rate  hallucination / N      (hallucination = N - correct - miss)
    truthfulness_score  (2 x correct + miss) / N - 1

`unjudged` counts the results with a ground truth but no verdict (only a judge could decide, and it
did not run or could not score), which the rates leave out. With no verdict at all, the dictionary is None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evaluator.config import DEFAULT_MISS_PHRASES
from evaluator.judge.crag import exact_match, miss_phrase
from evaluator.judge.metric import Answer, Ask, JudgeRuntime, PromptRef, ask_each, judge_of
from evaluator.judge.render import correctness_variables
from evaluator.judge.replies import CorrectnessReply
from evaluator.judge.verdicts import CorrectnessLabel, CorrectnessVerdict, Judgement
from evaluator.metrics import (
    Figure,
    Gate,
    MetricBase,
    MetricContext,
    ScoreDefinition,
    Verdict,
    answer_text,
    final_answer,
)
from evaluator.scenarios import Scenario

__all__ = ["CATEGORIES", "DEFINITION", "NEEDS_A_JUDGE", "CorrectnessJudge", "crag_metrics"]

CATEGORIES = ("correct", "miss", "hallucination")
DEFINITION = ScoreDefinition(
    name="correctness",
    data_type="CATEGORICAL",
    description="Against the ground truth: correct (exact or judged), miss (I don't know), hallucination",
    categories=CATEGORIES,
)

NEEDS_A_JUDGE = (
    "not measured: the answer is neither a miss nor an exact match of the ground truth, so only the "
    "semantic step (an LLM judge) can decide it, and no judge ran on this answer (judge_status says "
    "why). Fix: configure a judge endpoint (EVALUATOR_JUDGE_BASE_URL, OPENAI_BASE_URL or OPENAI_API_KEY; "
    "README, LLM judges) and run without --no-judge"
)


def _weighted(weights: Mapping[str, float]) -> Callable[[Mapping[str, Any]], float | None]:
    def value(document: Mapping[str, Any]) -> float | None:
        correctness = document.get("correctness")
        verdict = correctness.get("verdict") if isinstance(correctness, dict) else None
        return weights.get(verdict, 0.0) if verdict in CATEGORIES else None

    return value


class CorrectnessJudge(MetricBase):
    key = "correctness"
    stage = "judge"
    definitions = (DEFINITION,)
    figures = (
        Figure(
            name="correctness_accuracy",
            value=_weighted({"correct": 1.0}),
            rate=True,
            label="accuracy",
            chart="Correct answers (correctness judge)",
            gate=Gate(label="correctness accuracy", threshold=2.0, setting="accuracy_drop"),
        ),
        Figure(name="correctness_hallucination_rate", value=_weighted({"hallucination": 1.0}), rate=True),
        Figure(name="correctness_missing_rate", value=_weighted({"miss": 1.0}), rate=True),
        Figure(
            name="correctness_truthfulness",
            value=_weighted({"correct": 1.0, "miss": 0.0, "hallucination": -1.0}),
            label="truthful",
        ),
    )

    def __init__(
        self, *, prompt: str = "evaluation/correctness", miss_phrases: tuple[str, ...] = DEFAULT_MISS_PHRASES
    ) -> None:
        self.prompt_name = prompt
        self.miss_phrases = miss_phrases

    def applies(self, scenario: Scenario) -> bool:
        """A scenario with a ground truth; a dialogue with a turn that has one."""
        if scenario.turns is not None:
            return any(
                t.expected.answer is not None and t.expected.answer.ground_truth for t in scenario.turns
            )
        spec = scenario.expected.answer
        return spec is not None and bool(spec.ground_truth)

    def prompt(self, scenario: Scenario) -> PromptRef:
        return PromptRef(name=self.prompt_name)

    def judge(
        self, context: MetricContext, runtime: JudgeRuntime, run_id: str
    ) -> tuple[Verdict | None, Judgement]:
        return ask_each(self, context, runtime, run_id)

    def asks(self, context: MetricContext) -> list[Ask]:
        """None when the rules decide (`combine` does then); else the semantic step's request."""
        answer, ground_truth = self._judged(context)
        if self.by_rule(answer_text(answer), ground_truth) is not None:
            return []
        variables = correctness_variables(
            question=context.scenario.input, answer=answer, ground_truth=ground_truth
        )
        return [
            Ask(
                judge=self.key,
                prompt=self.prompt(context.scenario),
                variables=variables,
                reply_type=CorrectnessReply,
            )
        ]

    def combine(self, context: MetricContext, answers: Sequence[Answer]) -> tuple[Verdict | None, Judgement]:
        if not answers:
            answer, ground_truth = self._judged(context)
            ruled = self.by_rule(answer_text(answer), ground_truth)  # why asks() asked nothing
            if ruled is None:
                return None, Judgement(judge=self.key, status="unscored", reason="the judge was not asked")
            return ruled, ruled.judgement
        ((reply, judgement),) = answers
        if not isinstance(reply, CorrectnessReply):
            return None, judgement
        label: CorrectnessLabel = "correct" if reply.verdict == "CORRECT" else "hallucination"
        return CorrectnessVerdict(
            verdict=label, exact_match=False, reason=reply.reason, judgement=judgement
        ), judgement

    @staticmethod
    def _judged(context: MetricContext) -> tuple[object, str]:
        """The final answer (as `answer.contains` reads it) and the ground truth."""
        return final_answer(context.answer, context.trace.agent_names), _ground_truth(context.scenario)

    def decide_by_rule(self, context: MetricContext) -> tuple[Verdict | None, Judgement] | None:
        """The seed's rule steps on the context's answer, with no model (judge.RuleJudge): run in the
        metrics stage, so a run without judges (no endpoint, `--no-judge`) still has these verdicts.
        An answer only the semantic step can decide is not measured: no verdict, and a *skipped*
        judgement saying so. None when the scenario has no ground truth."""
        if not self.applies(context.scenario):
            return None
        answer, ground_truth = self._judged(context)
        ruled = self.by_rule(answer_text(answer), ground_truth)
        if ruled is not None:
            return ruled, ruled.judgement
        return None, Judgement(judge=self.key, status="skipped", reason=NEEDS_A_JUDGE, decided_by="none")

    def by_rule(self, answer: str, ground_truth: str) -> CorrectnessVerdict | None:
        """The seed's first two steps, with no model call: a miss, then an exact match."""
        phrase = "" if not answer.strip() else miss_phrase(answer, self.miss_phrases)
        if phrase is not None:
            reason = f'the answer says it does not know ("{phrase}")' if phrase else "the answer is empty"
            judgement = Judgement(judge=self.key, status="scored", reason=reason, decided_by="miss")
            return CorrectnessVerdict(verdict="miss", exact_match=False, reason=reason, judgement=judgement)
        if exact_match(answer, ground_truth):
            judgement = Judgement(
                judge=self.key, status="scored", reason="exact match", decided_by="exact match"
            )
            return CorrectnessVerdict(
                verdict="correct", exact_match=True, reason="exact match", judgement=judgement
            )
        return None

    def run_summary(self, verdicts: Sequence[Verdict], unjudged: int) -> dict[str, Any] | None:
        pairs = []
        for verdict in verdicts:
            document = verdict.to_json()
            pairs.append((str(document["verdict"]), bool(document["exact_match"])))
        return crag_metrics(pairs, unjudged=unjudged)

    def summary_line(self, summary: Mapping[str, Any]) -> str:
        unjudged = f", {summary['unjudged']} not judged" if summary["unjudged"] else ""
        return (
            f"Correctness ({summary['total']} with a verdict{unjudged}): accuracy {summary['accuracy']:.2f}, "
            f"exact match {summary['exact_match']:.2f}, missing {summary['missing']:.2f}, hallucination rate "
            f"{summary['hallucination_rate']:.2f}, truthfulness {summary['truthfulness_score']:.2f}"
        )

    def cell(self, verdict: Verdict) -> str:
        return str(verdict.to_json()["verdict"])

    def from_scores(self, scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
        score = scores.get(DEFINITION.name)
        if score is None:
            return None
        return {"verdict": str(score.get("value")).lower(), **judge_of(score)}


def _ground_truth(scenario: Scenario) -> str:
    spec = scenario.expected.answer
    return spec.ground_truth if spec is not None and spec.ground_truth else ""


def crag_metrics(verdicts: Sequence[tuple[str, bool]], *, unjudged: int = 0) -> dict[str, Any] | None:
    """The CRAG figures of (verdict, exact match) pairs; None when there are none."""
    total = len(verdicts)
    if total == 0:
        return None
    correct = sum(verdict == "correct" for verdict, _ in verdicts)
    miss = sum(verdict == "miss" for verdict, _ in verdicts)
    exact = sum(exact for verdict, exact in verdicts if verdict == "correct")
    hallucination = total - correct - miss
    return {
        "total": total,
        "unjudged": unjudged,
        "correct_exact": exact,
        "correct": correct,
        "miss": miss,
        "hallucination": hallucination,
        "exact_match": round(exact / total, 4),
        "accuracy": round(correct / total, 4),
        "missing": round(miss / total, 4),
        "hallucination_rate": round(hallucination / total, 4),
        "truthfulness_score": round((2 * correct + miss) / total - 1, 4),
    }
