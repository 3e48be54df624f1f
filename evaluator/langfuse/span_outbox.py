"""Spans the SDK could not deliver are kept, not dropped.

The Langfuse SDK's OTLP exporter retries a span batch for a few seconds and then drops it, with only a
log line to show for it. `KeepingExporter` wraps that exporter: a batch whose export failed is encoded
as the exact OTLP request body and handed to `keep` (the store), so `evaluator sync` can send it once
Langfuse is back. Re-sending is safe: Langfuse merges observations by id.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Sequence

import httpx
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from evaluator._time import Deadline
from evaluator.errors import LangfuseUnavailableError
from evaluator.langfuse._http import LangfuseApi, api_failure, otlp_endpoint, otlp_headers

Keep = Callable[[bytes, int], None]  # (OTLP request body, number of spans)


class KeepingExporter(SpanExporter):
    """Delegates to `inner`; keeps every batch `inner` failed to export. `keep` can be re-pointed (the
    SDK reuses one exporter per public key for the whole process)."""

    def __init__(self, inner: SpanExporter, keep: Keep | None = None) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._keep = keep

    def keep_with(self, keep: Keep | None) -> None:
        with self._lock:
            self._keep = keep

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._inner.export(spans)
        except Exception:  # noqa: BLE001 - an exporter that raises has failed all the same
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            with self._lock:
                keep = self._keep
            if keep is not None:
                keep(encode_spans(spans).SerializeToString(), len(spans))
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class SpanResender:
    """Posts kept OTLP request bodies again (the `SpanSender` role of storage/delivery.py)."""

    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def resend_spans(self, payload: bytes, *, deadline: Deadline | None = None) -> None:
        """Post one kept OTLP request body; raise our exceptions on failure."""
        settings = self._api.settings
        what = "re-sending spans"
        if deadline is not None and deadline.passed:
            raise LangfuseUnavailableError(f"not {what}: the {deadline.seconds:g} s deadline passed")
        timeout = deadline.cap(self._api.timeout) if deadline is not None else self._api.timeout
        headers = {
            **otlp_headers(settings),
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
        }
        try:
            response = httpx.post(
                otlp_endpoint(settings), content=gzip.compress(payload), headers=headers, timeout=timeout
            )
        except httpx.HTTPError as exc:
            raise self._api.unreachable(what, exc) from None
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
