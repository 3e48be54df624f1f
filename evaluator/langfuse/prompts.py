"""Langfuse prompt management: the `PromptRegistry` role of `prompts push`, and serving prompts at run
time, linked, so that generations count toward their prompt version in Langfuse."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from langfuse.api.core.api_error import ApiError

from evaluator.errors import LangfuseUnavailableError, PromptError
from evaluator.langfuse._http import LangfuseApi
from evaluator.langfuse.log_lines import own_prompt_fetch, quiet_own_prompt_fetch_lines
from evaluator.prompts import ChatMessage, Prompt

__all__ = ["LangfusePrompts"]

_ROLES = ("system", "user", "assistant")


class LangfusePrompts:
    def __init__(self, api: LangfuseApi) -> None:
        self._api = api
        quiet_own_prompt_fetch_lines()  # a run from a script too, not only the commands

    def remote_prompt(self, name: str, version: int) -> Prompt | None:
        """One stored version (None when Langfuse has no such version)."""
        try:
            raw = self._api.call(
                f"reading prompt {name} v{version}",
                self._api.client.api.prompts.get,
                urllib.parse.quote(name, safe=""),
                version=version,
            )
        except LangfuseUnavailableError as exc:
            if exc.status == 404:
                return None
            raise
        return _prompt_from_api(raw, link=None)

    def latest_remote_version(self, name: str) -> int:
        """The highest version Langfuse has of `name` (0: none)."""
        listing = self._api.call(
            f"listing prompt {name}", self._api.client.api.prompts.list, name=name, limit=50
        )
        versions = [v for meta in listing.data if meta.name == name for v in meta.versions]
        return max(versions, default=0)

    def create_prompt(self, prompt: Prompt) -> int:
        """Create the next version of `prompt.name` with this content and labels; its version number."""
        body: Any = (
            prompt.text
            if prompt.type == "text"
            else [{"role": m.role, "content": m.content} for m in prompt.messages]
        )
        created = self._api.translated(
            f"creating prompt {prompt.ref}",
            self._api.client.create_prompt,
            name=prompt.name,
            prompt=body,
            labels=list(prompt.labels),
            type=prompt.type,
            config=dict(prompt.config),
            commit_message=prompt.commit_message,
        )
        return int(created.version)

    def add_labels(self, name: str, version: int, labels: Sequence[str]) -> None:
        self._api.translated(
            f"labelling prompt {name} v{version}",
            self._api.client.update_prompt,
            name=name,
            version=version,
            new_labels=list(labels),
        )

    def fetch_prompt(self, local: Prompt, version: int | None, label: str | None) -> Prompt:
        """The version Langfuse serves (by version, else by label, default `production`), linked:
        generations that use it count toward that version's metrics in Langfuse."""
        selector: dict[str, Any] = (
            {"version": version} if version is not None else {"label": label or "production"}
        )
        try:
            with own_prompt_fetch():
                served = self._api.client.get_prompt(
                    local.name,
                    type=local.type,
                    cache_ttl_seconds=60,
                    max_retries=0,
                    fetch_timeout_seconds=self._api.timeout,
                    **selector,
                )
        except Exception as exc:  # noqa: BLE001 - the SDK raises ApiError, httpx errors and others here
            status = exc.status_code if isinstance(exc, ApiError) else None
            reason = f"HTTP {status}" if status is not None else type(exc).__name__
            raise LangfuseUnavailableError(
                f"Langfuse did not serve prompt {local.name} ({_selector_text(selector)}: {reason})",
                status=status,
            ) from None
        if served.is_fallback:
            raise LangfuseUnavailableError(
                f"Langfuse did not serve prompt {local.name} ({_selector_text(selector)})"
            )
        return _prompt_from_api(served, link=served)  # its own type: Langfuse's copy may not be the file's


def _selector_text(selector: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in selector.items())


def _chat_message(message: Any, ref: str) -> ChatMessage:
    """One message of a served chat version; a placeholder or a role the evaluator cannot compile
    (Langfuse takes any role) is a PromptError naming the version."""

    def part(key: str) -> Any:
        return message.get(key) if isinstance(message, Mapping) else getattr(message, key, None)

    role, content = part("role"), part("content")
    if role in _ROLES and isinstance(content, str):
        return ChatMessage(role=role, content=content)
    found = (
        f'a placeholder message "{part("name")}"'
        if part("type") == "placeholder"
        else f"a message of role {role!r}"
    )
    raise PromptError.one(
        source=f"Langfuse prompt {ref}",
        field="prompt",
        found=f"{found}, which the evaluator cannot compile (only system, user and assistant messages)",
        fix="serve the run a version without it (pin another with --prompt, or move the label in Langfuse)",
    )


def _prompt_from_api(raw: Any, *, link: Any) -> Prompt:
    body, ref = raw.prompt, f"{raw.name}@v{raw.version}"
    return Prompt(
        name=raw.name,
        version=int(raw.version),
        type="text" if isinstance(body, str) else "chat",
        text=body if isinstance(body, str) else "",
        messages=() if isinstance(body, str) else tuple(_chat_message(m, ref) for m in body),
        config=dict(raw.config or {}),
        labels=tuple(raw.labels),
        commit_message=raw.commit_message,
        source="langfuse",
        link=link,
    )
