"""Where Langfuse is and the keys for it: from the environment only, never from files in the repo."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import SecretStr

from evaluator.config import check_base_url, shown_url
from evaluator.errors import ConfigError

__all__ = ["DEFAULT_BASE_URL", "EMBEDDED_PUBLIC_KEY", "LangfuseSettings", "check_sdk_environment"]

DEFAULT_BASE_URL = "https://cloud.langfuse.com"
# The key an embedded run puts in LANGFUSE_* while it runs (tracing.Tracing.process_default), so that
# clients a target makes without keys record into its capture: never a Langfuse to connect to.
EMBEDDED_PUBLIC_KEY = "pk-lf-evaluator-embedded"
_SPAN_QUEUE = "OTEL_BSP_MAX_QUEUE_SIZE"  # OpenTelemetry's span queue, which an export batch must fit in
_DEFAULT_SPAN_QUEUE = 2048  # its default, as OpenTelemetry takes it when the variable is unset or bad


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
        the two is set, when LANGFUSE_BASE_URL (or LANGFUSE_HOST) is no http:// or https:// URL, or when
        a setting the SDK reads is bad (`check_sdk_environment`)."""
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
        variable = "LANGFUSE_BASE_URL" if env.get("LANGFUSE_BASE_URL") else "LANGFUSE_HOST"
        base_url = check_base_url(variable, env.get(variable) or DEFAULT_BASE_URL, example=DEFAULT_BASE_URL)
        parts = urlsplit(base_url)
        if "@" in parts.netloc:  # a user:password: Langfuse's basic auth is the keys, never it
            raise ConfigError(
                f'{variable}="{shown_url(base_url)}" holds a user name or password; Langfuse takes its '
                f'keys (LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY) instead. Fix: remove "user:password@" '
                f"from {variable}."
            )
        if parts.query or parts.fragment:  # the SDK would put its API paths after it: every call a 404
            raise ConfigError(
                f'{variable}="{shown_url(base_url)}" has a query or fragment; Langfuse\'s API is at the '
                "base URL alone (its keys are LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY). Fix: remove "
                f'everything from the "?" or "#" in {variable}.'
            )
        check_sdk_environment(env)
        return cls(
            public_key=public,
            secret_key=SecretStr(secret),
            base_url=base_url.rstrip("/"),
            timeout_seconds=int(env.get("LANGFUSE_TIMEOUT", "10")),
        )

    @property
    def destination(self) -> str:
        """Where this project's scores and spans go: the base URL and the public key (not a secret)."""
        return f"{self.base_url} {self.public_key}"

    def __repr__(self) -> str:
        return f"LangfuseSettings(base_url={self.base_url!r}, public_key={self.public_key[:8]!r}...)"


def check_sdk_environment(env: Mapping[str, str] | None = None) -> None:
    """The SDK's own settings in the environment (LANGFUSE_TIMEOUT, LANGFUSE_FLUSH_AT,
    LANGFUSE_FLUSH_INTERVAL, LANGFUSE_SAMPLE_RATE), checked before a client is made, embedded or
    connected: the SDK parses them itself with a bare int() or float(), and it and OpenTelemetry refuse
    a value out of range, each with a traceback. ConfigError names every bad one, with the fix."""
    env = os.environ if env is None else env
    wrong = [
        f'{name}="{env[name]}" is not {what}. Fix: {fix}.'
        for name, (valid, what, fix) in _sdk_settings(env).items()
        if name in env and not valid(env[name])
    ]
    if wrong:
        raise ConfigError("\n".join(wrong))


Rule = tuple[Callable[[str], bool], str, str]  # (valid, what a valid value is, the fix)


def _sdk_settings(env: Mapping[str, str]) -> dict[str, Rule]:
    """Each setting the SDK reads from the environment, with the values it (and OpenTelemetry) take."""
    queue = _span_queue(env)
    return {
        "LANGFUSE_TIMEOUT": (_whole_seconds, "a whole number of seconds", "e.g. 10"),
        "LANGFUSE_FLUSH_AT": (
            lambda value: 1 <= (_whole(value) or 0) <= queue,
            f"a whole number of spans from 1 to {queue} (spans per export batch; at most {_SPAN_QUEUE})",
            "e.g. 128, or unset it",
        ),
        "LANGFUSE_FLUSH_INTERVAL": (
            lambda value: (_number(value) or 0) > 0,
            "a number of seconds above 0 (between span exports)",
            "e.g. 5, or unset it",
        ),
        "LANGFUSE_SAMPLE_RATE": (
            _rate,
            "a number from 0 to 1 (the share of traces kept)",
            "e.g. 1, or unset it",
        ),
    }


def _span_queue(env: Mapping[str, str]) -> int:
    """OpenTelemetry's span queue size, as it reads it (its default for a value it cannot read)."""
    size = _whole(env.get(_SPAN_QUEUE, ""))
    return size if size is not None and size > 0 else _DEFAULT_SPAN_QUEUE


def _whole_seconds(value: str) -> bool:
    return value.isdigit() and int(value) >= 1


def _rate(value: str) -> bool:
    number = _number(value)
    return number is not None and 0 <= number <= 1


def _whole(value: str) -> int | None:
    """`value` as the SDK's int() reads it; None when it is no whole number."""
    try:
        return int(value)
    except ValueError:
        return None


def _number(value: str) -> float | None:
    """`value` as the SDK's float() reads it; None when it is no finite number (nan, inf)."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
