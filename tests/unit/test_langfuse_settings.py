"""Where Langfuse is, the keys, and the SDK's own settings in the environment: a bad value is bad input
with its fix, never the SDK's traceback."""

from __future__ import annotations

import pytest

from evaluator.errors import ConfigError
from evaluator.langfuse import LangfuseSettings
from evaluator.langfuse.settings import check_sdk_environment

KEYS = {"LANGFUSE_PUBLIC_KEY": "pk-lf-1", "LANGFUSE_SECRET_KEY": "sk-lf-1"}


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("LANGFUSE_FLUSH_AT", "0", "a whole number of spans from 1 to 2048"),
        ("LANGFUSE_FLUSH_AT", "-1", "a whole number of spans from 1 to 2048"),
        ("LANGFUSE_FLUSH_AT", "abc", "a whole number of spans from 1 to 2048"),
        ("LANGFUSE_FLUSH_AT", "1.5", "a whole number of spans from 1 to 2048"),
        ("LANGFUSE_FLUSH_AT", "2049", "a whole number of spans from 1 to 2048"),  # OpenTelemetry's queue
        ("LANGFUSE_FLUSH_INTERVAL", "abc", "a number of seconds above 0"),
        ("LANGFUSE_FLUSH_INTERVAL", "0", "a number of seconds above 0"),
        ("LANGFUSE_FLUSH_INTERVAL", "inf", "a number of seconds above 0"),
        ("LANGFUSE_SAMPLE_RATE", "abc", "a number from 0 to 1"),
        ("LANGFUSE_SAMPLE_RATE", "1.5", "a number from 0 to 1"),
        ("LANGFUSE_SAMPLE_RATE", "nan", "a number from 0 to 1"),
        ("LANGFUSE_TIMEOUT", "abc", "a whole number of seconds"),
    ],
)
def test_a_bad_sdk_setting_is_bad_input_naming_it_and_the_fix(name: str, value: str, what: str) -> None:
    with pytest.raises(ConfigError) as info:
        LangfuseSettings.from_env({**KEYS, name: value})
    assert str(info.value).startswith(f'{name}="{value}" is not {what}') and ". Fix: e.g. " in str(info.value)
    with pytest.raises(ConfigError, match=name):  # embedded too: the SDK reads them without keys
        check_sdk_environment({name: value})


def test_every_bad_sdk_setting_is_named_at_once_and_good_ones_pass() -> None:
    with pytest.raises(ConfigError) as info:
        check_sdk_environment({"LANGFUSE_FLUSH_AT": "0", "LANGFUSE_SAMPLE_RATE": "x"})
    assert [line.split("=")[0] for line in str(info.value).splitlines()] == [
        "LANGFUSE_FLUSH_AT",
        "LANGFUSE_SAMPLE_RATE",
    ]
    good = {"LANGFUSE_FLUSH_AT": "2048", "LANGFUSE_FLUSH_INTERVAL": "0.5", "LANGFUSE_SAMPLE_RATE": "0"}
    check_sdk_environment({**good, "LANGFUSE_TIMEOUT": "3"})
    assert LangfuseSettings.from_env({**KEYS, **good}) is not None
    check_sdk_environment({"LANGFUSE_FLUSH_AT": "4096", "OTEL_BSP_MAX_QUEUE_SIZE": "4096"})  # a larger queue


@pytest.mark.parametrize("variable", ["LANGFUSE_BASE_URL", "LANGFUSE_HOST"])
def test_a_base_url_without_its_scheme_is_bad_input_not_an_unreachable_langfuse(variable: str) -> None:
    with pytest.raises(ConfigError) as info:
        LangfuseSettings.from_env({**KEYS, variable: "127.0.0.1:18301"})
    assert str(info.value) == (
        f'{variable}="127.0.0.1:18301" is not an http:// or https:// URL with a host. Fix: write the scheme '
        f"too: {variable}=http://127.0.0.1:18301 (or https:// where the server has TLS)."
    )
    settings = LangfuseSettings.from_env({**KEYS, variable: "http://127.0.0.1:18301/"})
    assert settings is not None and settings.base_url == "http://127.0.0.1:18301"


def test_a_user_and_password_in_the_langfuse_url_is_bad_input_never_shown() -> None:
    with pytest.raises(ConfigError) as info:
        LangfuseSettings.from_env({**KEYS, "LANGFUSE_BASE_URL": "https://me:URL-SECRET@langfuse.example.com"})
    assert str(info.value) == (
        'LANGFUSE_BASE_URL="https://***@langfuse.example.com" holds a user name or password; Langfuse takes '
        'its keys (LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY) instead. Fix: remove "user:password@" from '
        "LANGFUSE_BASE_URL."
    )


@pytest.mark.parametrize(
    "url", ["https://langfuse.example.com/?token=QSECRET", "https://langfuse.example.com#x"]
)
def test_a_query_or_fragment_in_the_langfuse_url_is_bad_input_its_credential_never_shown(url: str) -> None:
    """Taken before, it was shown in every trace URL of the summary and stored with each score's
    destination in the outbox, and the SDK's calls went to `...?token=...//api/public/...`: 404s."""
    with pytest.raises(ConfigError) as info:
        LangfuseSettings.from_env({**KEYS, "LANGFUSE_BASE_URL": url})
    assert "QSECRET" not in str(info.value)
    assert str(info.value).startswith(f'LANGFUSE_BASE_URL="{url.replace("QSECRET", "***")}" has a query or')
    assert str(info.value).endswith('Fix: remove everything from the "?" or "#" in LANGFUSE_BASE_URL.')
