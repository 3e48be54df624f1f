"""Is a change between two runs larger than the noise? A paired sign-flip permutation test over scenarios.

Each scenario ran in both runs, so its difference (candidate - baseline) is one paired observation. If the
change made no difference, each difference was as likely to come out with the other sign; the p-value is
the share of the 2^k sign assignments of the k non-zero differences whose total is at least as far from
zero as the observed total (two-sided). Exact up to `EXACT_LIMIT` non-zero differences, a seeded Monte
Carlo estimate beyond. With k changed scenarios the smallest p-value possible is 2 / 2^k: three scenarios
that all got better give p = 0.25, which is why small suites cannot show a change beyond the noise.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

__all__ = ["METHOD", "sign_flip_p"]

EXACT_LIMIT = 14
SAMPLES = 20_000
_TOLERANCE = 1e-9
METHOD = "paired sign-flip permutation test over the scenarios both runs have (two-sided)"


def sign_flip_p(differences: Sequence[float], *, seed: int = 0) -> float:
    """The two-sided p-value of the paired differences (1.0 when none is non-zero)."""
    changed = [d for d in differences if abs(d) > _TOLERANCE]
    if not changed:
        return 1.0
    observed = abs(sum(changed)) - _TOLERANCE
    if len(changed) <= EXACT_LIMIT:
        totals = [
            abs(sum(sign * d for sign, d in zip(signs, changed, strict=True)))
            for signs in itertools.product((1, -1), repeat=len(changed))
        ]
        return sum(t >= observed for t in totals) / len(totals)
    rng = random.Random(seed)  # noqa: S311 (a reproducible estimate, not a secret)
    hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in changed)) >= observed for _ in range(SAMPLES))
    return (hits + 1) / (SAMPLES + 1)
