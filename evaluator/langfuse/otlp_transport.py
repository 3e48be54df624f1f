"""The HTTP transport of the OTLP span exporter, on httpx instead of its default, `requests`.

httpx is loaded anyway (the SDK's API client and ours use it), so exporting spans loads no second HTTP
stack: `requests` and what it imports cost some 6 MB of memory per process, and each of its sessions
loads the CA bundle again, where this transport shares the process's one TLS context. The exporter
keeps its own retries, backoff, Retry-After and compression; this only sends a request.

The transport interface is OpenTelemetry's (`opentelemetry-exporter-http-transport`, still in beta, and
taken by the exporter as `_transport`): `span_exporter` falls back to the default transport when an
exporter no longer takes it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx
from opentelemetry.exporter.http.transport._base import BaseHTTPResult, BaseHTTPTransport
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from evaluator._secrets import redact
from evaluator.langfuse._http import bounded_client, otlp_endpoint, otlp_headers
from evaluator.langfuse.settings import LangfuseSettings

__all__ = ["HttpxTransport", "span_exporter"]

# What a retry may cure, as the `requests` transport counts it: the connection, not the request.
_CONNECTION_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.ProxyError, httpx.RemoteProtocolError)


@dataclass(frozen=True, slots=True)
class _Result(BaseHTTPResult):
    response: httpx.Response | None = field(default=None, hash=False, compare=False)

    def content(self) -> bytes:
        return self.response.content if self.response is not None else b""

    def headers(self) -> Mapping[str, str]:
        return self.response.headers if self.response is not None else {}


class HttpxTransport(BaseHTTPTransport):
    """One keep-alive httpx client (thread-safe) with the process's TLS context; the exporter's timeout
    bounds each whole reply (`bounded_client`)."""

    def __init__(self) -> None:
        self._client = bounded_client()

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        data: bytes | None = None,
    ) -> BaseHTTPResult:
        try:
            response = self._client.request(method, url, headers=headers, content=data, timeout=timeout)
        except httpx.HTTPError as error:
            return _Result(error=error)
        # The exporter logs a refusal's reason phrase, which the server writes: one quoting the key it
        # refused ("401 Invalid key Basic ...") would put the key in the user's terminal.
        reason = redact(response.reason_phrase)
        return _Result(status_code=response.status_code, reason=reason, response=response)

    def is_connection_error(self, exception: Exception | None) -> bool:
        return isinstance(exception, _CONNECTION_ERRORS)

    def close(self) -> None:
        self._client.close()


def span_exporter(settings: LangfuseSettings) -> OTLPSpanExporter:
    """The OTLP exporter the SDK would make for these settings (gzip, as the SDK's), on httpx."""
    make = functools.partial(
        OTLPSpanExporter,
        endpoint=otlp_endpoint(settings),
        headers=otlp_headers(settings),
        timeout=settings.timeout_seconds,
        compression=Compression.Gzip,
    )
    try:
        return make(_transport=HttpxTransport())
    except TypeError:  # pragma: no cover - a later exporter without the transport interface
        return make()
