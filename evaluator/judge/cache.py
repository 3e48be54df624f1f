"""The verdict cache: a judgement already paid for is not paid again.

Keyed by (judge prompt name, prompt version, model, sha256 of the exact messages the judge would be
sent): change the prompt, the model, the answer, the sources or the criteria and the key changes. Only
scored judgements are kept (an unscored one is retried next time). The store (storage.Store) keeps them
across runs; `MemoryVerdictCache` is its in-memory twin.
"""

from __future__ import annotations

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
        exact = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
        return cls(
            prompt_name=prompt.name,
            prompt_version=prompt.version,
            model=model,
            inputs_sha256=hashlib.sha256(exact.encode("utf-8")).hexdigest(),
        )


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
