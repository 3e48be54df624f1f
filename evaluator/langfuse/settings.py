"""Where Langfuse is and the keys for it: from the environment only, never from files in the repo."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import SecretStr

from evaluator.errors import ConfigError

__all__ = ["DEFAULT_BASE_URL", "EMBEDDED_PUBLIC_KEY", "LangfuseSettings"]

DEFAULT_BASE_URL = "https://cloud.langfuse.com"
# The key an embedded run puts in LANGFUSE_* while it runs (tracing.Tracing.process_default), so that
# clients a target makes without keys record into its capture: never a Langfuse to connect to.
EMBEDDED_PUBLIC_KEY = "pk-lf-evaluator-embedded"


@dataclass(frozen=True, kw_only=True)
class LangfuseSettings:
    public_key: str
    secret_key: SecretStr
    base_url: str = DEFAULT_BASE_URL
    timeout_seconds: int = 10

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LangfuseSettings | None:
        """None when no key is set (embedded mode), or only the key of an embedded run under way in
        this process (another run, in another thread, is embedded too); ConfigError when only one of
        the two is set."""
        env = os.environ if env is None else env
        public, secret = env.get("LANGFUSE_PUBLIC_KEY", ""), env.get("LANGFUSE_SECRET_KEY", "")
        if (not public and not secret) or public == EMBEDDED_PUBLIC_KEY:
            return None
        if not public or not secret:
            missing = "LANGFUSE_SECRET_KEY" if public else "LANGFUSE_PUBLIC_KEY"
            raise ConfigError(
                f"{missing} is not set, but the other Langfuse key is. Fix: set both "
                "(Langfuse > Settings > API keys), or neither for the embedded mode."
            )
        base_url = env.get("LANGFUSE_BASE_URL") or env.get("LANGFUSE_HOST") or DEFAULT_BASE_URL
        timeout = env.get("LANGFUSE_TIMEOUT", "10")
        if not timeout.isdigit() or int(timeout) < 1:
            raise ConfigError(f'LANGFUSE_TIMEOUT="{timeout}" is not a whole number of seconds. Fix: e.g. 10.')
        return cls(
            public_key=public,
            secret_key=SecretStr(secret),
            base_url=base_url.rstrip("/"),
            timeout_seconds=int(timeout),
        )

    @property
    def destination(self) -> str:
        """Where this project's scores and spans go: the base URL and the public key (not a secret)."""
        return f"{self.base_url} {self.public_key}"

    def __repr__(self) -> str:
        return f"LangfuseSettings(base_url={self.base_url!r}, public_key={self.public_key[:8]!r}...)"
