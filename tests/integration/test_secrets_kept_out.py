"""A target whose exception quotes the environment (its settings, `os.environ`) leaves no key in the
result or its scores (nor the root span's status, which is set from the same message): the message is
redacted where the run takes it in (evaluator/_secrets.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.results import scores_for
from evaluator.run import Pipeline, RunOptions, Target, TargetRequest
from evaluator.scenarios import LoadedScenario
from evaluator.storage import Store
from tests.builders import scenario

KEYS = {"OPENAI_API_KEY": "sk-canary-openai-0001", "EVALUATOR_JUDGE_API_KEY": "sk-canary-judge-0002"}


@pytest.fixture
def tracing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tracing]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def sync_target(request: TargetRequest) -> str:
    raise RuntimeError(f"cannot start with settings {dict(os.environ)}")


async def async_target(request: TargetRequest) -> str:
    raise RuntimeError(f"cannot start with settings {dict(os.environ)}")


@pytest.mark.parametrize("target", [sync_target, async_target], ids=["sync", "async"])
def test_a_target_error_quoting_the_environment_keeps_the_keys_out(tracing: Tracing, target: Target) -> None:
    pipeline = Pipeline(
        tracer=tracing, targets={"demo": target}, prompts=PromptLibrary(Path("-")), recorder=Store(None)
    )
    item = LoadedScenario(scenario=scenario(id="leaky", input="hi"), path=Path("x.yaml"))
    run, results = pipeline.run([item], RunOptions(concurrency=1, timeout_seconds=10))
    [result] = results
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("RuntimeError: cannot start with settings {")
    recorded = json.dumps([result.to_json(), [s.comment for s in scores_for(result, run_id=run.id)]])
    for key in KEYS.values():
        assert key not in recorded
    assert "***" in result.error
