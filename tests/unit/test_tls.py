"""One TLS context per trust store: the environment's (SSL_CERT_FILE, SSL_CERT_DIR) is shared by both
HTTP libraries; without it each keeps its own default store."""

import ssl
from collections.abc import Callable, Iterator

import certifi
import httpx
import httpx2
import pytest

from evaluator._tls import shared_context
from evaluator.judge import openai_client
from evaluator.langfuse import _http


@pytest.fixture
def fresh_contexts() -> Iterator[None]:
    """The process's contexts made anew under the test's environment, and again after it."""
    for made_once in (_http.tls_context, openai_client._tls_context):
        made_once.cache_clear()
    yield
    for made_once in (_http.tls_context, openai_client._tls_context):
        made_once.cache_clear()


def _unexpected() -> ssl.SSLContext:
    raise AssertionError("the library's default store was loaded")


def test_the_bundle_ssl_cert_file_names_is_loaded_once_for_every_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    monkeypatch.setenv("SSL_CERT_DIR", "/nonexistent")  # as in both libraries: the file comes first
    first = shared_context(_unexpected)
    assert shared_context(_unexpected) is first
    assert first.verify_mode is ssl.CERT_REQUIRED and first.check_hostname
    assert first.cert_store_stats()["x509_ca"] > 0  # the bundle's authorities


def test_the_folder_ssl_cert_dir_names_is_the_store_without_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    first = shared_context(_unexpected)
    assert shared_context(_unexpected) is first
    assert first.verify_mode is ssl.CERT_REQUIRED and first.check_hostname


def test_without_the_settings_each_library_keeps_its_own_default_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    made = ssl.create_default_context()
    assert shared_context(lambda: made) is made


def test_the_judge_and_langfuse_share_the_environment_s_store(
    monkeypatch: pytest.MonkeyPatch, fresh_contexts: None
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert openai_client._tls_context() is _http.tls_context()


def test_without_the_settings_the_judge_and_langfuse_each_load_their_library_s(
    monkeypatch: pytest.MonkeyPatch, fresh_contexts: None
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    made: list[str] = []

    def maker(library: str) -> Callable[[], ssl.SSLContext]:
        def make() -> ssl.SSLContext:
            made.append(library)
            return ssl.create_default_context()

        return make

    monkeypatch.setattr(httpx, "create_ssl_context", maker("httpx"))
    monkeypatch.setattr(httpx2, "create_ssl_context", maker("httpx2"))
    assert openai_client._tls_context() is not _http.tls_context()
    assert openai_client._tls_context() is openai_client._tls_context()  # each made once
    assert _http.tls_context() is _http.tls_context()
    assert sorted(made) == ["httpx", "httpx2"]
