"""During a run the collector leaves out the objects alive before it and collects the young generation
less often; the last run to end (nested and overlapping runs included) restores the process's settings,
and a process that froze objects itself or set its own thresholds is left as it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from evaluator.run._gc import YOUNG_THRESHOLD, collector_tuned_for_run


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_objects_from_before_the_run_are_frozen_until_the_last_run_ends() -> None:
    assert gc.get_freeze_count() == 0
    with collector_tuned_for_run():
        assert gc.get_freeze_count() > 1000  # the interpreter and the libraries
        with collector_tuned_for_run():  # a second run, nested or in another thread
            pass
        assert gc.get_freeze_count() > 1000  # the first run still goes on
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen() -> None:
    gc.freeze()
    with collector_tuned_for_run():
        pass
    assert gc.get_freeze_count() > 1000  # not unfrozen by the run


def test_the_young_generation_is_collected_less_often_until_the_last_run_ends() -> None:
    gc.set_threshold(700, 10, 10)
    with collector_tuned_for_run():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with collector_tuned_for_run():
            pass
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("thresholds", [(50_000, 10, 10), (0, 10, 10)], ids=["larger", "collection off"])
def test_a_process_that_set_its_own_young_threshold_keeps_it(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(*thresholds)
    with collector_tuned_for_run():
        assert gc.get_threshold() == thresholds
    assert gc.get_threshold() == thresholds
