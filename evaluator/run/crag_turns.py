"""CRAG turn data scored offline (`evaluator validate --turns FILE.jsonl`; seed
crag-llm-judge-evaluator.md, "Turn Data (JSONL)", "Scores Dictionary", "Multi-Turn Conversation
Scoring").

Each line is one turn: `session_id`, `turn_idx`, `is_ego`, `query`, `ground_truth`, `agent_response`
(required), `interaction_id` and the seed's other fields (kept, unused). Each turn is decided in the
seed's order by the correctness judge (`CorrectnessJudge`): a miss ("I don't know" and its variants)
and an exact match need no model; the rest need the semantic step, the correctness prompt through the
judge runtime, when a judge endpoint is configured (and `--no-judge` not given). A turn nothing decided
is *not measured*: left out of the figures (never counted as incorrect) and listed.

The figures are CRAG's scores dictionary (`metrics.dialogue.crag_scores`): `all` over every decided
turn, `ego` over the decided turns with `is_ego` (the seed's evaluator computes `ego` from the ego turns
alone, the two-errors rule applied within them), each conversation's turns in `turn_idx` order with the
two-errors rule applied, `unjudged` beside them. A group with no decided turn is null.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.config import Config
from evaluator.errors import InputError, Problem
from evaluator.judge import CorrectnessJudge, JudgeModel, Judges
from evaluator.langfuse import LangfuseConnection
from evaluator.metrics import MetricSet
from evaluator.metrics import dialogue as dm
from evaluator.results import JudgeStatus, builtin_metrics, evaluate
from evaluator.run.judging import NOT_FINISHED, judged_result, judges_outside_a_run
from evaluator.scenarios import Scenario
from evaluator.trace import Observation, Trace, build_trace

__all__ = ["CragRecord", "TurnDecision", "TurnScores", "crag_dictionary", "load_turn_data", "score_turn_data"]

Notice = Callable[[str, str], None]
_STRINGS = ("session_id", "query", "ground_truth", "agent_response")
_FIX = (
    "give each line as the seed's turn data: an object with session_id, turn_idx, is_ego, query, "
    "ground_truth and agent_response"
)


@dataclass(frozen=True, kw_only=True)
class CragRecord:
    """One turn of the file (its line number, for messages)."""

    line: int
    session_id: str
    turn_idx: int
    is_ego: bool
    query: str
    ground_truth: str
    agent_response: str
    interaction_id: str | None = None

    @property
    def label(self) -> str:
        return f"session {self.session_id} turn {self.turn_idx} (line {self.line})"


@dataclass(frozen=True, kw_only=True)
class TurnDecision:
    """A turn's CRAG verdict (None: not decided, not measured), what decided it ("miss", "exact
    match", "judge") and why."""

    record: CragRecord
    verdict: dm.CragTurn | None
    decided_by: str | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.record.session_id,
            "interaction_id": self.record.interaction_id,
            "turn_idx": self.record.turn_idx,
            "line": self.record.line,
            "verdict": self.verdict.verdict if self.verdict is not None else None,
            "exact_match": self.verdict.exact_match if self.verdict is not None else None,
            "decided_by": self.decided_by,
            "reason": self.reason,
        }


@dataclass(frozen=True, kw_only=True)
class TurnScores:
    """The scores dictionary of a file, its turns' decisions, and why the semantic step did not run
    (None: it ran)."""

    scores: dict[str, Any]
    turns: tuple[TurnDecision, ...]
    judge_status: JudgeStatus | None

    @property
    def undecided(self) -> tuple[TurnDecision, ...]:
        return tuple(t for t in self.turns if t.verdict is None)

    def to_json(self) -> dict[str, Any]:
        """The scores dictionary, and the turns not decided (each with why)."""
        return {**self.scores, "undecided": [t.to_json() for t in self.undecided]}


def _problem(path: Path, line: int, field: str, found: str, fix: str = _FIX) -> Problem:
    return Problem(source=f"{path}:{line}", field=field, found=found, fix=fix)


def _record(path: Path, line: int, item: Mapping[str, Any]) -> tuple[CragRecord | None, list[Problem]]:
    problems = [
        _problem(path, line, key, "missing" if key not in item else f"{item[key]!r} is not a string")
        for key in _STRINGS
        if not isinstance(item.get(key), str)
    ]
    if isinstance(item.get("ground_truth"), str) and not item["ground_truth"].strip():
        problems.append(_problem(path, line, "ground_truth", "empty", "give the expected answer"))
    turn = item.get("turn_idx")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
        found = "missing" if "turn_idx" not in item else f"{turn!r} is not a turn index"
        problems.append(_problem(path, line, "turn_idx", found, "give the turn's 0-based index, e.g. 0"))
    if not isinstance(item.get("is_ego"), bool):
        found = "missing" if "is_ego" not in item else f"{item['is_ego']!r} is not true or false"
        problems.append(_problem(path, line, "is_ego", found, "give true or false"))
    interaction = item.get("interaction_id")
    if interaction is not None and not isinstance(interaction, str):
        problems.append(_problem(path, line, "interaction_id", f"{interaction!r} is not a string"))
    if problems:
        return None, problems
    return (
        CragRecord(
            line=line,
            session_id=item["session_id"],
            turn_idx=item["turn_idx"],
            is_ego=item["is_ego"],
            query=item["query"],
            ground_truth=item["ground_truth"],
            agent_response=item["agent_response"],
            interaction_id=interaction,
        ),
        [],
    )


def load_turn_data(path: Path) -> list[CragRecord]:
    """Every turn of a JSONL file (blank lines skipped); InputError names each bad line and field."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.one(
            source=str(path),
            field="",
            found=f"cannot read the file ({exc})",
            fix="check the path given to --turns",
        ) from None
    records: list[CragRecord] = []
    problems: list[Problem] = []
    seen: dict[tuple[str, int], int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
            problems.append(_problem(path, number, "", f"not JSON ({exc})", "write one JSON object per line"))
            continue
        if not isinstance(item, dict):
            problems.append(_problem(path, number, "", f"a {type(item).__name__}, not an object"))
            continue
        record, found = _record(path, number, item)
        problems += found
        if record is None:
            continue
        key = (record.session_id, record.turn_idx)
        if key in seen:
            problems.append(
                _problem(
                    path,
                    number,
                    "turn_idx",
                    f"session {record.session_id} has turn {record.turn_idx} already (line {seen[key]})",
                    "give each turn of a session once",
                )
            )
            continue
        seen[key] = number
        records.append(record)
    if not records and not problems:
        problems.append(_problem(path, 1, "", "no turn in the file", _FIX + ", one a line"))
    if problems:
        raise InputError(problems)
    return records


def _by_rule(judge: CorrectnessJudge, record: CragRecord) -> TurnDecision:
    ruled = judge.by_rule(record.agent_response, record.ground_truth)
    if ruled is None:
        return TurnDecision(record=record, verdict=None, decided_by=None, reason="needs the semantic step")
    return TurnDecision(
        record=record,
        verdict=dm.CragTurn(verdict=ruled.verdict, exact_match=ruled.exact_match),
        decided_by=ruled.judgement.decided_by,
        reason=ruled.reason,
    )


def _turn_scenario(record: CragRecord, index: int) -> Scenario:
    return Scenario.model_validate(
        {
            "id": f"turn-{index}",
            "input": record.query or "(no query)",
            "expected": {"answer": {"ground_truth": record.ground_truth}},
        }
    )


def _answered(record: CragRecord, index: int) -> Trace:
    """The turn as a trace of one span whose output is the agent's response."""
    span = Observation(
        id=f"turn-{index}", parent_id=None, type="SPAN", name="agent", output=record.agent_response
    )
    return build_trace(f"crag-turn-{index}", [span])


def _judged(
    judges: Judges, judge: CorrectnessJudge, record: CragRecord, index: int, run_id: str
) -> TurnDecision:
    scenario = _turn_scenario(record, index)
    trace = _answered(record, index)
    result = evaluate(
        scenario, trace, judge_status=NOT_FINISHED, output=record.agent_response, metrics=MetricSet((judge,))
    )
    judged = judged_result(judges, scenario, result, trace, run_id=run_id)
    verdict = judged.judged.get(judge.key)
    document = verdict.to_json() if verdict is not None else None
    if document is None or document.get("verdict") not in ("correct", "miss", "hallucination"):
        detail = judged.judge_detail.get(judge.key) or {}
        reason = str(detail.get("reason") or judged.judge_status.reason or "the judge gave no verdict")
        return TurnDecision(record=record, verdict=None, decided_by=None, reason=f"not judged: {reason}")
    return TurnDecision(
        record=record,
        verdict=dm.CragTurn(verdict=document["verdict"], exact_match=bool(document["exact_match"])),
        decided_by="judge",
        reason=str(document.get("reason") or ""),
    )


def crag_dictionary(decisions: Sequence[TurnDecision]) -> dict[str, Any]:
    """The seed's scores dictionary: `all` and `ego`, each CRAG's figures over its decided turns (null
    when none) with `unjudged`, the count of its turns not decided."""
    return {
        "all": _group(decisions),
        "ego": _group([d for d in decisions if d.record.is_ego]),
    }


def _group(decisions: Sequence[TurnDecision]) -> dict[str, Any] | None:
    conversations: dict[str, list[TurnDecision]] = {}
    for decision in decisions:
        conversations.setdefault(decision.record.session_id, []).append(decision)
    ordered = [
        [d.verdict for d in sorted(turns, key=lambda d: d.record.turn_idx) if d.verdict is not None]
        for _, turns in sorted(conversations.items())
    ]
    scores = dm.crag_scores(ordered)
    unjudged = sum(d.verdict is None for d in decisions)
    if scores is None:
        return None if not unjudged else {"total": 0, "unjudged": unjudged}
    return {**scores, "unjudged": unjudged}


def score_turn_data(
    config: Config,
    records: Sequence[CragRecord],
    *,
    no_judge: bool = False,
    no_cache: bool = False,
    connection: LangfuseConnection | None = None,
    model: JudgeModel | None = None,
    run_id: str = "",
    notice: Notice = lambda kind, message: None,
) -> TurnScores:
    """Every turn decided as far as the rules (and the judge, when it runs) can; the scores dictionary."""
    judge = _correctness_judge(config)
    decisions = [_by_rule(judge, record) for record in records]
    open_turns = [i for i, d in enumerate(decisions) if d.verdict is None]
    status: JudgeStatus | None = None
    if open_turns:
        scenarios = [_turn_scenario(decisions[i].record, i) for i in open_turns]
        with judges_outside_a_run(
            config, scenarios, metrics=MetricSet((judge,)), no_judge=no_judge, no_cache=no_cache,
            connection=connection, model=model, notice=notice,
        ) as (judges, status):  # fmt: skip
            if judges is not None:
                for i in open_turns:
                    decisions[i] = _judged(judges, judge, decisions[i].record, i, run_id)
            else:
                decisions = [d if d.verdict is not None else _not_decided(d, status) for d in decisions]
    return TurnScores(scores=crag_dictionary(decisions), turns=tuple(decisions), judge_status=status)


def _not_decided(decision: TurnDecision, status: JudgeStatus | None) -> TurnDecision:
    why = status.reason if status is not None else "the judges did not run"
    return TurnDecision(
        record=decision.record,
        verdict=None,
        decided_by=None,
        reason=f"neither a miss nor an exact match, and the semantic step did not run: {why}",
    )


def _correctness_judge(config: Config) -> CorrectnessJudge:
    """The configured correctness judge (its prompt and miss phrases), as a run has it."""
    found = builtin_metrics(config).get(CorrectnessJudge.key)
    if isinstance(found, CorrectnessJudge):
        return found
    judge = config.settings.judge
    return CorrectnessJudge(prompt=judge.correctness_prompt, miss_phrases=judge.miss_phrases)
