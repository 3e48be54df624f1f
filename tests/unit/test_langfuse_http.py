"""The Langfuse API client's plain requests (langfuse/_http.py): what a request that got no answer in
time says."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from pydantic import SecretStr

from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi
from evaluator.langfuse.settings import LangfuseSettings

BASE_URL = "http://langfuse.test"


def _api() -> LangfuseApi:
    """Every request times out, as one Langfuse took and did not answer in time."""

    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no answer", request=request)

    settings = LangfuseSettings(
        public_key="pk-lf-test", secret_key=SecretStr("sk-lf-test"), base_url=BASE_URL
    )
    api = LangfuseApi(client=cast(Any, None), settings=settings)
    api._http = httpx.Client(base_url=BASE_URL, transport=httpx.MockTransport(answer))
    return api


def test_a_read_that_timed_out_does_not_say_langfuse_may_have_taken_it() -> None:
    """A GET changes nothing in Langfuse; "it may have taken the request" is said of a write only."""
    api = _api()
    with pytest.raises(LangfuseUnavailableError) as read:
        api.http("GET", "/api/public/projects", "reading the project")
    with pytest.raises(LangfuseUnavailableError) as write:
        api.http("POST", "/api/public/scores", "posting scores", json={})

    assert str(read.value) == f"Langfuse at {BASE_URL} did not answer in time (reading the project)"
    assert str(write.value).endswith("(posting scores); it may have taken the request")
    assert read.value.timed_out and write.value.timed_out
