"""Weighted kappa and Krippendorff's alpha of two judges, against hand work and independent formulas."""

import math

import numpy as np
import pytest

from metaeval.agreement import alpha_nominal, alpha_ordinal, kappa_weighted
from metaeval.stats import confusion_from_pairs
from tests.metaeval.reference import coincidence_alpha_ordinal, linear, pairs_of, pairwise_kappa, quadratic


def test_with_two_labels_every_kappa_is_cohens():
    table = [[20, 5], [10, 15]]
    # p_o = 35/50; p_e = (25 * 30 + 25 * 20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5.
    for weights in ("none", "linear", "quadratic"):
        assert kappa_weighted(table, weights=weights) == pytest.approx(0.4)


def test_a_full_reversal_of_the_extremes_is_minus_one():
    # Both items one step of weight 1 apart; expected disagreement 0.5 + 0.5 = 1: 1 - 2 / 1.
    table = [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    assert kappa_weighted(table, weights="linear") == pytest.approx(-1.0)
    assert kappa_weighted(table, weights="quadratic") == pytest.approx(-1.0)


def test_a_near_miss_costs_less_with_weights():
    # Three items agree, one is off by one grade of three: linear weight 1/2, quadratic 1/4.
    table = [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
    # rows (2, 1, 1), columns (1, 2, 1); n = 4. Expected linear disagreement:
    # sum_ij r_i c_j |i-j| / 2 / 16 = (2*2*.5 + 2*1*1 + 1*1*.5 + 1*1*.5 + 1*1*1 + 1*2*.5) / 16 = 7/16.
    assert kappa_weighted(table, weights="linear") == pytest.approx(1 - (0.5 / 4) / (7 / 16))
    unweighted = kappa_weighted(table, weights="none")
    assert kappa_weighted(table, weights="quadratic") > kappa_weighted(table, weights="linear") > unweighted


@pytest.mark.parametrize("seed", range(10))
def test_weighted_kappa_matches_the_pairwise_definition(seed):
    table = np.random.default_rng(seed).integers(0, 6, size=(3, 3)).tolist()
    pairs = pairs_of(table)
    assert kappa_weighted(table, weights="linear") == pytest.approx(pairwise_kappa(pairs, 3, linear), abs=1e-12)
    assert kappa_weighted(table, weights="quadratic") == pytest.approx(pairwise_kappa(pairs, 3, quadratic), abs=1e-12)


def test_alpha_of_a_hand_worked_two_label_table():
    # 50 items, 100 values: coincidences o_00 = 40, o_11 = 30, o_01 = o_10 = 15; n_0 = 55, n_1 = 45.
    # alpha = 1 - (n - 1) * (o_01 + o_10) / (2 n_0 n_1) = 1 - 99 * 30 / 4950 = 0.4.
    assert alpha_ordinal([[20, 5], [10, 15]]) == pytest.approx(0.4)


@pytest.mark.parametrize("seed", range(10))
def test_alpha_ordinal_matches_the_coincidence_matrix_formula(seed):
    table = np.random.default_rng(seed).integers(0, 8, size=(4, 4)).tolist()
    assert alpha_ordinal(table) == pytest.approx(coincidence_alpha_ordinal(table), abs=1e-12)


def test_undefined_agreement_is_nan():
    assert math.isnan(kappa_weighted([[0, 0], [0, 0]], weights="linear"))
    assert math.isnan(kappa_weighted([[5, 0], [0, 0]], weights="quadratic"))
    assert math.isnan(alpha_ordinal([[5, 0], [0, 0]]))
    assert math.isnan(alpha_ordinal([[0, 0], [0, 0]]))


def test_a_confusion_matrix_reports_them_in_the_labels_order():
    a = {1: "NS", 2: "PS", 3: "FS", 4: "FS", 5: "NS"}
    b = {1: "NS", 2: "FS", 3: "FS", 4: "PS", 5: "PS"}
    confusion = confusion_from_pairs(a, b, ["NS", "PS", "FS"])
    table = confusion.counts
    assert confusion.kappa_linear == pytest.approx(pairwise_kappa(pairs_of(table), 3, linear))
    assert confusion.kappa_quadratic == pytest.approx(pairwise_kappa(pairs_of(table), 3, quadratic))
    assert confusion.alpha_ordinal == pytest.approx(coincidence_alpha_ordinal(table))


def test_one_item_labelled_differently_has_alpha_zero_as_the_package_says():
    # One unit with values 0 and 1: observed disagreement equals expected, alpha 0 (krippendorff 0.9 and
    # autojudge-evaluate say 0.0). One unit labelled alike: no variation, no alpha.
    assert alpha_ordinal([[0, 1], [0, 0]]) == 0.0 and alpha_nominal([[0, 1], [0, 0]]) == 0.0
    assert math.isnan(alpha_ordinal([[1, 0], [0, 0]]))


def test_nominal_alpha_weighs_every_disagreement_alike():
    # Three labels; 6 items: (0,0) (1,1) (2,2) (0,2) (2,0) (0,1). Coincidences (each item both ways):
    # o_00 = 2, o_11 = 2, o_22 = 2, o_02 = o_20 = 2, o_01 = o_10 = 1; n_0 = 5, n_1 = 3, n_2 = 4, n = 12.
    # Nominal: D_o = sum_{c != k} o_ck = 6; D_e = sum_{c != k} n_c n_k / (n - 1) = (2 * (15 + 20 + 12)) / 11.
    # alpha = 1 - D_o / D_e = 1 - 6 * 11 / 94 = 14/47.
    table = [[1, 1, 1], [0, 1, 0], [1, 0, 1]]
    assert alpha_nominal(table) == pytest.approx(14 / 47, abs=1e-12)
    # Ordinal weighs the 0-2 disagreements more than the 0-1 one: not the same figure.
    assert alpha_ordinal(table) != pytest.approx(alpha_nominal(table))


@pytest.mark.parametrize("seed", range(12))
def test_alpha_equals_the_krippendorff_package_on_the_two_judges_labels(seed):
    """The package read the other way in: the two judges' labels item by item (reliability data), not the
    value counts the app hands it, on random tables (with small ones, where one item decides)."""
    import krippendorff

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    table = rng.integers(0, 3 if seed % 3 else 2, size=(k, k))
    if table.sum() == 0:
        table[0, 1] = 1
    first, second = zip(*pairs_of(table.tolist()), strict=True)
    data = np.array([first, second], dtype=float)
    domain = list(range(k))
    for level, ours in (("ordinal", alpha_ordinal), ("nominal", alpha_nominal)):
        if len(set(first) | set(second)) < 2:
            assert math.isnan(ours(table))  # one label throughout: nothing to expect
            continue
        expected = krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level)
        assert ours(table) == pytest.approx(expected, abs=1e-12)
