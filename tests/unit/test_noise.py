"""The paired sign-flip test: exact for small suites, a seeded estimate for large ones."""

import pytest

from evaluator.reports import sign_flip_p


def test_three_scenarios_that_all_improved_are_not_beyond_the_noise() -> None:
    assert sign_flip_p([1.0, 1.0, 1.0, 0.0]) == 0.25  # 2 of the 8 sign patterns are as extreme


def test_no_change_and_mixed_changes() -> None:
    assert sign_flip_p([0.0, 0.0]) == 1.0
    assert sign_flip_p([1.0, -1.0]) == 1.0


def test_many_consistent_changes_are_beyond_the_noise() -> None:
    assert sign_flip_p([1.0] * 10) == pytest.approx(2 / 1024)
    large = sign_flip_p([0.5] * 30 + [-0.5] * 2)  # Monte Carlo above 14 changed scenarios
    assert large < 0.001
    assert sign_flip_p([0.5] * 30 + [-0.5] * 2) == large  # seeded: the same answer every time
