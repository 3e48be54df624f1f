"""What a run remembers about where it came from: the git commit (and whether the tree had uncommitted
changes), the targets it ran against, and the model names the configuration gives. Best effort: no git,
or no git checkout, is simply absent."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluator.config import Config
from evaluator.scenarios import LoadedScenario

__all__ = ["git_state", "model_names", "targets_of"]

_GIT_TIMEOUT_SECONDS = 5.0


def git_state(folder: Path) -> dict[str, Any] | None:
    """{"commit": sha, "dirty": bool} of the checkout holding `folder`; None without git or a checkout."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        commit = _git(git, folder, "rev-parse", "HEAD")
        status = _git(git, folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    if commit is None or status is None:
        return None
    return {"commit": commit, "dirty": bool(status)}


def _git(git: str, folder: Path, *args: str) -> str | None:
    done = subprocess.run(  # noqa: S603 (fixed arguments, no shell)
        [git, *args], cwd=folder, capture_output=True, text=True, timeout=_GIT_TIMEOUT_SECONDS, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def model_names(config: Config, *, llm_used: bool, judged: bool) -> dict[str, str | None]:
    """The agents' model (`[llm] model`, when targets were offered an endpoint) and the judge's
    (`[judge] model`, when the judges ran: not with `--no-judge`, nor without an endpoint)."""
    judge = getattr(config.settings, "judge", None)
    return {
        "agents": config.settings.llm.model if llm_used else None,
        "judge": getattr(judge, "model", None) if judge is not None and judged else None,
    }


def targets_of(scenarios: Sequence[LoadedScenario]) -> tuple[str, ...]:
    return tuple(sorted({s.scenario.target for s in scenarios}))
