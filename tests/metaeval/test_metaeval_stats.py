"""Kendall's tau three ways, confusion matrices and kappa, against hand computation and scipy."""

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from assessor.scoring.scores import Scores
from metaeval.stats import (
    NuggetRow,
    confusion_from_pairs,
    kendall_tau_b,
    nugget_condition_describe,
    pair_counts,
    support_method_describe,
    taus_compute,
)


def test_tau_b_of_a_hand_worked_example_with_ties():
    x = [1, 2, 2, 3, 3]
    y = [1, 3, 2, 2, 2]
    # The ten pairs, by hand (i, j: sign of x_j - x_i, sign of y_j - y_i):
    # (1,2) + +  C   (1,3) + +  C   (1,4) + +  C   (1,5) + +  C
    # (2,3) 0 -  tie in x only       (2,4) + -  D   (2,5) + -  D
    # (3,4) + 0  tie in y only       (3,5) + 0  tie in y only
    # (4,5) 0 0  tie in both
    counts = pair_counts(x, y)
    assert (counts.concordant, counts.discordant) == (4, 2)
    assert (counts.ties_x, counts.ties_y, counts.ties_xy) == (2, 3, 1)
    # tau-b = (C - D) / sqrt((n0 - ties_x) (n0 - ties_y)) = 2 / sqrt(8 * 7)
    assert kendall_tau_b(x, y) == pytest.approx(2 / math.sqrt(56))
    assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic)
    # The two ways of counting give the same pairs.
    assert pair_counts(x, y, method="table") == pair_counts(x, y, method="merge") == counts


def test_counting_by_table_and_by_merge_sort_agree_with_each_other_and_scipy():
    rng = np.random.default_rng(3)
    for n in (2, 3, 7, 50, 500, 3000):
        for case in range(6):
            x = rng.random(n) if case % 3 == 0 else rng.integers(0, rng.integers(1, 30), n).astype(float)
            y = rng.integers(0, rng.integers(1, 30), n).astype(float)
            by_table, by_merge = pair_counts(x, y, method="table"), pair_counts(x, y, method="merge")
            assert by_table == by_merge
            assert by_table.tau_b == pytest.approx(kendalltau(x, y).statistic, abs=1e-12, nan_ok=True)


def test_tau_b_matches_scipy_on_random_samples_with_many_ties():
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 146, 1000, 5000):
        for _ in range(5):
            x = rng.integers(0, 6, n) / 5
            y = rng.integers(0, 4, n) / 3
            expected = kendalltau(x, y).statistic
            assert kendall_tau_b(x, y) == pytest.approx(expected, abs=1e-12, nan_ok=True)
    continuous = rng.random(3000), rng.random(3000)
    assert kendall_tau_b(*continuous) == pytest.approx(kendalltau(*continuous).statistic, abs=1e-12)


def test_tau_b_is_undefined_for_a_constant_ranking_as_in_scipy():
    assert math.isnan(kendall_tau_b([0.5, 0.5, 0.5], [1, 2, 3]))
    assert math.isnan(kendalltau([0.5, 0.5, 0.5], [1, 2, 3]).statistic)
    assert math.isnan(kendall_tau_b([1], [1]))


def _scores(per_topic: dict[tuple[str, str], float], *, topics: list[str]) -> Scores:
    runs = sorted({run for run, _ in per_topic})
    run_means = {
        run: {"V": sum(value for (r, _), value in per_topic.items() if r == run) / len(topics)} for run in runs
    }
    return Scores(
        metrics=("V",),
        per_topic={key: {"V": value} for key, value in per_topic.items()},
        run_means=run_means,
        topics=topics,
        runs=runs,
    )


def test_the_three_taus_of_a_hand_built_case():
    a = _scores(
        {
            ("r1", "t1"): 0.0, ("r2", "t1"): 0.25, ("r3", "t1"): 0.5,
            ("r1", "t2"): 0.75, ("r2", "t2"): 0.5, ("r3", "t2"): 1.0,
            ("r4", "t1"): 1.0,  # a run only the first source has
        },
        topics=["t1", "t2"],
    )  # fmt: skip
    b = _scores(
        {
            ("r1", "t1"): 0.25, ("r2", "t1"): 0.5, ("r3", "t1"): 0.0,
            ("r1", "t2"): 0.5, ("r2", "t2"): 0.25, ("r3", "t2"): 1.0,
            ("r1", "t3"): 1.0,  # a topic only the second source has
        },
        topics=["t1", "t2", "t3"],
    )  # fmt: skip
    result = taus_compute(a, b, "V")
    # Run level, over the shared topics t1, t2: a = (0.375, 0.375, 0.75), b = (0.375, 0.375, 0.5):
    # (r1,r2) tied in both, (r1,r3) and (r2,r3) concordant: 2 / sqrt(2 * 2) = 1.
    assert result.tau_run == pytest.approx(1.0)
    assert result.runs == 3
    # Per topic: t1 ranks r1<r2<r3 against r3<r1<r2: C=1, D=2, tau = -1/3; t2 agrees fully, tau = 1.
    assert result.tau_topic_avg == pytest.approx((-1 / 3 + 1) / 2)
    assert (result.topics, result.topics_with_tau) == (2, 2)
    # All six shared pairs, (r1t1, r2t1, r3t1, r1t2, r2t2, r3t2):
    # a = (0, .25, .5, .75, .5, 1), b = (.25, .5, 0, .5, .25, 1). Of the 15 pairs, by hand:
    # discordant (1,3) (2,3) (2,5); tied in b only (1,5) (2,4); tied in a only (3,5); 9 concordant.
    assert result.pairs == 6
    assert result.tau_all == pytest.approx((9 - 3) / math.sqrt((15 - 1) * (15 - 2)))


def test_run_level_uses_run_means_where_a_source_has_only_all_rows():
    table = Scores(metrics=("V",), run_means={"r1": {"V": 0.1}, "r2": {"V": 0.3}, "r3": {"V": 0.2}, "r9": {"V": 1}})
    condition = _scores({("r1", "t1"): 0.2, ("r2", "t1"): 0.4, ("r3", "t1"): 0.6}, topics=["t1"])
    result = taus_compute(table, condition, "V")
    # r1 < r3 < r2 against r1 < r2 < r3: one discordant pair of three.
    assert result.tau_run == pytest.approx(1 / 3)
    assert (result.runs, result.pairs, result.topics) == (3, 0, 0)
    assert math.isnan(result.tau_all) and math.isnan(result.tau_topic_avg)


def test_a_topic_where_every_run_ties_is_left_out_of_the_average():
    a = _scores({("r1", "t1"): 0.0, ("r2", "t1"): 0.0, ("r1", "t2"): 0.0, ("r2", "t2"): 1.0}, topics=["t1", "t2"])
    b = _scores({("r1", "t1"): 0.0, ("r2", "t1"): 1.0, ("r1", "t2"): 0.0, ("r2", "t2"): 1.0}, topics=["t1", "t2"])
    result = taus_compute(a, b, "V")
    assert (result.topics, result.topics_with_tau) == (2, 1)
    assert result.tau_topic_avg == pytest.approx(1.0)


LABELS = ["not_support", "partial_support", "support"]


def test_confusion_matrix_agreement_and_kappa_by_hand():
    # The matrix to produce, rows the first source:
    #              ns  ps   s
    #   ns         50   8   2    (60)
    #   ps          4  10   6    (20)
    #   s           1   4  15    (20)
    #   columns    55  22  23    total 100
    cells = [[50, 8, 2], [4, 10, 6], [1, 4, 15]]
    a, b = {}, {}
    key = 0
    for i, row in enumerate(cells):
        for j, count in enumerate(row):
            for _ in range(count):
                a[key], b[key] = LABELS[i], LABELS[j]
                key += 1
    a["only-a"] = "support"
    b["only-b"] = "not_support"
    confusion = confusion_from_pairs(a, b, LABELS)
    assert confusion.counts == cells
    assert (confusion.missing_a, confusion.missing_b) == (1, 1)
    assert confusion.percentages[0] == [50.0, 8.0, 2.0]
    # p_o = 75/100; p_e = (60*55 + 20*22 + 20*23) / 100^2 = 0.42; kappa = 0.33 / 0.58.
    assert confusion.agreement == pytest.approx(0.75)
    assert confusion.kappa == pytest.approx(0.33 / 0.58)


def test_kappa_is_one_for_perfect_agreement_and_zero_for_independent_labels():
    same = {i: LABELS[i % 3] for i in range(30)}
    assert confusion_from_pairs(same, same, LABELS).kappa == pytest.approx(1.0)
    # Independent: every cell the product of the marginals (each 1/3 and 1/2 with two labels used).
    a = {i: LABELS[i % 2] for i in range(40)}
    b = {i: LABELS[(i // 2) % 2] for i in range(40)}
    assert confusion_from_pairs(a, b, LABELS).kappa == pytest.approx(0.0)


def test_descriptive_statistics_of_a_hand_built_condition():
    rows = [NuggetRow("t1", 3, "vital"), NuggetRow("t1", 5, "okay"), NuggetRow("t1", 4, "vital"), NuggetRow("t2", 8, "vital")]
    described = nugget_condition_describe(rows, {"support": 3, "partial_support": 1, "not_support": 4}, topics=2)
    assert described == pytest.approx(
        {
            "topics": 2,
            "avg_nuggets": 2.0,
            "avg_nugget_words": 5.0,
            "pct_vital": 75.0,
            "pct_okay": 25.0,
            "pct_not_support": 50.0,
            "pct_partial_support": 12.5,
            "pct_support": 37.5,
        }
    )
    assert support_method_describe({2: 5, 1: 2, 0: 3, -1: 4}, topics=1) == {
        "topics": 1, "pairs": 10, "FS": 5, "PS": 2, "NS": 3,
    }  # fmt: skip


def test_runs_with_the_same_scores_in_another_order_are_tied_exactly_at_run_level():
    """A matrix product sums 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 to two floats (0.6000000000000001 and 0.6):
    the runs were ranked apart and tau-b came out 1.0. Their means are one number, as on the leaderboard."""
    topics = ["t1", "t2", "t3"]
    values_a = {"r1": (0.1, 0.2, 0.3), "r2": (0.3, 0.2, 0.1), "r3": (0.0, 0.1, 0.1), "r4": (0.5, 0.5, 0.6)}
    values_b = {"r1": (0.6, 0.6, 0.6), "r2": (0.5, 0.5, 0.5), "r3": (0.1, 0.1, 0.1), "r4": (0.9, 0.9, 0.9)}
    assert sum(values_a["r1"]) != sum(values_a["r2"])  # the trap, in Python's own left-to-right sum
    a = _scores({(run, t): v for run, vs in values_a.items() for t, v in zip(topics, vs, strict=True)}, topics=topics)
    b = _scores({(run, t): v for run, vs in values_b.items() for t, v in zip(topics, vs, strict=True)}, topics=topics)
    result = taus_compute(a, b, "V")
    # By hand: a ranks r4 > r1 = r2 > r3, b ranks r4 > r1 > r2 > r3. Of the 6 pairs, 5 concordant and one
    # (r1, r2) tied in a only: tau-b = 5 / sqrt(5 * 6).
    assert result.tau_run == pytest.approx(5 / math.sqrt(30), abs=1e-15)
    assert result.tau_run == pytest.approx(kendalltau([0.2, 0.2, 0.2 / 3, 1.6 / 3], [0.6, 0.5, 0.1, 0.9]).statistic)
