"""results/scores.py: score ids are uuid5 of (run, trace or session, name), however they are computed."""

from __future__ import annotations

import uuid

from evaluator.results.scores import _NAMESPACE, score_id


def test_score_ids_are_the_uuid5_of_run_trace_and_name() -> None:
    for run_id, subject, name in [
        ("r", "t", "n"),
        ("run-20261125T140000Z-abcdef", uuid.UUID(int=7).hex, "answer_quality"),
        ("é run", "run:scenario-1", "turn_success"),
    ] + [(f"run-{i}", uuid.UUID(int=i * 7919).hex, f"score{i}") for i in range(300)]:
        assert score_id(run_id, subject, name) == str(uuid.uuid5(_NAMESPACE, f"{run_id}/{subject}/{name}"))
