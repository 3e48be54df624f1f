"""Log lines of the Langfuse SDK and of its span exporter that a run says itself, better, kept out of
the output, and the keys kept out of the SDK's other lines: each filter goes on its logger once, however
often it is asked for."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from evaluator._secrets import redact

__all__ = [
    "OwnPromptFetchLines",
    "RedactedLines",
    "own_prompt_fetch",
    "quiet_accounted_lines",
    "quiet_own_prompt_fetch_lines",
    "redact_sdk_lines",
]

# The span exporter's lines on a batch it will retry or gave up retrying: a run accounts for every
# span itself (what Langfuse acknowledged, what waits in the outbox for `sync`), so on a Langfuse that
# is down they would repeat that, a line per batch, amid its notes. A refusal, with its reason, stays.
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_EXPORT_OUTCOMES = ("Transient error %s", "Failed to export %s batch due to timeout")


class _AccountedExports(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_EXPORT_OUTCOMES))


# While the evaluator itself fetches a prompt (this thread): the SDK's lines on one it could not get
# are said by the run, once per prompt, with the local file it uses instead.
_own_fetch = threading.local()
_SDK_PROMPT_LINES = ("Error while fetching prompt '%s'", "Prompt '%s' not found during refresh")


class OwnPromptFetchLines(logging.Filter):
    """For the `langfuse` logger: drops the SDK's lines on a prompt the evaluator fetched and could not
    get (a run whose prompts were not pushed printed some 25). A prompt a target fetches itself keeps
    them: nothing else would say so."""

    def filter(self, record: logging.LogRecord) -> bool:
        own = getattr(_own_fetch, "active", False)
        return not (own and isinstance(record.msg, str) and record.msg.startswith(_SDK_PROMPT_LINES))


@contextmanager
def own_prompt_fetch() -> Iterator[None]:
    """Around the evaluator's own fetch of a prompt, in this thread: what `OwnPromptFetchLines` drops."""
    _own_fetch.active = True
    try:
        yield
    finally:
        _own_fetch.active = False


class RedactedLines(logging.Filter):
    """For the `langfuse` logger: the keys out of each line (`redact`), its template kept (the filters
    here tell lines by it). The SDK logs a refused request's error whole: a prompt fetch's "Error while
    fetching prompt" holds the response's headers and body, so a server, or a proxy in front of it,
    quoting the key it refused (401 "Invalid key: Basic ...") put the key in the user's terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _redacted(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {key: _redacted(value) for key, value in record.args.items()}
        elif record.args:
            record.args = tuple(_redacted(value) for value in record.args)
        return True


def _redacted(value: object) -> object:
    """`value` as it is, or its text with the keys replaced when it holds one."""
    text = str(value)
    shown = redact(text)
    return value if shown == text else shown


def redact_sdk_lines() -> None:
    """`RedactedLines` on the `langfuse` logger: wherever the evaluator connects to Langfuse."""
    _filter_once("langfuse", RedactedLines)


def quiet_own_prompt_fetch_lines() -> None:
    """`OwnPromptFetchLines` on the `langfuse` logger: wherever the evaluator fetches prompts (a run from
    a script too). It drops nothing but the SDK's lines on those fetches."""
    _filter_once("langfuse", OwnPromptFetchLines)


def quiet_accounted_lines() -> None:
    """The commands': the exporter's retry lines too (a command's run says what was delivered)."""
    _filter_once(_EXPORTER_LOGGER, _AccountedExports)
    quiet_own_prompt_fetch_lines()


def _filter_once(logger: str, kind: type[logging.Filter]) -> None:
    log = logging.getLogger(logger)
    if not any(isinstance(f, kind) for f in log.filters):
        log.addFilter(kind())
