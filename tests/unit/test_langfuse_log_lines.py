"""The SDK's and its span exporter's log lines a run says itself: filtered once per logger."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from evaluator.langfuse import OwnPromptFetchLines, quiet_accounted_lines
from evaluator.langfuse.log_lines import own_prompt_fetch

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
