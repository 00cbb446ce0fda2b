"""Agreement of two judges on the items both labelled, from their square table of label counts (no ORM).

Rows are the first judge's labels, columns the second's, both in the labels'
order, which is ordinal (not_support < partial_support < support, NS < PS < FS,
grades 0 < 1 < 2 < 3). Undefined values (no items, one label throughout) are NaN.
"""

import math
from typing import Literal

import numpy as np

NAN = float("nan")


def kappa_weighted(counts, *, weights: str) -> float:
    """Cohen's weighted kappa, 1 - sum(w * observed) / sum(w * expected).

    `weights`: "linear" (|i - j| / (k - 1)) or "quadratic" (((i - j) / (k - 1)) ** 2);
    "none" gives Cohen's kappa (every disagreement weighs 1).
    """
    table = np.asarray(counts, dtype=float)
    total = table.sum()
    k = table.shape[0]
    if not total or k < 2:
        return NAN
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / (k - 1)
    if weights == "linear":
        weight = distance
    elif weights == "quadratic":
        weight = distance**2
    elif weights == "none":
        weight = (distance > 0).astype(float)
    else:
        raise ValueError(f"unknown weights {weights!r}: linear, quadratic or none")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    disagreement_expected = (weight * expected).sum()
    if disagreement_expected == 0:
        return NAN
    return float(1 - (weight * table).sum() / disagreement_expected)


def alpha(counts, *, level: Literal["ordinal", "nominal"]) -> float:
    """Krippendorff's alpha (`level`: "ordinal" or "nominal") of two judges over the items both labelled,
    as the `krippendorff` package computes it, from the table itself.

    One item the judges label differently has alpha 0 (the package's and autojudge-evaluate's figure: the
    disagreement observed is the disagreement expected); no item, or one label throughout, has none (NaN).

    The package takes one row per item (its `value_counts`) and builds an items x labels x labels array on
    the way: at a million labelled pairs, hundreds of MB for a 3 x 3 result. Alpha depends on the items
    through their coincidence matrix only, the sum of each item's, and the items of one cell of the table
    are alike: each cell's is counted once, times the cell's count. The coincidences are whole numbers
    (two labels an item), so the sums, and the figure, are the package's exactly.
    """
    table = np.asarray(counts, dtype=np.int64)
    k = table.shape[0]
    if table.sum() < 1:
        return NAN
    # An item labelled i by one judge and j by the other pairs i with j and j with i (its labels less
    # one, 1, dividing): the coincidences are the table plus its transpose.
    coincidences = (table + table.T).astype(float)
    totals = coincidences.sum(axis=0)
    if np.count_nonzero(totals) < 2:
        return NAN  # one label throughout: no disagreement to expect
    expected = (np.outer(totals, totals) - np.diag(totals)) / (totals.sum() - 1)
    indices = np.arange(k)
    low, high = np.minimum.outer(indices, indices), np.maximum.outer(indices, indices)
    if level == "nominal":
        distance = (low != high).astype(float)
    else:
        # The labels between the two, both included, less half of each end: squared (the package's metric).
        between = np.array(
            [
                [totals[i : j + 1].sum() for i, j in zip(lows, highs, strict=True)]
                for lows, highs in zip(low, high, strict=True)
            ]
        )
        distance = (between - (totals[low] + totals[high]) / 2) ** 2
    value = 1 - (coincidences * distance).sum() / (expected * distance).sum()
    return NAN if math.isnan(value) else float(value)


def alpha_ordinal(counts) -> float:
    """Krippendorff's alpha, ordinal: a disagreement weighs by how many labels lie between the two."""
    return alpha(counts, level="ordinal")


def alpha_nominal(counts) -> float:
    """Krippendorff's alpha, nominal: every disagreement weighs the same."""
    return alpha(counts, level="nominal")
