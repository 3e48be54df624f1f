"""Spans in and out of the outbox: which spans Langfuse acknowledged, and sending kept ones again.

The Langfuse SDK's OTLP exporter retries a span batch for a few seconds and then drops it, and its queue
drops spans on overflow, with only a log line to show for it. Every span a connected run captured is
kept in the store with its scenario's result, so nothing here has to save them: `AckingExporter` wraps
the SDK's exporter and reports, per trace, how many spans Langfuse took (`ack`), so `sync` knows which
traces to send again (`SpanResender`). Re-sending is safe: Langfuse merges observations by id.
"""

from __future__ import annotations

import gzip
import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_trace_id

from evaluator._time import Deadline
from evaluator.errors import StoreError
from evaluator.langfuse._http import LangfuseApi, api_failure, otlp_endpoint, otlp_headers
from evaluator.langfuse.span_records import to_otlp

__all__ = ["Ack", "AckingExporter", "SpanResender"]

Ack = Callable[[Mapping[str, int]], None]  # {trace id: spans Langfuse took}
_log = logging.getLogger(__name__)


class AckingExporter(SpanExporter):
    """Delegates to `inner`; after each batch Langfuse took, reports its spans per trace to `ack`, which
    can be re-pointed (the SDK reuses one exporter per public key for the whole process)."""

    def __init__(self, inner: SpanExporter, ack: Ack | None = None) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._ack = ack

    def ack_with(self, ack: Ack | None) -> None:
        with self._lock:
            self._ack = ack

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._inner.export(spans)
        except Exception:  # noqa: BLE001 - an exporter that raises has failed all the same
            result = SpanExportResult.FAILURE
        with self._lock:
            ack = self._ack
        if result is SpanExportResult.SUCCESS and ack is not None:
            try:
                ack(Counter(format_trace_id(s.context.trace_id) for s in spans if s.context is not None))
            except StoreError as exc:  # Langfuse has them: only the record of it is missing
                _log.warning(
                    "%s Langfuse took %s the store could not mark; `evaluator sync` sends their "
                    "traces again (Langfuse merges spans by id).",
                    exc,
                    "1 span" if len(spans) == 1 else f"{len(spans)} spans",
                )
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class SpanResender:
    """Posts kept OTLP request bodies again (the `SpanSender` role of storage/delivery.py)."""

    def __init__(self, api: LangfuseApi) -> None:
        self._api = api

    def resend_spans(self, payload: bytes, *, deadline: Deadline | None = None, attempt: int = 1) -> None:
        """Post one trace's kept spans (span_records) as an OTLP request; raise our exceptions on failure."""
        settings = self._api.settings
        what = "re-sending spans"
        headers = {
            **otlp_headers(settings),
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
        }
        response = self._api.http(
            "POST",
            otlp_endpoint(settings),
            what,
            deadline=deadline,
            attempt=attempt,
            content=gzip.compress(to_otlp(payload)),
            headers=headers,
        )
        if response.status_code >= 300:
            raise api_failure(what, response.status_code, response.headers, response.text, self._api.base_url)
