"""The verdict cache: a judgement already paid for is not paid again.

Keyed by (judge prompt name, prompt version, model, sha256 of the exact messages the judge would be
sent): change the prompt, the model, the answer, the sources or the criteria and the key changes. Only
scored judgements are kept (an unscored one is retried next time). The store (storage.Store) keeps them
across runs; `MemoryVerdictCache` is its in-memory twin.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evaluator.prompts import ChatMessage, Prompt

__all__ = ["CacheKey", "MemoryVerdictCache", "VerdictCache"]


@dataclass(frozen=True, kw_only=True)
class CacheKey:
    prompt_name: str
    prompt_version: int
    model: str
    inputs_sha256: str

    @classmethod
    def of(cls, prompt: Prompt, model: str, messages: Sequence[ChatMessage]) -> CacheKey:
        return cls(
            prompt_name=prompt.name,
            prompt_version=prompt.version,
            model=model,
            inputs_sha256=_inputs_sha256(messages),
        )


def _inputs_sha256(messages: Sequence[ChatMessage]) -> str:
    """sha256 of `json.dumps([[role, content], ...], ensure_ascii=False)`, the key's definition, with
    the first message's part hashed once per distinct message: a judge prompt's system message (its
    rubric, some kilobytes) is the same for every judgement of a version, the rest is the judged content.
    """
    if not messages:
        return hashlib.sha256(b"[]").hexdigest()
    first, *rest = messages
    digest = _opening(first.role, first.content).copy()
    for message in rest:  # json.dumps joins a list's items with ", "
        digest.update(
            (", " + json.dumps([message.role, message.content], ensure_ascii=False)).encode("utf-8")
        )
    digest.update(b"]")
    return digest.hexdigest()


@functools.lru_cache(maxsize=64)
def _opening(role: str, content: str) -> hashlib._Hash:
    """The hash state after `[` and the first message (copied, never updated in place)."""
    return hashlib.sha256(("[" + json.dumps([role, content], ensure_ascii=False)).encode("utf-8"))


class VerdictCache(Protocol):
    def cached_verdict(self, key: CacheKey) -> Mapping[str, Any] | None:
        """What `keep_verdict` kept under `key`, or None."""
        ...

    def keep_verdict(self, key: CacheKey, entry: Mapping[str, Any]) -> None: ...


class MemoryVerdictCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: dict[CacheKey, dict[str, Any]] = {}

    def cached_verdict(self, key: CacheKey) -> Mapping[str, Any] | None:
        with self._lock:
            return self.entries.get(key)

    def keep_verdict(self, key: CacheKey, entry: Mapping[str, Any]) -> None:
        with self._lock:
            self.entries[key] = dict(entry)
