"""Stored scores read back as the fractions they stand for, and run means of those fractions, worked by hand."""

import math
from fractions import Fraction

import pytest

from assessor.scoring.exact import MAX_DENOMINATOR, common_denominator, exact_mean, exact_sum, score_fraction


def test_a_score_is_read_back_as_its_fraction():
    # 5/14 and 60/168 are one number, and one float.
    assert score_fraction(5 / 14) == score_fraction(60 / 168) == Fraction(5, 14)
    assert score_fraction(0.1) == Fraction(1, 10)
    assert score_fraction(-0.5) == Fraction(-1, 2)
    assert score_fraction(7.0) == Fraction(7)
    # The largest denominator read back: a million (six decimals of a table written as text).
    assert MAX_DENOMINATOR == 10**6
    assert score_fraction(0.123457) == Fraction(123457, 10**6)


def test_a_float_that_is_no_small_fraction_is_kept_as_it_is():
    # 1/1000003: a fraction of a denominator above the bound is at least 1/(1000003 x 10^6) ~ 1e-12 from any
    # fraction within it, far more than the spacing of floats near 1e-6 (~2e-22): none rounds to this float.
    assert score_fraction(1 / 1000003) == Fraction(1 / 1000003) != Fraction(1, 1000003)
    # pi's nearest fraction of denominator at most a million, 3126535/995207, is 1e-12 off: not pi's float.
    assert score_fraction(math.pi) == Fraction(math.pi)


def test_a_score_that_is_not_a_number_is_refused():
    with pytest.raises(ValueError, match="finite number, not nan"):
        score_fraction(math.nan)
    with pytest.raises(ValueError, match="finite number, not inf"):
        score_fraction(math.inf)


def test_means_of_fractions_tie_where_the_floats_means_split():
    # 1/3 + 1 + 1 and 2/3 + 2/3 + 1 are both 7/3; 0.1 + 0.2 and 0.3 + 0 both 3/10.
    assert exact_sum([1 / 3, 1.0, 1.0]) == exact_sum([2 / 3, 2 / 3, 1.0]) == Fraction(7, 3)
    assert exact_mean([1 / 3, 1.0, 1.0], 3) == exact_mean([2 / 3, 2 / 3, 1.0], 3) == 7 / 9
    assert exact_mean([0.1, 0.2], 2) == exact_mean([0.3, 0.0], 2) == 0.15
    # The cases can fail: the floats' means, even summed exactly, are two numbers each time.
    assert math.fsum([1 / 3, 1.0, 1.0]) / 3 != math.fsum([2 / 3, 2 / 3, 1.0]) / 3
    assert math.fsum([0.1, 0.2]) / 2 != math.fsum([0.3, 0.0]) / 2


def test_a_mean_counts_missing_topics_in_its_count_and_an_empty_count_gives_0():
    # Two scores over five topics: (1/2 + 1/4) / 5 = 3/20.
    assert exact_mean([0.5, 0.25], 5) == 3 / 20
    assert exact_mean([], 0) == 0.0


def test_a_common_denominator_is_the_least_one():
    # 1/2, 1/3, 1/4 over 12: 6, 4, 3.
    assert common_denominator([0.5, 1 / 3, 0.25]) == ([6, 4, 3], 12)
    assert common_denominator([]) == ([], 1)


def test_a_sum_is_the_sum_of_its_values_fractions_taken_one_by_one():
    """Summed over a common denominator, as the hand sum of the fractions: small ones, repeated ones, a float
    that is no small fraction (kept exactly, its denominator a power of two), and none."""
    import random

    rng = random.Random(7)
    pool = [0.0, 1 / 3, 2 / 3, 0.5, 1.0, 3 / 7, 5 / 12, 0.1, 2.0**-40 + 0.3, 13.0]
    for _ in range(200):
        values = [rng.choice(pool) for _ in range(rng.randrange(0, 15))]
        by_hand = Fraction(0)
        for value in values:
            by_hand += score_fraction(value)
        assert exact_sum(values) == by_hand
    assert exact_sum([]) == 0
    assert exact_sum([0.1, 0.1, 0.2]) == Fraction(2, 5)
