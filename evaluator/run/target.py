"""The system under test: a `module:callable` named in configuration, called once per scenario.

A target is any callable `target(request: TargetRequest) -> object` (sync or async). It returns the final
answer (a string, or anything JSON-serialisable) and records its work as Langfuse observations through the
injected client: each agent an AGENT observation (`request.langfuse.start_as_current_observation(
as_type="agent", name=...)`), each tool call a TOOL observation (LangChain tools invoked with
`config={"callbacks": request.callbacks}` become one automatically). Everything it records nests below
the evaluator's root span for the scenario, so the trace is the scenario's run.

To link a model call to the Langfuse prompt version it used, put `prompt.generation_metadata` on the
prompt-template step that feeds the model (`template.with_config(metadata=...) | model`): Langfuse's
LangChain handler takes the link from there, not from the model call.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator._secrets import failure_text
from evaluator.config import CONFIG_FILE, LLMEndpoint
from evaluator.errors import ConfigError
from evaluator.prompts import Prompt, PromptSource

__all__ = ["PromptResolver", "Reply", "Target", "TargetRequest", "load_target"]


class PromptResolver:
    """Resolves the prompts a target asks for, honouring `--prompt NAME=VERSION`, and records each use.

    One resolver per scenario run, so `used` lists exactly the prompt versions that run used.
    """

    def __init__(self, source: PromptSource, pins: Mapping[str, int] | None = None) -> None:
        self._source = source
        self._pins = dict(pins or {})
        self.used: dict[str, Prompt] = {}

    def get(self, name: str) -> Prompt:
        prompt = self._source.get(name, version=self._pins.get(name))
        self.used[name] = prompt
        return prompt


@dataclass(frozen=True, kw_only=True)
class TargetRequest:
    """What a target receives for one scenario run, or for one user turn of a dialogue.

    A dialogue calls the target once per user turn, in order: `input` is the user's message, `history`
    the earlier turns as `{"role": "user" | "assistant", "content": ...}` messages (the user's and the
    target's own replies), `turn` the turn's index (0-based), and `session_id` stable for the dialogue
    run (`<run id>:<scenario id>`), for a stateful target to key its memory on (a LangGraph
    checkpointer's `thread_id`). A single-turn scenario is turn 0 with no history; its `session_id` is
    the run id (the Langfuse session its traces are in)."""

    input: str
    scenario_id: str
    run_id: str
    langfuse: Any  # the injected `langfuse.Langfuse` client (typed loosely: the library's seam)
    prompts: PromptResolver
    llm: LLMEndpoint | None = None  # None: the target should use its offline model
    metadata: Mapping[str, Any] = field(default_factory=dict)
    callback_factory: Callable[[], list[Any]] = field(default=list, repr=False)
    history: tuple[Mapping[str, str], ...] = ()
    turn: int = 0
    session_id: str = ""

    @property
    def callbacks(self) -> list[Any]:
        """LangChain handlers recording runs in this trace, made on first use (so a target that never
        asks does not load LangChain's tracing)."""
        return self.callback_factory()


@dataclass(frozen=True, init=False)
class Reply:
    """What a target that does not trace its state returns for a dialogue turn: its reply (`output`,
    what a plain return value would be) and its state after the turn (`state`: any of `intent`,
    `domain`, `acts`, `slots`, `action`). A key given here wins over the same key read from the trace.

        return evaluator.Reply("Which day?", state={"intent": "book_hotel", "action": "request"})
    """

    output: object
    state: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, output: object, state: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "output", output)
        object.__setattr__(self, "state", dict(state or {}))


Target = Callable[[TargetRequest], object]


def load_target(spec: str, *, base_dir: Path, name: str = "") -> Target:
    """Import `module:callable`; `base_dir` (the configuration's folder) is importable, like a cwd."""
    label = f'target "{name}" ([targets.{name}] entry in {CONFIG_FILE})' if name else "target"
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f'{label}: "{spec}" is not of the form module:callable. '
            'Fix: write it like "demo_agents.research:run".'
        )
    if str(base_dir) not in sys.path:
        sys.path.insert(0, str(base_dir))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if missing and not _names_the_module(missing, module_name):  # the target's module imports it
            raise ConfigError(
                f'{label}: module "{module_name}" imports "{missing}", which is not installed ({exc}). '
                f'Fix: install the package that provides "{missing}" in the environment the evaluator '
                "runs in (its virtualenv)."
            ) from None
        raise ConfigError(
            f'{label}: cannot import module "{module_name}" ({exc}). '
            f"Fix: check the module path, relative to {base_dir}."
        ) from None
    except Exception as exc:  # noqa: BLE001 - the module itself is broken: say where, not a traceback
        raise ConfigError(
            f'{label}: importing "{module_name}" failed: {failure_text(exc)}{_failing_line(exc)}. '
            "Fix: correct the target module."
        ) from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(
                f'{label}: module "{module_name}" has no attribute "{attr}". '
                "Fix: name a callable defined in that module."
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f'{label}: "{spec}" is not callable. Fix: name a function or class.')
    return obj


def _names_the_module(missing: str, module_name: str) -> bool:
    """Whether the module not found is the target's module or a package on its path (`a` or `a.b` of
    `a.b.c`): the path is wrong. Any other is one the target's module imports."""
    return module_name == missing or module_name.startswith(missing + ".")


def _failing_line(exc: BaseException) -> str:
    """' (file.py, line N)' for the innermost frame of a failed import, or ''."""
    if isinstance(exc, SyntaxError):
        return f" ({exc.filename}, line {exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    return f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
