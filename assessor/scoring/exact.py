"""Exact run means: a stored score read back as the fraction it stands for, and a run's mean of those fractions.

Every per-answer score is a ratio of small integers (docs/scores.md): a nugget
score's denominator is at most 2 (2 #vital + #okay), a support score's
2 #sentences, a grade measure's the bank's size, and a score table written as
decimal text has at most a million in the denominator of its values (six
decimals). Stored as a float, such a score is that fraction rounded, and
floats split ties that the fractions keep: scores of 1/3, 1, 1 and of 2/3, 2/3,
1 both have the mean 7/9, but their floats' mean, even summed exactly
(`math.fsum`), is 0.7777777777777778 for one and 0.7777777777777777 for the
other; a plain sum depends on the order too. Two runs tie
when their means are the same number, so every ranking of runs compares the
means of the fractions: `score_fraction` reads a stored score back,
`exact_mean` gives a run's mean, correctly rounded to a float once, so equal
means give equal floats (and rounding, being monotone, never reverses two
different ones).

The bound: a fraction p/q with q <= MAX_DENOMINATOR is the one that float x
stands for when float(p/q) == x, and it is unique: two such fractions differ
by at least 1/MAX_DENOMINATOR^2 = 2^-39.9, more than the spacing of floats below
2^12, so no other one rounds to x too (above, where scores are word counts and
other integers, the round trip still holds). `Fraction.limit_denominator` finds it
(the fraction nearest x of the bounded denominators). A float that is no such
fraction (an imported table's value in full precision, say) is kept exactly as
the float it is.
"""

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import lru_cache

MAX_DENOMINATOR = 10**6


@lru_cache(maxsize=65536)
def score_fraction(value: float) -> Fraction:
    """The fraction of denominator at most MAX_DENOMINATOR whose float is `value`, else `value` exactly."""
    if not math.isfinite(value):
        raise ValueError(f"a score must be a finite number, not {value!r}")
    exact = Fraction(value)
    small = exact.limit_denominator(MAX_DENOMINATOR)
    return small if float(small) == value else exact


def exact_sum(values: Iterable[float]) -> Fraction:
    """The sum of the values' fractions (`score_fraction`); counted first, as scores repeat a few values, and
    summed as integers over their common denominator: one fraction made, where adding fractions one to another
    reduces each partial sum (8 against 19 us for a run's ten scores)."""
    counted = Counter(values)
    numerators, denominator = common_denominator(list(counted))
    total = sum(numerator * times for numerator, times in zip(numerators, counted.values(), strict=True))
    return Fraction(total, denominator)


def exact_mean(values: Iterable[float], count: int) -> float:
    """The sum of the values' fractions over `count` (a run's mean, a missing topic counting 0), correctly
    rounded once; 0 for an empty count."""
    if not count:
        return 0.0
    total = exact_sum(values)
    return total.numerator / (total.denominator * count)  # int / int: correctly rounded


def common_denominator(values: Sequence[float]) -> tuple[list[int], int]:
    """The values' fractions over one denominator: (numerators, denominator), the least one."""
    fractions = [score_fraction(value) for value in values]
    denominator = math.lcm(*{fraction.denominator for fraction in fractions}) if fractions else 1
    return [fraction.numerator * (denominator // fraction.denominator) for fraction in fractions], denominator


def mean_of_sum(total: Fraction, count: int) -> float:
    """A kept sum of fractions over `count`, correctly rounded once (`exact_mean` of the values it sums)."""
    return total.numerator / (total.denominator * count) if count else 0.0


def sum_kept(total: Fraction) -> str:
    """A run's exact sum as the kept scores store it (JSON text: "7/9"), read back by `sum_read`."""
    return str(total)


def sum_read(kept: object) -> Fraction | None:
    """A stored exact sum, or None where the row keeps none (rows from before the sums were exact)."""
    return Fraction(kept) if isinstance(kept, str) else None
