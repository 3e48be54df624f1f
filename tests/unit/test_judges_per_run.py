"""judge/judges.py: what a run's judges work out once and keep (the prompt version each judge asks
for, the cache key's hash of a prompt's constant first message) gives what working it out for every
judgement gave."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.errors import PromptError
from evaluator.judge import FakeJudgeModel, Judges, RetryPolicy
from evaluator.judge.cache import CacheKey
from evaluator.prompts import ChatMessage, Prompt, PromptLibrary
from tests.builders import TraceBuilder, scenario

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
QUALITY = json.dumps(
    {"answer_quality": 0.9, "factual_correctness": 0.8, "completeness": 0.7, "reasoning": "r"}
)


class MovingLabel:
    """Langfuse prompt management whose production label moves to a new version after each lookup."""

    def __init__(self, *, fail_first: bool = False) -> None:
        self._library = PromptLibrary(PROMPTS)
        self.lookups = 0
        self._fail_first = fail_first

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt:
        self.lookups += 1
        if self._fail_first and self.lookups == 1:
            raise PromptError.one(source=name, field="label", found="not served", fix="push it")
        return replace(self._library.get(name, version=version, label=label), version=self.lookups)


def _judges(fake: FakeJudgeModel, prompts: MovingLabel) -> Judges:
    return Judges(model=fake, prompts=prompts, retry=RetryPolicy(sleep=lambda _: None))


def _judge(judges: Judges, n: int) -> Any:
    sc = scenario(id=f"s{n}", input=f"question {n}", expected={"answer": {"criteria": "c"}})
    return judges.judge(sc, f"answer {n}", TraceBuilder().build(), run_id="r")


def test_a_run_asks_for_each_judge_prompt_once_and_keeps_its_version() -> None:
    prompts = MovingLabel()
    judges = _judges(FakeJudgeModel(default=QUALITY), prompts)
    versions = [_judge(judges, n).judged["quality"].to_json()["prompt"]["version"] for n in range(3)]
    assert versions == [1, 1, 1]  # the label moved after the first lookup: the run keeps its version
    assert prompts.lookups == 1


def test_a_prompt_that_could_not_be_had_is_asked_for_again() -> None:
    prompts = MovingLabel(fail_first=True)
    judges = _judges(FakeJudgeModel(default=QUALITY), prompts)
    first, second = _judge(judges, 1), _judge(judges, 2)
    assert first.status.status == "unscored" and "not served" in first.status.reason
    assert second.status.status == "scored"
    assert prompts.lookups == 2


def test_the_cache_key_hashes_the_exact_messages() -> None:
    prompt = PromptLibrary(PROMPTS).get("evaluation/quality")
    for messages in (
        [],
        [ChatMessage(role="system", content='a "quoted" é\n')],
        [ChatMessage(role="system", content="rubric"), ChatMessage(role="user", content="ü {x}")],
        [ChatMessage(role="system", content="rubric"), ChatMessage(role="user", content="other")],
    ):
        exact = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
        key = CacheKey.of(prompt, "m", messages)
        assert key.inputs_sha256 == hashlib.sha256(exact.encode("utf-8")).hexdigest()
