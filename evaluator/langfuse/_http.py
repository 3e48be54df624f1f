"""Calling Langfuse's API through the SDK's client, failing loudly: every Langfuse or network failure
becomes `LangfuseAuthError` (wrong keys: retrying cannot help) or `LangfuseUnavailableError` (network,
5xx, 429 with its Retry-After), never a log line and a drop. Retries are the caller's (counted, with a
deadline), so the SDK's own are switched off."""

from __future__ import annotations

import base64
import functools
import ssl
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
from langfuse import Langfuse
from langfuse.api.core.api_error import ApiError

from evaluator._reply_bound import chunks_within, reply_deadline, stamp_start
from evaluator._secrets import redact
from evaluator._time import Deadline
from evaluator._tls import shared_context
from evaluator.errors import LangfuseAuthError, LangfuseUnavailableError
from evaluator.langfuse.settings import LangfuseSettings

_NO_SDK_RETRIES: Any = {"max_retries": 0}


class LangfuseApi:
    """The SDK client of one connected project, with our error translation."""

    def __init__(self, client: Langfuse, settings: LangfuseSettings) -> None:
        self.client = client
        self.settings = settings
        # Plain requests share one keep-alive connection pool (httpx.Client is thread-safe).
        self._http = bounded_client(
            base_url=settings.base_url,
            auth=(settings.public_key, settings.secret_key.get_secret_value()),
            timeout=settings.timeout_seconds,
        )

    @property
    def base_url(self) -> str:
        return self.settings.base_url

    @property
    def timeout(self) -> int:
        return self.settings.timeout_seconds

    def call(
        self,
        what: str,
        call: Callable[..., Any],
        *args: Any,
        deadline: Deadline | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """One API call without the SDK's own retries, translating failures, within `timeout` (default
        LANGFUSE_TIMEOUT). With a `deadline`, the request may take only the time left (none is made
        once it passed)."""
        timeout = self.timeout if timeout is None else timeout
        if deadline is not None:
            if deadline.passed:
                raise LangfuseUnavailableError(f"not {what}: the {deadline.seconds:g} s deadline passed")
            timeout = deadline.cap(timeout)
        options = {**_NO_SDK_RETRIES, "timeout_in_seconds": timeout}
        return self.translated(what, call, *args, request_options=options, **kwargs)

    def translated(self, what: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`call(...)`, turning every Langfuse or network failure into one of our two exceptions."""
        try:
            return call(*args, **kwargs)
        except ApiError as exc:
            raise api_failure(what, exc.status_code, exc.headers, exc.body, self.base_url) from None
        except httpx.HTTPError as exc:
            raise self.unreachable(what, exc) from None

    def unreachable(self, what: str, exc: Exception) -> LangfuseUnavailableError:
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            # A read (GET) changes nothing: only a request that writes may have been taken meanwhile.
            writes = _method(exc) not in ("GET", "HEAD")
            taken = "; it may have taken the request" if writes else ""
            return LangfuseUnavailableError(
                f"Langfuse at {self.base_url} did not answer in time ({what}){taken}", timed_out=True
            )
        return LangfuseUnavailableError(
            f"Langfuse at {self.base_url} is unreachable ({what}: {type(exc).__name__}: {exc})"
        )

    def timeout_for(self, deadline: Deadline | None, attempt: int, what: str) -> float:
        """The request timeout: LANGFUSE_TIMEOUT, doubled on each retry (a slow server gets time to
        answer instead of the same body again), never past the deadline (none left: no request)."""
        timeout = float(self.timeout * 2 ** (attempt - 1))
        if deadline is None:
            return timeout
        if deadline.passed:
            raise LangfuseUnavailableError(f"not {what}: the {deadline.seconds:g} s deadline passed")
        return deadline.cap(timeout)

    def http(
        self,
        method: str,
        path: str,
        what: str,
        *,
        deadline: Deadline | None = None,
        attempt: int = 1,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """A plain HTTP request with Basic auth, for endpoints the SDK's client lacks and for the hot
        path (posting scores: the SDK's request encoding costs more CPU than the request). An answer
        of 401/403, 429 or >= 500 raises; other statuses are the caller's to read. A `timeout` given
        replaces the one `timeout_for` would give."""
        if timeout is None:
            timeout = self.timeout_for(deadline, attempt, what)
        try:
            response = self._http.request(method, path, timeout=timeout, **kwargs)
        except httpx.HTTPError as exc:
            raise self.unreachable(what, exc) from None
        if response.status_code in (401, 403, 429) or response.status_code >= 500:
            raise api_failure(what, response.status_code, response.headers, response.text, self.base_url)
        return response

    def close(self) -> None:
        self._http.close()


def _method(exc: Exception) -> str | None:
    """The HTTP method of the request an httpx error is about (None: not known)."""
    try:
        return exc.request.method if isinstance(exc, httpx.RequestError) else None
    except RuntimeError:  # raised outside a request: httpx has none to give
        return None


def bounded_client(**options: Any) -> httpx.Client:
    """An httpx client (the process's TLS context) whose request timeout bounds each whole reply, not
    each read: httpx's read timeout starts again at every byte, so a Langfuse (or a proxy before it)
    that sends its headers and then a byte now and then would hold a request, and the deadline of
    every step waiting on it, for ever. The reply then fails as a timeout (`httpx.ReadTimeout`)."""
    hooks: dict[str, list[Callable[..., Any]]] = {"request": [stamp_start], "response": [_bound_whole_reply]}
    return httpx.Client(verify=tls_context(), event_hooks=hooks, **options)


def _bound_whole_reply(response: httpx.Response) -> None:
    if (deadline := reply_deadline(response)) is not None:
        response.stream = _WholeReplyBound(response.stream, *deadline)


class _WholeReplyBound(httpx.SyncByteStream):
    """The reply's body, cut off (`httpx.ReadTimeout`) once the request has taken its timeout."""

    def __init__(self, stream: Any, ends: float, seconds: float) -> None:
        self._stream, self._ends, self._seconds = stream, ends, seconds

    def __iter__(self) -> Iterator[bytes]:
        return chunks_within(self._stream, self._ends, self._seconds, httpx.ReadTimeout)

    def close(self) -> None:
        self._stream.close()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings httpx would make for each client (the CA bundle, or SSL_CERT_FILE and
    SSL_CERT_DIR), made once per process for the API's client and the span exporter's
    (otlp_transport), and shared with the judge's when the environment names the trust store."""
    return shared_context(httpx.create_ssl_context)


def api_failure(
    what: str, status: int | None, headers: Mapping[str, str] | None, body: object, base_url: str
) -> LangfuseAuthError | LangfuseUnavailableError:
    status = status or 0
    if status in (401, 403):
        return LangfuseAuthError(
            f"Langfuse at {base_url} rejected the API keys (HTTP {status}) while {what}. Fix: check "
            "LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL (keys belong to one "
            "project and one region)."
        )
    return LangfuseUnavailableError(
        f"Langfuse at {base_url} answered HTTP {status} while {what}: {redact(str(body))[:300]}",
        status=status,
        retry_after=retry_after(headers or {}),
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def otlp_endpoint(settings: LangfuseSettings) -> str:
    return f"{settings.base_url}/api/public/otel/v1/traces"


def otlp_headers(settings: LangfuseSettings) -> dict[str, str]:
    """What the SDK's own exporter sends: Basic auth, and ingestion version 4 for real-time processing."""
    token = base64.b64encode(f"{settings.public_key}:{settings.secret_key.get_secret_value()}".encode())
    return {
        "Authorization": f"Basic {token.decode('ascii')}",
        "x-langfuse-ingestion-version": "4",
        "x-langfuse-public-key": settings.public_key,
    }
