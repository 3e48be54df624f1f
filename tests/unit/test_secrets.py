"""Keys from the environment are kept out of text the evaluator takes in from outside (_secrets.py)."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pytest

from evaluator._secrets import REDACTED, SECRET_VARIABLES, failure_text, redact
from evaluator.errors import ConfigError
from evaluator.langfuse._http import api_failure
from evaluator.results.model import EvaluatorFailure
from evaluator.run.target import load_target

ENV = {
    "LANGFUSE_SECRET_KEY": "sk-lf-canary-secret-1",
    "OPENAI_API_KEY": "sk-canary-openai-2",
    "EVALUATOR_JUDGE_API_KEY": "sk-canary-judge-3",
    "LANGFUSE_PUBLIC_KEY": "pk-lf-canary-public",  # not a secret: Langfuse shows it in its UI
}


def test_every_secret_variable_is_redacted_and_nothing_else() -> None:
    text = f"settings: {ENV}"
    shown = redact(text, ENV)
    assert all(ENV[name] not in shown for name in SECRET_VARIABLES)
    assert shown.count(REDACTED) == 3
    assert "pk-lf-canary-public" in shown and shown.startswith("settings: {'LANGFUSE_SECRET_KEY': ")


def test_a_short_placeholder_key_is_left_alone() -> None:
    """A local server's placeholder key ("x", "none") would otherwise blank ordinary words."""
    assert redact("no key set for this box", {"OPENAI_API_KEY": "x", "EVALUATOR_JUDGE_API_KEY": "none"}) == (
        "no key set for this box"
    )


def test_failure_text_of_an_exception_quoting_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    exc = RuntimeError(f"could not connect with {ENV['OPENAI_API_KEY']}")
    assert failure_text(exc) == f"RuntimeError: could not connect with {REDACTED}"


def test_an_evaluator_failure_keeps_no_key_in_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALUATOR_JUDGE_API_KEY", ENV["EVALUATOR_JUDGE_API_KEY"])
    try:
        raise ValueError(f"bad header Authorization: Bearer {ENV['EVALUATOR_JUDGE_API_KEY']}")
    except ValueError as exc:
        failure = EvaluatorFailure.of(exc)
    assert ENV["EVALUATOR_JUDGE_API_KEY"] not in str(failure.to_json())
    assert failure.message == f"bad header Authorization: Bearer {REDACTED}"


def test_a_target_module_failing_on_import_with_a_key_in_its_message_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV["OPENAI_API_KEY"])
    name = f"reads_key_{uuid.uuid4().hex}"
    code = "import os\nraise ValueError('key refused: ' + os.environ['OPENAI_API_KEY'])\n"
    (tmp_path / f"{name}.py").write_text(code)
    with pytest.raises(ConfigError) as info:
        load_target(f"{name}:run", base_dir=tmp_path, name="demo")
    assert f"ValueError: key refused: {REDACTED}" in str(info.value)
    assert ENV["OPENAI_API_KEY"] not in str(info.value)


def test_langfuse_s_basic_credentials_are_redacted_as_the_keys_are() -> None:
    """A proxy's error page echoing the request's `Authorization: Basic ...` holds the secret key in
    base64 (public:secret): it decodes from there, so it is redacted too."""
    env = {"LANGFUSE_PUBLIC_KEY": "pk-lf-canary-public", "LANGFUSE_SECRET_KEY": "sk-lf-canary-secret-1"}
    token = base64.b64encode(b"pk-lf-canary-public:sk-lf-canary-secret-1").decode()
    assert redact(f"502 Bad Gateway (Authorization: Basic {token})", env) == (
        f"502 Bad Gateway (Authorization: Basic {REDACTED})"
    )


def test_a_key_given_in_code_is_redacted_when_named() -> None:
    assert redact("Invalid key: sk-given-in-code-42", {}, also=["sk-given-in-code-42"]) == (
        f"Invalid key: {REDACTED}"
    )
    assert redact("key x is refused", {}, also=["x"]) == "key x is refused"  # a placeholder, as above


def test_langfuse_s_error_page_quoting_the_keys_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", ENV["LANGFUSE_PUBLIC_KEY"])
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", ENV["LANGFUSE_SECRET_KEY"])
    token = base64.b64encode(f"{ENV['LANGFUSE_PUBLIC_KEY']}:{ENV['LANGFUSE_SECRET_KEY']}".encode()).decode()
    secret = ENV["LANGFUSE_SECRET_KEY"]
    body = f"upstream failed; request headers: Authorization: Basic {token}; x-secret: {secret}"
    error = api_failure("posting scores", 502, {}, body, "https://lf.example")
    assert token not in str(error) and ENV["LANGFUSE_SECRET_KEY"] not in str(error)
    assert str(error).endswith(f"Authorization: Basic {REDACTED}; x-secret: {REDACTED}")
