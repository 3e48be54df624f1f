"""Versioned prompt files: `prompts/<name>/v<N>.prompt`.

A file is a YAML header between `---` lines, then the body in Langfuse's `{{variable}}` syntax:

    ---
    type: text                 # or chat: then the body is a YAML list of {role, content}
    config: {temperature: 0}   # model parameters; a judge's reply schema
    labels: [production]
    commit_message: First version
    ---
    You are a research assistant. The question: {{question}}

The name defaults to the folder path below `prompts/` (`agents/research`), the version is N.
Compiling follows Langfuse's own template rules (a variable is `{{ name }}`, whitespace trimmed), so a
file compiles to the same text locally and as its Langfuse version; unlike Langfuse, a variable left
without a value is an error here (`PromptVariableError`), never silently sent to a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from evaluator.errors import EvaluatorError, Problem, PromptError, did_you_mean

PRODUCTION_LABEL = "production"
_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.prompt$")
_VARIABLE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
MAX_PROMPT_BYTES = 256 * 1024


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["system", "user", "assistant"]
    content: str


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    type: Literal["text", "chat"] = "text"
    config: dict[str, Any] = {}
    labels: list[str] = []
    commit_message: str | None = None


class PromptVariableError(PromptError):
    """A prompt was compiled without a value for one of its variables."""


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

    def variables(self) -> list[str]:
        """Variable names in order of first use."""
        texts = [self.text] if self.type == "text" else [m.content for m in self.messages]
        names: dict[str, None] = {}
        for text in texts:
            for raw in _VARIABLE.findall(text):
                names[raw.strip()] = None
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


def _fill(template: str, values: Mapping[str, object]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        value = values.get(name)
        return "" if value is None else str(value)

    return _VARIABLE.sub(replace, template)


def parse_prompt_file(path: Path, root: Path) -> Prompt:
    """Read one `vN.prompt` file below `root`; raise PromptError naming the file and field."""
    match = _VERSION_FILE.match(path.name)
    source = str(path)
    if not match:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="file name",
                    found=f'"{path.name}"',
                    fix='name prompt files "v1.prompt", "v2.prompt", ...',
                )
            ]
        )
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="",
                    found=f"cannot read the file ({exc})",
                    fix="check the file is readable UTF-8 text",
                )
            ]
        ) from None
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="size",
                    found=f"{len(data)} bytes",
                    fix=f"keep prompt files under {MAX_PROMPT_BYTES} bytes",
                )
            ]
        )
    header, body = _split_header(text, source)
    default_name = path.parent.relative_to(root).as_posix()
    prompt = Prompt(
        name=header.name or default_name,
        version=int(match.group(1)),
        type=header.type,
        config=header.config,
        labels=tuple(header.labels),
        commit_message=header.commit_message,
        path=path,
    )
    if header.type == "text":
        return _replace(prompt, text=body.strip("\n"))
    return _replace(prompt, messages=_parse_messages(body, source))


def _replace(prompt: Prompt, **changes: Any) -> Prompt:
    from dataclasses import replace

    return replace(prompt, **changes)


def _split_header(text: str, source: str) -> tuple[_Header, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="header",
                    found="no opening '---' line",
                    fix="start the file with a YAML header between '---' lines",
                )
            ]
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="header",
                    found="no closing '---' line",
                    fix="end the YAML header with a '---' line",
                )
            ]
        ) from None
    try:
        raw = yaml.safe_load("".join(lines[1:end])) or {}
        header = _Header.model_validate(raw)
    except yaml.YAMLError as exc:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="header",
                    found=f"invalid YAML ({exc})",
                    fix="correct the YAML between the '---' lines",
                )
            ]
        ) from None
    except ValidationError as exc:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field=".".join(str(p) for p in err["loc"]) or "header",
                    found=err["msg"],
                    fix="use only name, type, config, labels, commit_message",
                )
                for err in exc.errors()
            ]
        ) from None
    return header, "".join(lines[end + 1 :])


def _parse_messages(body: str, source: str) -> tuple[ChatMessage, ...]:
    try:
        raw = yaml.safe_load(body)
        if not isinstance(raw, list) or not raw:
            raise ValueError("the body is not a list of messages")
        return tuple(ChatMessage.model_validate(item) for item in raw)
    except (yaml.YAMLError, ValueError, ValidationError) as exc:
        raise PromptError(
            [
                Problem(
                    source=source,
                    field="body",
                    found=f"not a chat message list ({exc})".replace("\n", " "),
                    fix="for type: chat, write the body as a YAML list of {role: system|user|assistant, "
                    "content: ...}",
                )
            ]
        ) from None


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


class PromptLibrary:
    """All prompt files below one folder, by name and version."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prompts: dict[str, dict[int, Prompt]] = {}
        problems: list[Problem] = []
        for path in sorted(root.rglob("*.prompt")) if root.is_dir() else []:
            try:
                prompt = parse_prompt_file(path, root)
            except PromptError as exc:
                problems.extend(exc.problems)
                continue
            self._prompts.setdefault(prompt.name, {})[prompt.version] = prompt
        problems += _shared_labels(self._prompts)
        if problems:
            raise PromptError(problems)

    def names(self) -> list[str]:
        return sorted(self._prompts)

    def versions(self, name: str) -> list[Prompt]:
        return [self._prompts[name][v] for v in sorted(self._prompts.get(name, {}))]

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt:
        """A version by number, by label, or else the `production`-labelled one, else the newest.

        Raises PromptError naming the valid names, versions or labels.
        """
        versions = self._prompts.get(name)
        if not versions:
            raise PromptError(
                [
                    Problem(
                        source=str(self.root),
                        field="prompt",
                        found=f'unknown prompt "{name}"' + did_you_mean(name, self._prompts),
                        fix=f"add {self.root}/{name}/v1.prompt or name an existing prompt",
                    )
                ]
            )
        if version is not None:
            if version not in versions:
                raise PromptError(
                    [
                        Problem(
                            source=str(self.root / name),
                            field="version",
                            found=f"no version {version} of {name}",
                            fix=f"use one of {', '.join(map(str, sorted(versions)))}",
                        )
                    ]
                )
            return versions[version]
        wanted = label or PRODUCTION_LABEL
        labelled = [p for v, p in sorted(versions.items()) if wanted in p.labels]
        if labelled:
            return labelled[-1]
        if label is not None:
            known = {lab for p in versions.values() for lab in p.labels}
            raise PromptError(
                [
                    Problem(
                        source=str(self.root / name),
                        field="label",
                        found=f'no version of {name} has label "{label}"' + did_you_mean(label, known),
                        fix="add the label to a version's header or ask for a version number",
                    )
                ]
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
    ) -> None:
        self._library = library
        self._fetch = fetch
        self._on_fallback = on_fallback

    def get(self, name: str, *, version: int | None = None, label: str | None = None) -> Prompt:
        local = self._library.get(name, version=version, label=label)
        try:
            return self._fetch(local, version, label)
        except EvaluatorError as exc:
            self._on_fallback(local.ref, exc)
            return local
