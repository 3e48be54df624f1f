"""The configuration's view of the environment: base URLs that are no http:// or https:// URL are bad
input naming the variable, what was found and the fix (a user:password in them never shown); and the
file's own bad input (its encoding, timeouts no wait can take)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evaluator.config import Config, Settings, check_base_url, load_config, shown_url
from evaluator.errors import ConfigError


def _config() -> Config:
    return Config(settings=Settings(), base_dir=Path.cwd(), source=None)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:18401/v1", "https://api.openai.com/v1", "http://localhost", "http://[::1]:8080"]
)
def test_an_http_or_https_url_with_a_host_is_taken_as_it_is(url: str) -> None:
    assert check_base_url("X_URL", url, example="https://example.com") == url


def test_a_base_url_without_its_scheme_is_bad_input_with_the_url_it_meant() -> None:
    with pytest.raises(ConfigError) as info:
        check_base_url("X_URL", "127.0.0.1:18301", example="https://example.com")
    assert str(info.value) == (
        'X_URL="127.0.0.1:18301" is not an http:// or https:// URL with a host. Fix: write the scheme too: '
        "X_URL=http://127.0.0.1:18301 (or https:// where the server has TLS)."
    )


@pytest.mark.parametrize("url", ["ftp://host", "http://", "http:/host", "http://[::1"])
def test_a_base_url_with_another_scheme_or_no_host_is_bad_input_with_an_example(url: str) -> None:
    with pytest.raises(
        ConfigError, match=r"is not an http:// or https:// URL with a host\. Fix: give the whole"
    ):
        check_base_url("X_URL", url, example="https://example.com")


def test_a_password_in_a_bad_base_url_is_not_shown() -> None:
    for url in ("u:SECRET@127.0.0.1:1", "ftp://u:SECRET@host"):
        with pytest.raises(ConfigError) as info:
            check_base_url("X_URL", url, example="https://example.com")
        assert "SECRET" not in str(info.value) and "***@" in str(info.value)


def test_a_password_holding_an_at_sign_is_never_shown_in_part() -> None:
    assert shown_url("https://user:p@ss@host:8080/v1") == "https://***@host:8080/v1"
    assert shown_url("https://host/v1/models@latest") == "https://host/v1/models@latest"  # no credentials


@pytest.mark.parametrize(
    "url", ["https://user:pa/ss@host/v1", "https://user:pa?ss@host", "https://u:pa#ss@host"]
)
def test_a_password_with_a_raw_slash_question_mark_or_hash_is_bad_input_never_shown(url: str) -> None:
    # the authority ends at the raw character: "user:pa" would be taken for a host and a port
    with pytest.raises(ConfigError) as info:
        check_base_url("X_URL", url, example="https://example.com")
    assert str(info.value).startswith('X_URL="https://***@host') and ":pa" not in str(info.value)
    assert str(info.value).endswith(
        "Fix: percent-encode the user and password in it (a / ? # or @ in them as %2F %3F %23 %40)."
    )


def _error(call: Callable[[], object]) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    return str(info.value)


def test_the_judge_and_llm_endpoints_name_the_variable_their_base_url_came_from() -> None:
    config = _config()
    own = {"EVALUATOR_JUDGE_BASE_URL": "127.0.0.1:18401/v1", "OPENAI_BASE_URL": "http://openai.test/v1"}
    assert _error(lambda: config.judge_endpoint(own)).startswith(
        'EVALUATOR_JUDGE_BASE_URL="127.0.0.1:18401/v1"'
    )
    openai = {"OPENAI_BASE_URL": "localhost:11434/v1"}
    assert _error(lambda: config.judge_endpoint(openai)).startswith('OPENAI_BASE_URL="localhost:11434/v1"')
    assert _error(lambda: config.llm_endpoint(openai)).startswith('OPENAI_BASE_URL="localhost:11434/v1"')
    endpoint = config.judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": "http://127.0.0.1:18401/v1"})
    assert endpoint is not None and endpoint.base_url == "http://127.0.0.1:18401/v1"
    assert config.llm_endpoint({"OPENAI_API_KEY": "sk-1"}) is not None  # no base URL: OpenAI's


@pytest.mark.parametrize(
    "url",
    [
        "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        "https://res.cognitiveservices.azure.com/openai/deployments/gpt-4o",
    ],
)
def test_an_azure_deployment_url_is_bad_input_naming_the_v1_api(url: str) -> None:
    """The Azure portal's target URI: the client would post to `...?api-version=...chat/completions`."""
    message = _error(lambda: _config().judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": url}))
    assert message.startswith(f'EVALUATOR_JUDGE_BASE_URL="{url}" is an Azure OpenAI deployment\'s URL')
    host = url.split("/")[2]
    assert (
        f"Fix: use the resource's v1 API, EVALUATOR_JUDGE_BASE_URL=https://{host}/openai/v1, with" in message
    )
    assert "the deployment name as the model ([judge] model" in message


def test_a_base_url_with_a_query_or_a_request_path_is_bad_input_with_the_base_url_meant() -> None:
    config = _config()
    query = {"OPENAI_BASE_URL": "http://u:SECRET@127.0.0.1:8000/v1?token=t"}
    assert _error(lambda: config.llm_endpoint(query)).endswith(
        "Fix: give the base URL alone: OPENAI_BASE_URL=http://***@127.0.0.1:8000/v1."
    )
    assert "SECRET" not in _error(lambda: config.llm_endpoint(query))
    full = {"EVALUATOR_JUDGE_BASE_URL": "http://localhost:8080/v1/chat/completions"}
    assert _error(lambda: config.judge_endpoint(full)).endswith(
        "Fix: leave /chat/completions out: EVALUATOR_JUDGE_BASE_URL=http://localhost:8080/v1."
    )


def test_the_azure_v1_api_and_other_base_urls_with_a_path_are_taken() -> None:
    for url in ("https://res.openai.azure.com/openai/v1", "https://host/openai/v1/", "http://h:8000/v1"):
        endpoint = _config().judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": url})
        assert endpoint is not None and endpoint.base_url == url


def test_only_what_the_client_cannot_call_is_refused_and_each_fix_is_one_the_next_run_takes() -> None:
    """LiteLLM's Azure-compatible route (no query) is a path the client calls as it is; a fragment is
    dropped by the client; a query's fix also leaves /chat/completions out (else the next run refuses
    it again); the judges borrowing OPENAI_BASE_URL are told they can have an endpoint of their own."""
    config = _config()
    for url in ("http://litellm:4000/openai/deployments/gpt-4o", "http://h:8000/v1#part"):
        endpoint = config.judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": url})
        assert endpoint is not None and endpoint.base_url == url
    both = {"EVALUATOR_JUDGE_BASE_URL": "http://h/v1/chat/completions?key=1"}
    fixed = _error(lambda: config.judge_endpoint(both)).split("EVALUATOR_JUDGE_BASE_URL=")[-1].rstrip(".")
    assert fixed == "http://h/v1"
    assert config.judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": fixed}) is not None
    borrowed = {"OPENAI_BASE_URL": "https://res.openai.azure.com/openai/deployments/gpt-4o?api-version=1"}
    assert (
        "or give the judges an endpoint of their own with EVALUATOR_JUDGE_BASE_URL (or pass --no-judge)"
        in (_error(lambda: config.judge_endpoint(borrowed)))
    )
    assert "EVALUATOR_JUDGE_BASE_URL" not in _error(lambda: config.llm_endpoint(borrowed))


@pytest.mark.parametrize(
    "key",
    [
        "run.timeout_seconds",
        "judge.timeout_seconds",
        "langfuse.flush_timeout_seconds",
        "langfuse.delivery_deadline_seconds",
        "langfuse.read_deadline_seconds",
        "langfuse.verify_deadline_seconds",
    ],
)
def test_a_timeout_or_deadline_no_wait_can_take_is_bad_input_naming_the_file_and_key(
    tmp_path: Path, key: str
) -> None:
    """`inf` (or ~300 years) made the watchdog's wait raise OverflowError: a traceback mid-run."""
    section, name = key.split(".")
    config = tmp_path / "evaluator.toml"
    for value in ("inf", "1e10"):
        config.write_text(f"[{section}]\n{name} = {value}\n")
        with pytest.raises(ConfigError) as raised:
            load_config(config)
        assert f"{config}: {key}: {float(value)!r}: Input should be less than or equal to 604800" in str(
            raised.value
        )
    config.write_text(f"[{section}]\n{name} = 604800\n")
    assert load_config(config).settings.model_dump()[section][name] == 604800


def test_a_configuration_that_is_not_utf8_is_bad_input_and_a_byte_order_mark_is_read_past(
    tmp_path: Path,
) -> None:
    """Latin-1 text raised UnicodeDecodeError (a traceback); a BOM was "invalid TOML" at line 1, column 1."""
    config = tmp_path / "evaluator.toml"
    config.write_bytes("[run]\n# café\nconcurrency = 2\n".encode("latin-1"))
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value) == (
        f"{config}: line 2: not UTF-8 text (byte 0xe9). Fix: save the file as UTF-8 (TOML files are UTF-8)."
    )
    config.write_bytes("[run]\nconcurrency = 2\n".encode("utf-8-sig"))
    assert load_config(config).settings.run.concurrency == 2


def test_a_compare_threshold_is_a_size_of_change_never_negative_nor_nan(tmp_path: Path) -> None:
    config = tmp_path / "evaluator.toml"
    config.write_text("[compare.thresholds]\nworkflow_pass_rate = -4\nlatency_ms = nan\nquality_mean = 0.2\n")
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value).splitlines() == [
        f"{config}: compare.thresholds.workflow_pass_rate: -4: Input should be greater than or equal to 0. "
        "Fix: see the configuration section of the README",
        f"{config}: compare.thresholds.latency_ms: nan: Input should be greater than or equal to 0. "
        "Fix: see the configuration section of the README",
    ]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:8000/v1?api-key=QSECRET", "http://127.0.0.1:8000/v1?api-key=***"),
        ("https://h/v1?api-version=2024-10-21&sig=QSECRET", "https://h/v1?api-version=2024-10-21&sig=***"),
        ("https://u:PSECRET@h/v1?access_token=QSECRET", "https://***@h/v1?access_token=***"),
        ("https://h/v1?api-version=2024-10-21", "https://h/v1?api-version=2024-10-21"),  # no credential
    ],
)
def test_a_credential_in_a_base_urls_query_is_never_shown(url: str, shown: str) -> None:
    assert shown_url(url) == shown
    message = _error(lambda: _config().judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": url}))
    assert "SECRET" not in message and message.startswith(f'EVALUATOR_JUDGE_BASE_URL="{shown}" is ')
    assert "SECRET" not in repr(_config().judge_endpoint({"EVALUATOR_JUDGE_BASE_URL": "http://h/v1"}))


def test_a_credential_in_the_query_of_a_base_url_without_its_scheme_is_not_shown() -> None:
    message = _error(lambda: check_base_url("X_URL", "127.0.0.1:3000?token=QSECRET", example="https://e"))
    assert message.startswith('X_URL="127.0.0.1:3000?token=***" is not an http://')
    assert "QSECRET" not in message


@pytest.mark.parametrize("value", ["[" * 3000 + "]" * 3000, "{b = " * 3000 + "1" + "}" * 3000])
def test_a_value_nested_too_deeply_is_bad_input_not_a_traceback(tmp_path: Path, value: str) -> None:
    path = tmp_path / "evaluator.toml"
    path.write_text(f"a = {value}\n")
    with pytest.raises(ConfigError, match=r"values nested too deeply to read\. Fix: nest arrays"):
        load_config(path)
