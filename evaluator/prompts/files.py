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
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from evaluator._problems import validation_problems
from evaluator.errors import PromptError
from evaluator.prompts.model import ChatMessage, Prompt

__all__ = ["MAX_PROMPT_BYTES", "parse_prompt_file"]

_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.prompt$")
MAX_PROMPT_BYTES = 256 * 1024


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    type: Literal["text", "chat"] = "text"
    config: dict[str, Any] = {}
    labels: list[str] = []
    commit_message: str | None = None


def parse_prompt_file(path: Path, root: Path) -> Prompt:
    """Read one `vN.prompt` file below `root`; raise PromptError naming the file and field."""
    match = _VERSION_FILE.match(path.name)
    source = str(path)
    if not match:
        raise PromptError.one(
            source=source,
            field="file name",
            found=f'"{path.name}"',
            fix='name prompt files "v1.prompt", "v2.prompt", ...',
        )
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError.one(
            source=source,
            field="",
            found=f"cannot read the file ({exc})",
            fix="check the file is readable UTF-8 text",
        ) from None
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptError.one(
            source=source,
            field="size",
            found=f"{len(data)} bytes",
            fix=f"keep prompt files under {MAX_PROMPT_BYTES} bytes",
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
        return replace(prompt, text=body.strip("\n"))
    return replace(prompt, messages=_parse_messages(body, source))


def _split_header(text: str, source: str) -> tuple[_Header, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise PromptError.one(
            source=source,
            field="header",
            found="no opening '---' line",
            fix="start the file with a YAML header between '---' lines",
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise PromptError.one(
            source=source,
            field="header",
            found="no closing '---' line",
            fix="end the YAML header with a '---' line",
        ) from None
    try:
        raw = _safe_load("".join(lines[1:end])) or {}
        header = _Header.model_validate(raw)
    except yaml.YAMLError as exc:
        raise PromptError.one(
            source=source,
            field="header",
            found=f"invalid YAML ({exc})",
            fix="correct the YAML between the '---' lines",
        ) from None
    except ValidationError as exc:
        raise PromptError(
            validation_problems(
                exc, source=source, model=_Header, fix="see the prompt file format in the README"
            )
        ) from None
    return header, "".join(lines[end + 1 :])


# libyaml's safe loader when PyYAML has it (about ten times faster: a run reads every prompt file at
# its start), else the pure-Python one; both load plain data only.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _safe_load(text: str) -> object:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader


def _parse_messages(body: str, source: str) -> tuple[ChatMessage, ...]:
    try:
        raw = _safe_load(body)
        if not isinstance(raw, list) or not raw:
            raise ValueError("the body is not a list of messages")
        return tuple(ChatMessage.model_validate(item) for item in raw)
    except (yaml.YAMLError, ValueError, ValidationError) as exc:
        raise PromptError.one(
            source=source,
            field="body",
            found=f"not a chat message list ({exc})".replace("\n", " "),
            fix="for type: chat, write the body as a YAML list of {role: system|user|assistant, "
            "content: ...}",
        ) from None
