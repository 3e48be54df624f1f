"""Log lines the commands account for themselves, kept out of their output."""

from __future__ import annotations

import logging

from evaluator.langfuse import quiet_own_prompt_fetch_lines

# The span exporter's lines on a batch it will retry or gave up retrying: a run accounts for every
# span itself (what Langfuse acknowledged, what waits in the outbox for `sync`), so on a Langfuse that
# is down they would repeat that, a line per batch, amid its notes. A refusal, with its reason, stays.
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_EXPORT_OUTCOMES = ("Transient error %s", "Failed to export %s batch due to timeout")


class _AccountedExports(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_EXPORT_OUTCOMES))


def quiet_accounted_lines() -> None:
    """Filter the exporter's retry lines and the SDK's prompt-fetch lines (the run says which prompts
    it could not get); once per logger, however often it is called."""
    log = logging.getLogger(_EXPORTER_LOGGER)
    if not any(isinstance(f, _AccountedExports) for f in log.filters):
        log.addFilter(_AccountedExports())
    quiet_own_prompt_fetch_lines()
