"""Exact running sums equal math.fsum over the values kept, whatever was added and taken away."""

import math
import random

from assessor.scoring.exact_sums import partials_add, partials_sum


def test_taking_values_away_leaves_the_sum_of_the_rest_exactly():
    # Naive floats lose the 1.0 between the large values: 1e16 + 1.0 - 1e16 == 0.0.
    assert (1e16 + 1.0) - 1e16 == 0.0
    partials = partials_add([], [1e16, 1.0, 0.1])
    partials = partials_add(partials, [-1e16])
    assert partials_sum(partials) == math.fsum([1.0, 0.1]) == 1.1


def test_random_adds_and_removals_match_fsum_of_what_remains():
    rng = random.Random(4)
    for _ in range(200):
        kept: list[float] = []
        partials: list[float] = []
        for _ in range(60):
            if kept and rng.random() < 0.4:
                gone = kept.pop(rng.randrange(len(kept)))
                partials = partials_add(partials, [-gone])
            else:
                value = rng.choice([rng.random(), rng.random() / 3, rng.random() * 1e-9, float(rng.randrange(300))])
                kept.append(value)
                partials = partials_add(partials, [value])
            assert partials_sum(partials) == math.fsum(kept)
        assert len(partials) < 40  # non-overlapping partials stay few
