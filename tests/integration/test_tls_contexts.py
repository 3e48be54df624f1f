"""How many TLS contexts a run makes: each loads the CA bundle again (about 1.5 MB and 50 ms)."""

import ssl

import pytest
from pydantic import SecretStr

from evaluator.langfuse import Tracing
from evaluator.langfuse._http import tls_context
from evaluator.langfuse.settings import LangfuseSettings
from tests.standin.langfuse_server import LangfuseStandIn


def _loaded_bundles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    loaded: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(context: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loaded.append(context)
        real(context, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return loaded


def test_a_connected_tracing_shares_one_tls_context_with_the_sdk_api_client(
    langfuse_standin: LangfuseStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    public_key, secret_key = langfuse_standin.new_keys()
    settings = LangfuseSettings(
        public_key=public_key, secret_key=SecretStr(secret_key), base_url=langfuse_standin.base_url
    )
    tls_context()  # the process's own, made once (another test may have made it already)
    loaded = _loaded_bundles(monkeypatch)
    tracing = Tracing.connected(settings)
    try:
        served = tracing.client.api.prompts.list(limit=1)  # the SDK's API client works as before
    finally:
        tracing.shutdown(5)
    assert served is not None
    # the SDK's sync API client takes the process's; its async one (never given a client) is its own
    assert len(loaded) == 1, len(loaded)
