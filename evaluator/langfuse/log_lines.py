"""Log lines of the Langfuse SDK and of its span exporter that a run says itself, better, kept out of
the output, and the keys kept out of the SDK's other lines: each filter goes on its logger once, however
often it is asked for."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

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
    """For the SDK's loggers: the keys out of each line (`redact`), its template kept (the filters here
    tell lines by it). The SDK logs a refused request's error whole: a prompt fetch's "Error while
    fetching prompt" holds the response's headers and body, so a server, or a proxy in front of it,
    quoting the key it refused (401 "Invalid key: Basic ...") put the key in the user's terminal. The
    arguments (as `%s` and as `%r` show them, a mapping's keys too), the message and a traceback or stack
    the line carries lose the keys; a number is left as it is (`%d`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _redacted(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {_redacted_key(key): _redacted(value) for key, value in record.args.items()}
        elif record.args:
            record.args = tuple(_redacted(value) for value in record.args)
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class _Shown:
    """A log argument as the line shows it, without the keys (`str` for `%s`, `repr` for `%r`)."""

    def __init__(self, text: str, written: str) -> None:
        self._text, self._written = text, written

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return self._written


def _redacted(value: object) -> object:
    """`value` as it is, or as it shows without the keys when its text or repr holds one. A value whose
    text cannot be had is left to logging (which reports it), not raised from here into the SDK."""
    if value is None or isinstance(value, (int, float)):
        return value
    try:
        text, written = str(value), repr(value)
    except Exception:  # noqa: BLE001 - its __str__ or __repr__ fails: logging says so, as without us
        return value
    shown, shown_written = redact(text), redact(written)
    if (shown, shown_written) == (text, written):
        return value
    return shown if isinstance(value, str) else _Shown(shown, shown_written)


def _redacted_key(key: object) -> Any:  # Any: a mapping's key as it came (LogRecord types them str)
    return redact(key) if isinstance(key, str) else key


def redact_sdk_lines() -> None:
    """`RedactedLines` on the SDK's loggers (`langfuse` and those under it, such as its serializer's; a
    logger's filters do not see its children's lines): wherever the evaluator connects to Langfuse."""
    children = [name for name in list(logging.root.manager.loggerDict) if name.startswith("langfuse.")]
    for name in ["langfuse", *children]:
        _filter_once(name, RedactedLines)


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
