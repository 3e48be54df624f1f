"""Objects alive before a run are frozen out of the collector's scans while it runs (nested and
overlapping runs included), and a process that froze objects itself is left as it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evaluator.run._gc import earlier_objects_frozen


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_objects_from_before_the_run_are_frozen_until_the_last_run_ends() -> None:
    assert gc.get_freeze_count() == 0
    with earlier_objects_frozen():
        assert gc.get_freeze_count() > 1000  # the interpreter and the libraries
        with earlier_objects_frozen():  # a second run, nested or in another thread
            pass
        assert gc.get_freeze_count() > 1000  # the first run still goes on
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen() -> None:
    gc.freeze()
    with earlier_objects_frozen():
        pass
    assert gc.get_freeze_count() > 1000  # not unfrozen by the run
