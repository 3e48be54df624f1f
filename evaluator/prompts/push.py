"""`evaluator prompts push`: local prompt files into Langfuse prompt management, idempotently.

For each prompt name, local versions are pushed in ascending order, so the local version numbers become
the Langfuse version numbers. A version Langfuse already has with the same content is not pushed again
(pushing twice creates nothing); only labels it lacks are added (labels move between versions as
Langfuse defines; none is ever removed). A version whose Langfuse copy differs, or that cannot keep its
number, is a conflict: reported with the fix, and later versions of that name are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from evaluator.errors import Problem
from evaluator.prompts.library import PromptLibrary
from evaluator.prompts.model import Prompt

__all__ = ["PromptRegistry", "PushOutcome", "push_prompts"]

RESERVED_LABELS = frozenset({"latest"})  # managed by Langfuse itself


class PromptRegistry(Protocol):
    def remote_prompt(self, name: str, version: int) -> Prompt | None: ...
    def latest_remote_version(self, name: str) -> int: ...
    def create_prompt(self, prompt: Prompt) -> int: ...
    def add_labels(self, name: str, version: int, labels: Sequence[str]) -> None: ...


@dataclass(frozen=True, kw_only=True)
class PushOutcome:
    ref: str
    action: Literal["created", "unchanged", "labelled"]
    labels: tuple[str, ...] = ()


def push_prompts(library: PromptLibrary, registry: PromptRegistry) -> tuple[list[PushOutcome], list[Problem]]:
    outcomes: list[PushOutcome] = []
    problems: list[Problem] = []
    for name in library.names():
        versions = library.versions(name)
        for prompt in versions:
            outcome = _push_one(prompt, registry, next_free=versions[-1].version + 1)
            if isinstance(outcome, Problem):
                problems.append(outcome)
                break  # later versions would land on the wrong numbers
            outcomes.append(outcome)
    return outcomes, problems


def _push_one(prompt: Prompt, registry: PromptRegistry, *, next_free: int) -> PushOutcome | Problem:
    remote = registry.remote_prompt(prompt.name, prompt.version)
    source = str(prompt.path or prompt.ref)
    if remote is None:
        latest = registry.latest_remote_version(prompt.name)
        if latest != prompt.version - 1:
            return Problem(
                source=source,
                field="version",
                found=f"Langfuse has versions up to {latest} of {prompt.name}, so this file would become "
                f"version {latest + 1}, not {prompt.version}",
                fix=f"push the missing local versions first, or renumber the files to follow v{latest}",
            )
        created = registry.create_prompt(prompt)
        if created != prompt.version:  # a concurrent push got there first
            return Problem(
                source=source,
                field="version",
                found=f"Langfuse stored it as version {created}",
                fix="check who else pushes this prompt, then push again",
            )
        return PushOutcome(ref=prompt.ref, action="created", labels=prompt.labels)
    if not prompt.same_content(remote):
        return _conflict(prompt, remote, source, next_free)
    missing = [
        label for label in prompt.labels if label not in remote.labels and label not in RESERVED_LABELS
    ]
    if not missing:
        return PushOutcome(ref=prompt.ref, action="unchanged")
    keep = [label for label in remote.labels if label not in RESERVED_LABELS]
    registry.add_labels(prompt.name, prompt.version, [*keep, *missing])
    return PushOutcome(ref=prompt.ref, action="labelled", labels=tuple(missing))


def _conflict(prompt: Prompt, remote: Prompt, source: str, next_free: int) -> Problem:
    """What differs between a file and Langfuse's copy of its version: the type (Langfuse keeps one type
    per prompt name, so a new version cannot change it), else the config alone, else the body."""
    theirs = f"Langfuse's version {prompt.version} of {prompt.name}"
    if prompt.type != remote.type:
        return Problem(
            source=source,
            field="type",
            found=f"{theirs} is a {remote.type} prompt, this file a {prompt.type} one",
            fix=f"Langfuse keeps one type per prompt name: write the file as type: {remote.type}, "
            "or give this prompt a new name",
        )
    fix = f"never edit a pushed version: restore this file, and put the change in a new v{next_free}.prompt"
    if replace(prompt, config=remote.config).same_content(remote):
        keys = sorted(
            k for k in {*prompt.config, *remote.config} if prompt.config.get(k) != remote.config.get(k)
        )
        found = f"{theirs} has a different config ({', '.join(keys)})"
        return Problem(source=source, field="config", found=found, fix=fix)
    return Problem(source=source, field="body", found=f"{theirs} has different content", fix=fix)
