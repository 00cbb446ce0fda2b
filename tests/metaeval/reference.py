"""Independent formulas of agreement, written from their definitions, for the tests to check the app against."""

import itertools

import numpy as np


def pairwise_kappa(pairs: list[tuple[int, int]], k: int, weight) -> float:
    """1 - observed / expected disagreement, expected over every (first judge's item, second judge's item)."""
    observed = sum(weight(i, j, k) for i, j in pairs) / len(pairs)
    expected = sum(weight(i, j, k) for (i, _), (_, j) in itertools.product(pairs, pairs)) / len(pairs) ** 2
    return 1 - observed / expected


def linear(i, j, k):
    return abs(i - j) / (k - 1)


def quadratic(i, j, k):
    return ((i - j) / (k - 1)) ** 2


def pairs_of(table) -> list[tuple[int, int]]:
    return [(i, j) for i, row in enumerate(table) for j, count in enumerate(row) for _ in range(count)]


def coincidence_alpha_ordinal(table) -> float:
    """Krippendorff's ordinal alpha from the coincidence matrix, as in Krippendorff (2011), for two judges."""
    k = len(table)
    coincidences = np.zeros((k, k))
    for i, j in pairs_of(table):
        coincidences[i, j] += 1
        coincidences[j, i] += 1
    marginals = coincidences.sum(axis=1)
    n = marginals.sum()

    def delta(c, d):
        low, high = min(c, d), max(c, d)
        return (marginals[low : high + 1].sum() - (marginals[c] + marginals[d]) / 2) ** 2

    observed = sum(coincidences[c, d] * delta(c, d) for c in range(k) for d in range(k))
    expected = sum(marginals[c] * marginals[d] * delta(c, d) for c in range(k) for d in range(k))
    return 1 - (n - 1) * observed / expected
