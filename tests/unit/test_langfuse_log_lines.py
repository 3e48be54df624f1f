"""The SDK's and its span exporter's log lines a run says itself: filtered once per logger."""

from __future__ import annotations

import base64
import logging
import sys
from collections.abc import Iterator

import pytest

from evaluator.langfuse import OwnPromptFetchLines, quiet_accounted_lines
from evaluator.langfuse.log_lines import RedactedLines, own_prompt_fetch, redact_sdk_lines

EXPORTER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


@pytest.fixture
def clean_filters() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in ("langfuse", EXPORTER)]
    before = [list(log.filters) for log in loggers]
    yield
    for log, filters in zip(loggers, before, strict=True):
        log.filters[:] = filters


def _record(logger: str, msg: str) -> logging.LogRecord:
    return logging.LogRecord(logger, logging.WARNING, __file__, 0, msg, ("x",), None)


def test_each_filter_goes_on_its_logger_once_however_often_asked(clean_filters: None) -> None:
    quiet_accounted_lines()
    quiet_accounted_lines()
    assert sum(isinstance(f, OwnPromptFetchLines) for f in logging.getLogger("langfuse").filters) == 1
    kinds = [type(f) for f in logging.getLogger(EXPORTER).filters]
    assert len(kinds) == len(set(kinds)) == 1


def test_the_exporter_s_retry_lines_go_and_its_refusals_stay(clean_filters: None) -> None:
    quiet_accounted_lines()
    exporter = logging.getLogger(EXPORTER)
    assert not exporter.filter(_record(EXPORTER, "Transient error %s encountered while exporting"))
    assert not exporter.filter(_record(EXPORTER, "Failed to export %s batch due to timeout"))
    assert exporter.filter(_record(EXPORTER, "Failed to export batch code: %s, reason: 401"))


def test_the_sdk_s_prompt_lines_go_only_during_the_evaluator_s_own_fetch() -> None:
    line = _record("langfuse", "Prompt '%s' not found during refresh, evicting from cache.")
    assert OwnPromptFetchLines().filter(line)  # a target's own fetch: kept
    with own_prompt_fetch():
        assert not OwnPromptFetchLines().filter(line)
    assert OwnPromptFetchLines().filter(line)  # and after it


PUBLIC, SECRET = "pk-lf-0123456789", "sk-lf-9876543210"
BASIC = base64.b64encode(f"{PUBLIC}:{SECRET}".encode()).decode()
PROMPT_ERROR = "Error while fetching prompt '%s': %s"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)


def _refusal() -> logging.LogRecord:
    """The SDK's line on a prompt it could not fetch, from a proxy quoting the key it refused."""
    error = f"headers: {{}}, status_code: 401, body: {{'message': 'Invalid key: Basic {BASIC}'}}"
    return logging.LogRecord("langfuse", logging.ERROR, __file__, 0, PROMPT_ERROR, ("p", error), None)


def test_the_sdk_s_lines_lose_the_keys_and_keep_their_template(keys: None, clean_filters: None) -> None:
    """The SDK logs a refused request's response whole (headers and body): a server quoting the key
    put it in the user's terminal."""
    redact_sdk_lines()
    redact_sdk_lines()
    sdk = logging.getLogger("langfuse")
    assert sum(isinstance(f, RedactedLines) for f in sdk.filters) == 1
    line = _refusal()
    assert sdk.filter(line)
    assert line.getMessage() == (
        "Error while fetching prompt 'p': headers: {}, status_code: 401, body: {'message': 'Invalid key: "
        "Basic ***'}"
    )
    assert line.msg == PROMPT_ERROR  # what the other filters tell the line by
    quiet_accounted_lines()  # installed after the redaction, as a connected run does
    with own_prompt_fetch():
        assert not sdk.filter(_refusal())
    raised = logging.LogRecord(
        "langfuse", logging.WARNING, __file__, 0, ValueError(f"Bearer {SECRET}"), (), None
    )
    named = logging.LogRecord("langfuse", logging.WARNING, __file__, 0, "%(key)s", ({"key": SECRET},), None)
    assert sdk.filter(raised) and sdk.filter(named)
    assert (raised.getMessage(), named.getMessage()) == ("Bearer ***", "***")
    plain = logging.LogRecord("langfuse", logging.WARNING, __file__, 0, "%d spans", (3,), None)
    assert sdk.filter(plain) and plain.args == (3,)


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_the_sdk_s_tracebacks_reprs_keys_and_child_loggers_lose_the_keys_too(
    keys: None, clean_filters: None
) -> None:
    """The SDK logs some errors with their traceback (exc_info), an argument can be shown by `%r`, a
    mapping's keys show with `%s`, and a logger under `langfuse` (its serializer's) is filtered only by
    its own filters: each of these kept the key; a value whose text fails raised into the SDK's call."""
    child = logging.getLogger("langfuse._utils.serializer")
    child_filters = list(child.filters)
    try:
        redact_sdk_lines()
        sdk = logging.getLogger("langfuse")
        try:
            raise ValueError(f"401 Invalid key: Basic {BASIC}")
        except ValueError:
            traced = logging.LogRecord("langfuse", logging.ERROR, __file__, 0, "failed", (), sys.exc_info())
        shown = logging.LogRecord("langfuse", logging.ERROR, __file__, 0, "got %r", (SECRET.encode(),), None)
        mapping = logging.LogRecord("langfuse", logging.ERROR, __file__, 0, "got %s", ({SECRET: 1},), None)
        serializer = logging.LogRecord(child.name, logging.WARNING, __file__, 0, "bad %s", (SECRET,), None)
        broken = logging.LogRecord("langfuse", logging.WARNING, __file__, 0, "%s", (_Unprintable(),), None)

        assert sdk.filter(traced) and sdk.filter(shown) and sdk.filter(mapping) and sdk.filter(broken)
        assert child.filter(serializer)
        lines = [logging.Formatter().format(record) for record in (traced, shown, mapping, serializer)]
        assert all(SECRET not in line and BASIC not in line for line in lines), lines
        assert "ValueError: 401 Invalid key: Basic ***" in lines[0]
    finally:
        child.filters[:] = child_filters
