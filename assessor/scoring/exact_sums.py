"""Exact running sums: a sum kept as non-overlapping partials, so values can be added and taken away.

A run's kept sum changes by the few answers a refresh rewrites; reading every
kept answer of every touched run again (a topic touches every run) would cost
the whole source. Floating-point sums cannot simply subtract: `a + b - b` need
not be `a`. Kept as partials (Shewchuk's exact summation, the algorithm behind
`math.fsum`), the partials' sum is exactly the sum of every value added minus
every value taken away, so `math.fsum(partials)` is the correctly rounded sum of
the values kept: the same float as `math.fsum` over those values themselves.
"""

import math
from collections.abc import Iterable


def partials_add(partials: list[float], values: Iterable[float]) -> list[float]:
    """The partials of `partials`' exact sum plus each value (finite floats), as a new list."""
    result = list(partials)
    for value in values:
        kept = 0
        for partial in result:
            if abs(value) < abs(partial):
                value, partial = partial, value
            high = value + partial
            low = partial - (high - value)  # exactly what rounding `high` lost
            if low:
                result[kept] = low
                kept += 1
            value = high
        result[kept:] = [value]
    return result


def partials_sum(partials: Iterable[float]) -> float:
    """The correctly rounded sum the partials stand for."""
    return math.fsum(partials)
