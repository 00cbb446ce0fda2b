"""Run-level correlations of two leaderboards and their bootstrap intervals, against hand work and independent code."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from metaeval.rankcorr import (
    bootstrap_intervals,
    coefficients,
    exact_run_means,
    pearson,
    resampled_run_means,
    spearman,
    tau_ap_b,
    tau_b,
    tau_gap,
    tau_top_k,
    topic_draws,
)


def one(function, x, y, *args):
    return float(function(np.array(x, dtype=float), np.array(y, dtype=float), *args)[0])


# --- hand-worked examples -----------------------------------------------------------------


def test_tau_ap_b_weighs_a_swap_at_the_top_more_than_tau_b():
    x = [4, 3, 2, 1]
    # Bottom swap. tau_ap_b(x|y), y's order 0, 2, 1, 3: run 2 has run 0 above it in both (1/1),
    # run 1 has 0 and 2 above it in y, only 0 in x (1/2), run 3 all (3/3): 2 * (2.5 / 3) - 1 = 2/3,
    # and the same the other way.
    assert one(tau_ap_b, x, [4, 2, 3, 1]) == pytest.approx(2 / 3, abs=1e-15)
    # Top swap: run 0 has run 1 above it in y but not in x (0/1), runs 2 and 3 agree: 2 * (2 / 3) - 1.
    assert one(tau_ap_b, x, [3, 4, 2, 1]) == pytest.approx(1 / 3, abs=1e-15)
    # tau-b cannot tell the two swaps apart: (5 - 1) / 6.
    assert one(tau_b, x, [3, 4, 2, 1]) == one(tau_b, x, [4, 2, 3, 1]) == pytest.approx(2 / 3, abs=1e-15)


def test_tau_ap_b_with_ties_averages_both_directions():
    # x = [3, 2, 2, 1], y = [3, 3, 2, 1].
    # (x|y): runs 0 and 1 tie on top in y and are skipped; run 2 has runs 0 and 1 above in y,
    # of which run 0 is above it in x (1/2); run 3: 0, 1, 2 above in both (3/3): 2 * (1.5 / 2) - 1 = 1/2.
    # (y|x): run 1 has run 0 above in x, not above in y (0/1); run 2 has run 0 above in x, above
    # in y (1/1); run 3: 3/3. 2 * (2 / 3) - 1 = 1/3. Mean 5/12.
    assert one(tau_ap_b, [3, 2, 2, 1], [3, 3, 2, 1]) == pytest.approx(5 / 12, abs=1e-15)


def test_tau_gap_takes_the_gaps_from_the_first_leaderboard_and_the_order_from_the_second():
    """Worked by hand with autojudge-evaluate 1.1.0's definition (tau_gap.py: truth gaps, predicted order)."""
    # The example of its direction: truth 4, 3, 2, 1; predicted order runs 1, 2, 3, 0. Run 2: gap 1 above,
    # right (1/1); run 3: gaps 2 + 1, right (3/3); run 0: gaps 1 + 2 + 3, all wrong (0/6). 2 x 2/3 - 1.
    assert one(tau_gap, [4, 3, 2, 1], [1, 4, 3, 2]) == pytest.approx(1 / 3, abs=1e-15)
    x = [1.0, 0.9, 0.5, 0.0]
    # The bottom two swapped in y (order 0, 1, 3, 2). Run 1: 0.1 of 0.1; run 3: 1.9 of 1.9; run 2: gaps
    # 0.5, 0.4 (right) and 0.5 (wrong): 0.9 / 1.4. (1 + 1 + 9/14) x 2 / 3 - 1 = 16/21.
    assert one(tau_gap, x, [1.0, 0.9, 0.0, 0.5]) == pytest.approx(16 / 21, abs=1e-15)
    # A tie in y is broken by position: runs 0 and 1 tied, run 0 first, as x has them: 1.
    assert one(tau_gap, x, [0.9, 0.9, 0.5, 0.0]) == pytest.approx(1.0, abs=1e-15)
    # ... and against x when x has them the other way: run 1 (0/0.1); run 2 (0.9/0.9); run 3 (2.4/2.4): 1/3.
    assert one(tau_gap, [0.9, 1.0, 0.5, 0.0], [0.9, 0.9, 0.5, 0.0]) == pytest.approx(1 / 3, abs=1e-15)
    # A tie in x carries no weight: y's order 2, 1, 0; run 1: gap 1 wrong (0/1); run 0: gaps 1 and 0,
    # wrong (0/1). 2 x 0 - 1.
    assert one(tau_gap, [1, 1, 0], [0, 1, 2]) == -1.0
    # Every pair tied in x: no weight anywhere, no coefficient.
    assert math.isnan(one(tau_gap, [1, 1, 1], [1, 2, 3]))


def test_tau_over_the_top_k_of_the_first_leaderboard():
    x = [0.9, 0.8, 0.7, 0.1, 0.05]
    y = [0.1, 0.2, 0.3, 0.9, 0.8]
    # The top 3 of x are runs 0, 1, 2, in the reverse order in y: tau -1 (tau over all five: -0.6... not -1).
    assert one(tau_top_k, x, y, 3) == -1.0
    assert one(tau_top_k, x, y, 10) == one(tau_b, x, y)


def test_tau_over_the_top_k_of_the_second_leaderboard_when_asked():
    # x judged, y the truth: y's top 3 are runs 0, 1, 2 (4, 3, 2), which x orders 2, 1, 0: -1. x's own top 3 are
    # runs 2, 4, 3 (5, 4, 3), which y orders 2, 3, 4 against x's 2, 4, 3: one pair of three reversed, 1/3.
    x = np.array([0.0, 1.0, 5.0, 3.0, 4.0])
    y = np.array([4.0, 3.0, 2.0, 1.0, 0.0])
    assert float(coefficients(x, y, top_k=3, top_k_of="b")["tau_top_k"][0]) == pytest.approx(-1.0)
    assert float(coefficients(x, y, top_k=3)["tau_top_k"][0]) == pytest.approx(1 / 3)


def test_a_constant_leaderboard_has_no_coefficient():
    values = coefficients(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]), top_k=10)
    assert sorted(values) == ["pearson", "spearman", "tau", "tau_ap", "tau_gap", "tau_top_k"]
    assert all(math.isnan(float(v[0])) for name, v in values.items() if name != "tau_gap")
    assert all(math.isnan(float(v[0])) for v in coefficients(np.array([1.0]), np.array([2.0]), top_k=10).values())


def test_run_means_count_a_missing_topic_as_zero_or_skip_it():
    matrix = np.array([[1.0, np.nan, 0.5], [np.nan, np.nan, np.nan]])
    assert exact_run_means(matrix, missing="zero").tolist() == [0.5, 0.0]
    assert exact_run_means(matrix, missing="skip").tolist() == [0.75, 0.0]
    # Topic 0 drawn twice, topic 2 once: zero (1 + 1 + 0.5) / 3 = 5/6; skip the same over 3 answered draws.
    twice = np.array([[2.0, 0.0, 1.0]])
    assert resampled_run_means(matrix, twice, missing="zero").tolist() == [[5 / 6, 0.0]]
    assert resampled_run_means(matrix, twice, missing="skip").tolist() == [[5 / 6, 0.0]]
    with pytest.raises(ValueError, match="zero or skip"):
        exact_run_means(matrix, missing="drop")


def test_topic_draws_are_seeded_resamples_with_replacement():
    draws = topic_draws(7, samples=50, seed=3)
    assert draws.shape == (50, 7) and (draws.sum(axis=1) == 7).all()
    assert (draws == topic_draws(7, samples=50, seed=3)).all()
    assert not (draws == topic_draws(7, samples=50, seed=4)).all()


# --- independent implementations ------------------------------------------------------------


def ircor_tau_ap_b(x, y):
    """tau_ap_b as Urbano and Marrero's ircor computes it: ranks of the negated scores, pair by pair."""

    def given(x, y):
        rx = stats.rankdata(-x)
        ry = stats.rankdata(-y, "ordinal")
        p = stats.rankdata(-y, "min") - 1
        total, counted = 0.0, 0
        for i in range(len(p)):
            if p[i] == 0:
                continue
            counted += 1
            above = sum(1 for j in range(len(p)) if p[j] < p[i] and (rx[i] > rx[j]) == (ry[i] > ry[j]))
            total += above / p[i]
        return 2 / counted * total - 1

    return (given(x, y) + given(y, x)) / 2


def loop_tau_gap(x, y):
    """tau_GAP as autojudge-evaluate 1.1.0 writes it: positions of the predicted order, one loop each."""
    order = sorted(range(len(x)), key=lambda k: (-y[k], k))
    total, positions = 0.0, 0
    for i in range(1, len(x)):
        gaps = sum(abs(x[order[j]] - x[order[i]]) for j in range(i))
        right = sum(x[order[j]] - x[order[i]] for j in range(i) if x[order[j]] > x[order[i]])
        if gaps > 0:
            total += right / gaps
            positions += 1
    return 2 * total / positions - 1 if positions else float("nan")


def loop_top_k(x, y, k):
    order = sorted(range(len(x)), key=lambda i: -x[i])[:k]
    return stats.kendalltau([x[i] for i in order], [y[i] for i in order]).statistic


@pytest.mark.parametrize("seed", range(30))
def test_every_coefficient_matches_an_independent_implementation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    x = rng.random(n)
    y = x + rng.normal(0, 0.3, n)
    if seed % 2:
        # Ties, as scores of few nuggets have.
        x, y = np.round(x * 5) / 5, np.round(y * 5) / 5
    if len(set(x)) < 2 or len(set(y)) < 2:
        return
    got = {name: float(values[0]) for name, values in coefficients(x, y, top_k=5).items()}
    assert got["tau"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert got["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert got["tau_ap"] == pytest.approx(ircor_tau_ap_b(x, y), abs=1e-12)
    assert got["tau_gap"] == pytest.approx(loop_tau_gap(x, y), abs=1e-12)
    top = loop_top_k(x, y, 5)
    assert got["tau_top_k"] == pytest.approx(top, abs=1e-12) or (math.isnan(top) and math.isnan(got["tau_top_k"]))


def test_batches_equal_one_leaderboard_at_a_time():
    rng = np.random.default_rng(9)
    xs, ys = rng.random((20, 15)), rng.random((20, 15))
    for function in (tau_b, spearman, pearson, tau_ap_b, tau_gap):
        batch = function(xs, ys)
        assert batch == pytest.approx([float(function(x, y)[0]) for x, y in zip(xs, ys, strict=True)], abs=1e-14)


def test_bootstrap_intervals_match_a_plain_loop_over_the_same_resamples():
    rng = np.random.default_rng(5)
    a = rng.random((12, 9))
    b = a + rng.normal(0, 0.2, a.shape)
    a[0, 3] = np.nan  # a run that missed a topic in a
    draws = topic_draws(9, samples=200, seed=11)
    got = bootstrap_intervals(a, b, missing="zero", samples=200, seed=None, top_k=5, draws=draws, chunk=64)
    taus, pearsons, gaps = [], [], []
    for counts in draws:
        topics = np.repeat(np.arange(9), counts.astype(int))
        mean_a = [sum(0.0 if np.isnan(a[r, t]) else a[r, t] for t in topics) / len(topics) for r in range(12)]
        mean_b = [sum(b[r, t] for t in topics) / len(topics) for r in range(12)]
        taus.append(stats.kendalltau(mean_a, mean_b).statistic)
        pearsons.append(stats.pearsonr(mean_a, mean_b).statistic)
        gaps.append(loop_tau_gap(mean_a, mean_b))
    assert got["tau"] == pytest.approx((np.percentile(taus, 2.5), np.percentile(taus, 97.5)), abs=1e-12)
    assert got["pearson"] == pytest.approx((np.percentile(pearsons, 2.5), np.percentile(pearsons, 97.5)), abs=1e-12)
    assert got["tau_gap"] == pytest.approx((np.percentile(gaps, 2.5), np.percentile(gaps, 97.5)), abs=1e-12)


# --- exact ties: run means of the scores' fractions ------------------------------------------

# Scores in thirds. Runs 0 and 1 both have the mean 7/9 (1/3 + 1 + 1 = 2/3 + 2/3 + 1 = 7/3), but the floats'
# means, even summed exactly, differ in the last bit (checked below): 0.7777777777777778 and 0.7777777777777777.
THIRDS = np.array([[1, 3, 3], [2, 2, 3], [0, 1, 1], [3, 3, 2]])
TIED_A = THIRDS / 3
# Constant rows: the means are the values, 0.9, 0.5, 0.1, 0.8.
TIED_B = np.array([[0.9] * 3, [0.5] * 3, [0.1] * 3, [0.8] * 3])


def fsum_means(matrix, counts):
    """Each run's mean over the drawn topics, its floats summed exactly (math.fsum) over the topics as drawn."""
    return [math.fsum(np.repeat(row, counts.astype(int)).tolist()) / counts.sum() for row in matrix]


def fraction_means(numerators, denominators, counts):
    """Each run's mean of the fractions numerator/denominator over the drawn topics (missing topics count 0)."""
    drawn = counts.astype(int)
    return [
        sum((Fraction(int(n), int(d)) * int(c) for n, d, c in zip(row, den, drawn, strict=True)), Fraction(0))
        / int(drawn.sum())
        for row, den in zip(numerators, denominators, strict=True)
    ]


def test_means_of_fractions_tie_where_float_means_split_and_tau_keeps_the_tie():
    # The case can fail: the floats' own means split runs 0 and 1.
    split = fsum_means(TIED_A, np.ones(3))
    assert split[0] != split[1]
    means = exact_run_means(TIED_A, missing="zero")
    assert means.tolist() == [7 / 9, 7 / 9, 2 / 9, 8 / 9]
    b = exact_run_means(TIED_B, missing="zero")
    assert b.tolist() == [0.9, 0.5, 0.1, 0.8]
    # By hand, a's order 3 > 0 = 1 > 2, b's 0 > 3 > 1 > 2: of the 6 pairs, (0, 1) tied in a, (0, 3) discordant,
    # the other 4 concordant: tau-b = (4 - 1) / sqrt((6 - 1) x 6) = 3 / sqrt(30).
    assert one(tau_b, means, b) == pytest.approx(3 / math.sqrt(30), abs=1e-15)
    # Split (0 above 1, as b has them), the pair would be concordant: (5 - 1) / 6.
    assert one(tau_b, split, b) == pytest.approx(4 / 6, abs=1e-15)
    # tau_ap_b(a|b): run 3 is beaten in b by 0, which a puts below it (0/1); run 1 by 0 and 3, of which a puts
    # only 3 above it (1/2); run 2 by all three, above it in a too (3/3): 2 x (1.5 / 3) - 1 = 0.
    # tau_ap_b(b|a): run 0 is beaten in a by 3 only (1 ties it), below it in b (0/1); run 1 by 3 (1/1); run 2
    # by 3, 0, 1 (3/3): 2 x (2 / 3) - 1 = 1/3. tau_ap_b is their mean, 1/6.
    assert one(tau_ap_b, means, b) == pytest.approx(1 / 6, abs=1e-15)


def test_resampled_means_order_every_pair_as_the_fractions_do():
    """On every resample of a small table with ties, each pair of runs compares (<, =, >) as their means of
    the fractions do; float means, even summed exactly, split some of those ties."""
    rng = np.random.default_rng(3)
    denominators = rng.choice([3, 5, 7, 14, 168], size=(12, 6))
    numerators = rng.integers(0, denominators + 1)
    matrix = numerators / denominators
    draws = topic_draws(6, samples=300, seed=5)
    means = resampled_run_means(matrix, draws, missing="zero")
    assert len(draws) == len(means) == 300
    tied_pairs = split_by_floats = 0
    for sample, counts in enumerate(draws):
        exact = fraction_means(numerators, denominators, counts)
        floats = fsum_means(matrix, counts)
        assert means[sample].tolist() == [float(mean) for mean in exact]
        for i in range(12):
            for j in range(i + 1, 12):
                assert np.sign(means[sample, i] - means[sample, j]) == np.sign(exact[i] - exact[j])
                if exact[i] == exact[j]:
                    tied_pairs += 1
                    split_by_floats += floats[i] != floats[j]
    # The case can fail: the table ties runs on resamples, and the floats' means split some of those ties.
    assert tied_pairs > 0 and split_by_floats > 0


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_bootstrap_intervals_rank_tied_runs_as_their_exact_means_do(missing):
    draws = topic_draws(3, samples=400, seed=4)
    a = TIED_A.copy()
    a[2, 1] = np.nan  # a topic run 2 did not answer: 0 under "zero", left out under "skip"
    got = bootstrap_intervals(a, TIED_B, missing=missing, samples=400, seed=None, top_k=2, draws=draws)
    answered = ~np.isnan(a)
    taus, spearmans, tied = [], [], 0
    for counts in draws:
        drawn = counts.astype(int)
        mean_a = []
        for row, has in zip(THIRDS, answered, strict=True):
            total = sum(
                (Fraction(int(n), 3) * int(c) for n, c, h in zip(row, drawn, has, strict=True) if h), Fraction(0)
            )
            taken = int(drawn.sum()) if missing == "zero" else int(drawn[has].sum())
            mean_a.append(float(total / taken) if taken else 0.0)
        mean_b = [0.9, 0.5, 0.1, 0.8]
        tied += mean_a[0] == mean_a[1]
        taus.append(stats.kendalltau(mean_a, mean_b).statistic)
        spearmans.append(stats.spearmanr(mean_a, mean_b).statistic)
    assert tied > 0
    assert got["tau"] == pytest.approx((np.percentile(taus, 2.5), np.percentile(taus, 97.5)), abs=1e-15)
    assert got["spearman"] == pytest.approx((np.percentile(spearmans, 2.5), np.percentile(spearmans, 97.5)), abs=1e-15)


def test_resampled_means_skip_unanswered_topics_exactly():
    matrix = TIED_A.copy()
    matrix[0, 2] = np.nan
    draws = topic_draws(3, samples=50, seed=2)
    means = resampled_run_means(matrix, draws, missing="skip")
    assert len(draws) == len(means) == 50
    for sample, counts in enumerate(draws):
        drawn = counts.astype(int)
        answered = int(drawn[:2].sum())
        expected = Fraction(int(THIRDS[0, 0] * drawn[0] + THIRDS[0, 1] * drawn[1]), 3 * answered) if answered else 0
        assert means[sample, 0] == float(expected)


def test_means_of_values_beyond_any_small_fraction_are_exact_too():
    """Values that are no fraction of a small denominator are taken as the floats they are, their sums exactly
    (past 2^53, in Python integers): 2^-60 beside 1/3 and 10^10/7; a run of small fractions beside them."""
    matrix = np.array([[2.0**-60, 1 / 3, 1e10 / 7], [0.5, 0.25, 1 / 3], [1e-300, 0.5, 0.123456789123]])
    draws = topic_draws(3, samples=40, seed=8)
    means = resampled_run_means(matrix, draws, missing="zero")
    values = [
        [Fraction(2**-60), Fraction(1, 3), Fraction(10**10, 7)],
        [Fraction(1, 2), Fraction(1, 4), Fraction(1, 3)],
        [Fraction(1e-300), Fraction(1, 2), Fraction(0.123456789123)],
    ]
    assert len(means) == 40
    for sample, counts in enumerate(draws):
        drawn = [int(c) for c in counts]
        expected = [float(sum((v * c for v, c in zip(row, drawn, strict=True)), Fraction(0)) / 3) for row in values]
        assert means[sample].tolist() == expected


def test_identical_leaderboards_have_intervals_at_one():
    a = np.random.default_rng(2).random((10, 6))
    intervals = bootstrap_intervals(a, a.copy(), missing="zero", samples=100, seed=1, top_k=5)
    assert sorted(intervals) == ["pearson", "spearman", "tau", "tau_ap", "tau_gap", "tau_top_k"]
    assert all(interval == pytest.approx((1.0, 1.0)) for interval in intervals.values())


@pytest.mark.parametrize("seed", range(20))
def test_tau_gap_with_ties_on_both_sides_matches_the_position_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    x, y = rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)
    expected = loop_tau_gap(list(x), list(y))
    got = one(tau_gap, x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)


def autojudge_tau_gap():
    """autojudge-evaluate 1.1.0's tau_gap, its module loaded by path (requirements-reference.txt installs the
    package without dependencies; its package import reaches for data on the network)."""
    import importlib.util
    from pathlib import Path

    package = importlib.util.find_spec("autojudge_evaluate")
    assert package is not None and package.submodule_search_locations, "bin/venv-ready installs autojudge-evaluate"
    path = Path(next(iter(package.submodule_search_locations))) / "tau_gap.py"
    spec = importlib.util.spec_from_file_location("autojudge_evaluate_tau_gap", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tau_gap


@pytest.mark.parametrize("seed", range(30))
def test_tau_gap_equals_autojudge_evaluate_on_tied_and_untied_leaderboards(seed):
    reference = autojudge_tau_gap()
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 40))
    if seed % 2:  # ties on both sides
        x, y = rng.integers(0, 5, n).astype(float), rng.integers(0, 5, n).astype(float)
    else:
        x, y = rng.random(n), rng.random(n)
    expected = reference(list(x), list(y))
    got = one(tau_gap, x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-15)


def test_tau_gap_of_the_issue_s_example_is_autojudge_evaluate_s():
    assert autojudge_tau_gap()([4, 3, 2, 1], [1, 4, 3, 2]) == pytest.approx(one(tau_gap, [4, 3, 2, 1], [1, 4, 3, 2]))
