"""One prompt version, from a local file or from Langfuse prompt management, and how it compiles.

Compiling follows Langfuse's own template rules (a variable is `{{ name }}`, whitespace trimmed), so a
file compiles to the same text locally and as its Langfuse version; unlike Langfuse, a variable left
without a value is an error here (`PromptVariableError`), never silently sent to a model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from evaluator.errors import Problem, PromptError, PromptVariableError

__all__ = ["PRODUCTION_LABEL", "ChatMessage", "Prompt"]

PRODUCTION_LABEL = "production"
_VARIABLE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """One version of one prompt, from a local file or from Langfuse prompt management."""

    name: str
    version: int
    type: Literal["text", "chat"]
    text: str = ""
    messages: tuple[ChatMessage, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    commit_message: str | None = None
    source: Literal["local", "langfuse"] = "local"
    path: Path | None = None
    link: Any = field(default=None, compare=False, repr=False)  # Langfuse prompt client, when served

    @property
    def generation_metadata(self) -> dict[str, Any]:
        """LangChain run metadata that links a generation to this prompt version in Langfuse.

        Put it on the prompt-template runnable that feeds the chat model (Langfuse's handler ignores it
        on the model call itself). Empty for a local prompt: Langfuse links only versions it served.
        """
        return {"langfuse_prompt": self.link} if self.link is not None else {}

    @property
    def ref(self) -> str:
        return f"{self.name}@v{self.version}"

    def same_content(self, other: Prompt) -> bool:
        """Type, body and config: what a generation actually receives."""
        return (
            self.type == other.type
            and self.text == other.text
            and [(m.role, m.content) for m in self.messages] == [(m.role, m.content) for m in other.messages]
            and dict(self.config) == dict(other.config)
        )

    def variables(self) -> list[str]:
        """Variable names in order of first use."""
        texts = [self.text] if self.type == "text" else [m.content for m in self.messages]
        names: dict[str, None] = {}
        for text in texts:
            names.update(dict.fromkeys(_template(text).names))
        return list(names)

    def compile_text(self, **values: object) -> str:
        """The text body with every variable filled in."""
        if self.type != "text":
            raise PromptError(
                [_problem(self, "type", "compile_text() on a chat prompt", "call compile_messages()")]
            )
        self._check_values(values)
        return _fill(self.text, values)

    def compile_messages(self, **values: object) -> list[ChatMessage]:
        """The chat messages with every variable filled in (a text prompt becomes one system message)."""
        self._check_values(values)
        if self.type == "text":
            return [ChatMessage(role="system", content=_fill(self.text, values))]
        return [ChatMessage(role=m.role, content=_fill(m.content, values)) for m in self.messages]

    def _check_values(self, values: Mapping[str, object]) -> None:
        missing = [name for name in self.variables() if name not in values]
        if missing:
            raise PromptVariableError(
                [
                    _problem(
                        self,
                        "variables",
                        f"no value for {', '.join(missing)}",
                        f"pass {', '.join(f'{m}=...' for m in missing)} when compiling {self.ref}",
                    )
                ]
            )


def _problem(prompt: Prompt, field_name: str, found: str, fix: str) -> Problem:
    return Problem(source=str(prompt.path or prompt.ref), field=field_name, found=found, fix=fix)


@dataclass(frozen=True)
class _Template:
    """A template split once: `texts[0]`, the value of `names[0]`, `texts[1]`, ... `texts[-1]`."""

    texts: tuple[str, ...]
    names: tuple[str, ...]


@functools.lru_cache(maxsize=256)
def _template(text: str) -> _Template:
    """Compiled once per distinct text, i.e. once per prompt version, not once per call (a judge
    compiles its prompt for every judgement). Keyed by the text itself, so a version served again as
    a new `Prompt` object (Langfuse prompt management) finds its compiled form all the same."""
    parts = _VARIABLE.split(text)  # the one group: [text, name, text, name, ..., text]
    return _Template(texts=tuple(parts[0::2]), names=tuple(name.strip() for name in parts[1::2]))


def _fill(template: str, values: Mapping[str, object]) -> str:
    compiled = _template(template)
    pieces = [compiled.texts[0]]
    for name, text in zip(compiled.names, compiled.texts[1:], strict=True):
        value = values.get(name)
        pieces += ("" if value is None else str(value), text)
    return "".join(pieces)
