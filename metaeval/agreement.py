"""Agreement of two judges on the items both labelled, from their square table of label counts (no ORM).

Rows are the first judge's labels, columns the second's, both in the labels'
order, which is ordinal (not_support < partial_support < support, NS < PS < FS,
grades 0 < 1 < 2 < 3). Undefined values (no items, one label throughout) are NaN.
"""

import math
from typing import Literal

import krippendorff
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
    as the `krippendorff` package computes it.

    One item the judges label differently has alpha 0 (the package's and autojudge-evaluate's figure: the
    disagreement observed is the disagreement expected); no item, or one label throughout, has none (NaN).
    """
    table = np.asarray(counts, dtype=np.int64)
    k = table.shape[0]
    if table.sum() < 1:
        return NAN
    # One unit per item, holding how many of its two labels took each value.
    rows, columns = np.nonzero(table)
    repeats = table[rows, columns]
    units = np.zeros((len(rows), k), dtype=float)
    np.add.at(units, (np.arange(len(rows)), rows), 1)
    np.add.at(units, (np.arange(len(rows)), columns), 1)
    value_counts = np.repeat(units, repeats, axis=0)
    if np.count_nonzero(value_counts.sum(axis=0)) < 2:
        return NAN  # one label throughout: no disagreement to expect
    value = krippendorff.alpha(value_counts=value_counts, level_of_measurement=level)
    return NAN if value is None or math.isnan(value) else float(value)


def alpha_ordinal(counts) -> float:
    """Krippendorff's alpha, ordinal: a disagreement weighs by how many labels lie between the two."""
    return alpha(counts, level="ordinal")


def alpha_nominal(counts) -> float:
    """Krippendorff's alpha, nominal: every disagreement weighs the same."""
    return alpha(counts, level="nominal")
