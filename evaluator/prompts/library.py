"""The prompt files below one folder, and where prompts come from at run time: the files, or Langfuse
prompt management with the files as the fallback."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from evaluator.errors import EvaluatorError, LangfuseUnavailableError, Problem, PromptError, did_you_mean
from evaluator.prompts.files import parse_prompt_file
from evaluator.prompts.model import PRODUCTION_LABEL, Prompt

__all__ = ["BUNDLED_PROMPTS", "ManagedPrompts", "PromptLibrary", "PromptSource"]

BUNDLED_PROMPTS = Path(__file__).resolve().parent / "bundled"
"""The judges' prompts (`evaluation/...`) shipped in the package, so that a project needs no copy of
them: a project's prompt folder that has a prompt of the same name replaces all its versions."""


def _shared_labels(prompts: Mapping[str, Mapping[int, Prompt]]) -> list[Problem]:
    """A label names one version (as in Langfuse); on two local versions it would flip between them."""
    problems = []
    for name, versions in prompts.items():
        holders: dict[str, list[int]] = {}
        for version, prompt in sorted(versions.items()):
            for label in prompt.labels:
                holders.setdefault(label, []).append(version)
        for label, numbers in holders.items():
            if len(numbers) > 1:
                newest = versions[numbers[-1]]
                problems.append(
                    Problem(
                        source=str(newest.path or newest.ref),
                        field="labels",
                        found=f'label "{label}" is on versions {", ".join(map(str, numbers))} of {name}',
                        fix=f'keep "{label}" on one version only (a label names one version)',
                    )
                )
    return problems


def _read(root: Path, problems: list[Problem]) -> dict[str, dict[int, Prompt]]:
    prompts: dict[str, dict[int, Prompt]] = {}
    for path in sorted(root.rglob("*.prompt")) if root.is_dir() else []:
        try:
            prompt = parse_prompt_file(path, root)
        except PromptError as exc:
            problems.extend(exc.problems)
            continue
        prompts.setdefault(prompt.name, {})[prompt.version] = prompt
    return prompts


class PromptLibrary:
    """All prompt files below one folder, by name and version; with `defaults` (`BUNDLED_PROMPTS`),
    also the prompts below that folder whose name the first one has none of."""

    def __init__(self, root: Path, *, defaults: Path | None = None) -> None:
        self.root = root
        problems: list[Problem] = []
        self._prompts = _read(root, problems)
        if defaults is not None:
            for name, versions in _read(defaults, problems).items():
                self._prompts.setdefault(name, versions)
        problems += _shared_labels(self._prompts)
        if problems:
            raise PromptError(problems)

    @classmethod
    def of_project(cls, root: Path) -> PromptLibrary:
        """A project's prompt folder, with the package's judge prompts it has none of its own of: what
        every command reads."""
        return cls(root, defaults=BUNDLED_PROMPTS)

    def names(self) -> list[str]:
        return sorted(self._prompts)

    def catalog(self) -> dict[str, dict[int, tuple[str, ...]]]:
        """Every prompt's versions and their labels (what scenario files are checked against)."""
        return {
            name: {version: tuple(p.labels) for version, p in versions.items()}
            for name, versions in self._prompts.items()
        }

    def version(self, name: str, number: int) -> Prompt | None:
        """One version of a prompt, or None when there is no such file."""
        return self._prompts.get(name, {}).get(number)

    def versions(self, name: str) -> list[Prompt]:
        return [self._prompts[name][v] for v in sorted(self._prompts.get(name, {}))]

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt:
        """A version by number, by label, or else the `production`-labelled one, else the newest.

        Raises PromptError naming the valid names, versions or labels.
        """
        versions = self._prompts.get(name)
        if not versions:
            raise PromptError.one(
                source=str(self.root),
                field="prompt",
                found=f'unknown prompt "{name}"' + did_you_mean(name, self._prompts),
                fix=f"add {self.root}/{name}/v1.prompt or name an existing prompt",
            )
        if version is not None:
            if version not in versions:
                raise PromptError.one(
                    source=str(self.root / name),
                    field="version",
                    found=f"no version {version} of {name}",
                    fix=f"use one of {', '.join(map(str, sorted(versions)))}, or add its file "
                    f"v{version}.prompt there (a pinned version needs its file, even one Langfuse holds)",
                )
            return versions[version]
        wanted = label or PRODUCTION_LABEL
        labelled = [p for v, p in sorted(versions.items()) if wanted in p.labels]
        if labelled:
            return labelled[-1]
        if label is not None:
            known = {lab for p in versions.values() for lab in p.labels}
            raise PromptError.one(
                source=str(self.root / name),
                field="label",
                found=f'no version of {name} has label "{label}"' + did_you_mean(label, known),
                fix="add the label to a version's header or ask for a version number",
            )
        return versions[max(versions)]


class PromptSource(Protocol):
    """Where prompts come from at run time: local files, or Langfuse prompt management."""

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt: ...


class ManagedPrompts:
    """Prompts served by Langfuse prompt management (so generations link to their versions), with the
    local file as the fallback when Langfuse cannot serve one: the run says so (`on_fallback`) and the
    prompt is marked `source="local"`, i.e. not linked.

    The local library is consulted first, so an unknown name or version is still a clear error.
    """

    def __init__(
        self,
        library: PromptLibrary,
        fetch: Callable[[Prompt, int | None, str | None], Prompt],
        on_fallback: Callable[[str, Exception], None],
        on_differs: Callable[[Prompt, Prompt], None] = lambda local, served: None,
    ) -> None:
        """`on_differs(local, served)`: Langfuse served a version whose local file says otherwise
        (edited without a new version); the run uses what Langfuse served."""
        self._library = library
        self._fetch = fetch
        self._on_fallback = on_fallback
        self._on_differs = on_differs
        # Prompts Langfuse did not answer for (no reply in time, unreachable), with why: the rest of the
        # run uses their local file at once. Asking again made each scenario's target wait out the
        # request timeout per prompt, into its own timeout; and the run's scenarios keep one version.
        self._unanswered: dict[tuple[str, int | None, str | None], LangfuseUnavailableError] = {}
        self._lock = threading.Lock()

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt:
        local = self._library.get(name, version=version, label=label)
        key = (name, version, label)
        with self._lock:
            unanswered = self._unanswered.get(key)
        if unanswered is not None:
            self._on_fallback(local.ref, unanswered)
            return local
        try:
            served = self._fetch(local, version, label)
        except EvaluatorError as exc:
            if isinstance(exc, LangfuseUnavailableError) and exc.status is None:
                with self._lock:
                    self._unanswered.setdefault(key, exc)
            self._on_fallback(local.ref, exc)
            return local
        mine = self._library.version(name, served.version)
        if mine is not None and not mine.same_content(served):
            self._on_differs(mine, served)
        return served
