"""Scores: the contract names of DESIGN.md, built from a result's verdicts, with deterministic ids; their
types are the definitions of the result's `MetricSet`.

A score id is a UUID5 of (run id, trace id, name), and its timestamp is the result's finish time, frozen:
posting the same score again updates it in Langfuse instead of adding a second one. A session metric's
scores are session scores (`session_id`: the scenario's run, `<run id>:<scenario id>`), their id a UUID5
of (run id, session id, name); they keep the trace id of the result, so they wait for its spans as the
trace's own scores do. A session score about one agent (metadata `agent`: a dialogue's per-agent
roll-up) has an id of its own per agent.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluator.metrics import DataType, ScoreValue, session_id
from evaluator.results.model import ScenarioResult

__all__ = ["OBSERVATION_KEY", "Score", "score_id", "scores_for"]

OBSERVATION_KEY = "observation_id"  # in a score's metadata: the observation it scores

_NAMESPACE = uuid.UUID("6f1d3c1e-4d7b-5a7e-9b0f-2f4c8a1e5d10")
_NAMESPACE_BYTES = _NAMESPACE.bytes


@dataclass(frozen=True, kw_only=True)
class Score:
    """One score. `value` is a number, or for a CATEGORICAL score the category's name."""

    id: str
    trace_id: str
    name: str
    value: float | str
    data_type: DataType
    comment: str | None
    timestamp: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    session_id: str | None = None  # a session score: its subject is this session, not the trace

    @classmethod
    def built(
        cls,
        *,
        id: str,
        trace_id: str,
        name: str,
        value: float | str,
        data_type: DataType,
        comment: str | None,
        timestamp: str,
        metadata: Mapping[str, Any],
        session_id: str | None = None,
    ) -> Score:
        """The score of these values, as the constructor gives it, for values already of their types
        (made by `scores_for`, or read back from the store): its fields set straight, not one by one
        through `object.__setattr__` (a frozen dataclass's `__init__`), a third of the cost, for the many
        scores a run records and delivers."""
        score = object.__new__(cls)
        score.__dict__.update(
            id=id,
            trace_id=trace_id,
            name=name,
            value=value,
            data_type=data_type,
            comment=comment,
            timestamp=timestamp,
            metadata=metadata,
            session_id=session_id,
        )
        return score

    @property
    def observation_id(self) -> str | None:
        """An observation-level score's observation (kept in its metadata, so the store and `sync`
        carry it as they carry the rest); None: a score of its trace or session."""
        found = self.metadata.get(OBSERVATION_KEY)
        return found if isinstance(found, str) else None


def score_id(run_id: str, trace_id: str, name: str) -> str:
    """`uuid.uuid5(_NAMESPACE, "run/trace/name")`, formatted straight from the SHA-1 digest (RFC 4122
    name-based ids: version 5, variant 10): a third of the uuid module's cost, on every score recorded."""
    return _ScoreIds(run_id, trace_id).of(name)


class _ScoreIds:
    """`score_id` for the many names of one (run, trace or session): the hash state of the common
    part is computed once and copied for each name."""

    def __init__(self, run_id: str, subject: str) -> None:
        self._opening = hashlib.sha1(
            _NAMESPACE_BYTES + f"{run_id}/{subject}/".encode(), usedforsecurity=False
        )

    def of(self, name: str) -> str:
        sha = self._opening.copy()
        sha.update(name.encode())
        return _uuid5_text(sha.hexdigest())


def _uuid5_text(sha1_hex: str) -> str:
    """The UUID text of a SHA-1 digest: its first 32 hex digits, the version digit 5, the variant
    bits 10 (the digit after the third dash is 8, 9, a or b)."""
    h = sha1_hex
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"


_VARIANT = {f"{n:x}": f"{(n & 0x3) | 0x8:x}" for n in range(16)}


def _values(result: ScenarioResult) -> list[ScoreValue]:
    if result.evaluator_error is not None:
        return []  # the evaluator failed, not the agent: nothing is scored against it
    if result.dialogue is not None:  # its turns carry their own (error) scores; the session its figures
        return [value for verdict in result.verdicts.values() for value in verdict.scores()]
    if result.status == "error":  # the run never finished: dashboards must see it fail
        return [value for metric in result.metrics for value in metric.error_scores(str(result.error))]
    verdicts = [*result.verdicts.values(), *result.judged.values()]
    return [value for verdict in verdicts for value in verdict.scores()]


def _typed(value: float | str, data_type: DataType) -> float | str:
    return str(value) if data_type == "CATEGORICAL" else float(value)


def scores_for(result: ScenarioResult, *, run_id: str) -> list[Score]:
    """Every score a result yields. A run that raised or timed out yields only its metrics' error
    scores, their comment the error (it never finished; leaving it out would flatter dashboards); nothing
    is scored that was not evaluated (no trajectory of an unfinished run, no skipped or unscored judge),
    and nothing at all when the evaluator itself failed. A judge's scores add its prompt name and
    version, model and judge trace id to the metadata."""
    metadata: dict[str, Any] = {
        "scenario_id": result.scenario_id,
        "run_id": run_id,
        "prompts": {name: use.version for name, use in result.prompts.items()},
    }
    scores = _turn_scores(result, run_id=run_id, metadata=metadata) if result.dialogue is not None else []
    types, levels = result.metrics.score_types, result.metrics.score_levels
    session = session_id(run_id, result.scenario_id)
    ids: dict[str, _ScoreIds] = {}  # by subject, made when a score first has it (a turn has no session's)
    for value in _values(result):
        in_session = levels[value.name] == "session"
        subject = session if in_session else result.trace_id
        own = value.metadata
        if value.observation_id is not None:  # one per observation: its id is the observation's
            subject = f"{result.trace_id}/{value.observation_id}"
            own = {**own, OBSERVATION_KEY: value.observation_id}
        elif in_session and isinstance(agent := own.get("agent"), str):  # one per agent of the session
            subject = f"{session}/agent/{agent}"
        subject_ids = ids.get(subject)
        if subject_ids is None:
            subject_ids = ids[subject] = _ScoreIds(run_id, subject)
        scores.append(
            Score.built(
                id=subject_ids.of(value.name),
                trace_id=result.trace_id,
                name=value.name,
                value=_typed(value.value, types[value.name]),
                data_type=types[value.name],
                comment=value.comment,
                timestamp=result.finished_at,
                metadata={**metadata, **own} if own else metadata,  # shared: the store encodes it once
                session_id=session if in_session else None,
            )
        )
    return scores


def _turn_scores(result: ScenarioResult, *, run_id: str, metadata: Mapping[str, Any]) -> list[Score]:
    """A dialogue's turn scores: each turn's single-turn scores and `turn_<key>` on the turn's trace
    (its `dialogue_<key>` session scores are its verdict's). Nothing when the evaluator failed."""
    dialogue = result.dialogue
    if dialogue is None or result.evaluator_error is not None:
        return []
    from evaluator.results.dialogue import turn_scores  # here: a run without dialogues does not load them

    scores: list[Score] = []
    for turn in dialogue.turns:
        if turn.result is None:
            continue
        scores += scores_for(turn.result, run_id=run_id)
        if turn.figures is None:
            continue
        trace = turn.result.trace_id
        ids = _ScoreIds(run_id, trace)  # the hash of (run, trace) once per turn, not per score
        shared = {**metadata, "turn": turn.turn}  # the turn's scores share one (the store writes it once)
        for name, data_type, value, comment in turn_scores(turn.figures):
            scores.append(
                Score.built(
                    id=ids.of(name),
                    trace_id=trace,
                    name=name,
                    value=value,
                    data_type=data_type,
                    comment=comment or None,
                    timestamp=result.finished_at,
                    metadata=shared,
                )
            )
    return scores
