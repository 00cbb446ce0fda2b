"""Correlations of two leaderboards, computed for many leaderboards at once (pure numpy, no ORM).

Every function takes two arrays of shape (samples, runs), one leaderboard per
row, and returns one coefficient per row: the point estimate is one row, a
bootstrap is a thousand. Higher scores rank first. A coefficient that is
undefined (a constant leaderboard, fewer than two runs) is NaN.

- tau-b: Kendall's tau-b, as `scipy.stats.kendalltau` computes it.
- Pearson's r and Spearman's rho (Pearson's r of the average ranks), as
  `scipy.stats.pearsonr` and `spearmanr` compute them.
- tau_ap_b: the AP correlation of Yilmaz, Aslam and Robertson (2008) in the
  tie-aware form of Urbano and Marrero (ICTIR 2017), as their `ircor` package
  and the TREC AutoJudge tools compute it: the mean of tau_ap_b(x|y) and
  tau_ap_b(y|x), where tau_ap_b(x|y) takes each run i that some run beats in
  y, counts the runs j that beat it in both y and x, divides by the runs that
  beat it in y, and scales the mean of those shares from [0, 1] to [-1, 1].
- tau_GAP (Gao and Oard, SIGIR 2015), as autojudge-evaluate 1.1.0 computes it
  (the tool the AutoJudge tables were made with): the first leaderboard (x, the
  truth) supplies the gaps, the second (y) the order. The runs are taken in y's
  order, ties broken by position (run-id order); for each run i, the runs j
  ahead of it in that order weigh |x_j - x_i|, and its term is the share of that
  weight on the pairs x orders the same way (x_j > x_i). A run with no weight
  ahead of it (the first, or tied in x with all above it) has no term; tau_GAP
  is 2 x the mean term - 1.
- tau over the top k: Kendall's tau-b over the k runs ranked first by x, or by y
  when `top_k_of` is "b" (ties at the boundary broken by position).
"""

import numpy as np

from assessor.scoring.exact import common_denominator

COEFFICIENTS = ("tau", "spearman", "pearson", "tau_ap", "tau_gap", "tau_top_k")


def _rows(values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[None, :] if array.ndim == 1 else array


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def pearson(x, y) -> np.ndarray:
    x, y = _rows(x), _rows(y)
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    product = (dx * dx).sum(axis=1) * (dy * dy).sum(axis=1)
    # Clip rounding past +-1, as scipy does.
    return np.clip(_ratio((dx * dy).sum(axis=1), np.sqrt(product)), -1.0, 1.0)


def spearman(x, y) -> np.ndarray:
    x, y = _rows(x), _rows(y)
    # Imported here: scipy.stats costs every command a second and a half to import, and only this needs it.
    from scipy.stats import rankdata  # type: ignore[import-untyped]  # SciPy ships no type information

    return pearson(rankdata(x, axis=1), rankdata(y, axis=1))


def _above(values: np.ndarray) -> np.ndarray:
    """[s, i, j]: run j scores above run i in leaderboard s."""
    return values[:, None, :] > values[:, :, None]


class _Pairs:
    """The pair comparisons of a batch of leaderboard pairs, shared by tau-b, tau_ap_b and tau_GAP.

    For an ordered pair (i, j) with j above i in x, the pair is concordant when
    j is above i in y too, discordant when i is above j in y. Counts are kept
    per run i (row sums), from which every coefficient follows.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.y = x, y
        above_x, above_y = _above(x), _above(y)
        self.concordant = above_x & above_y
        self.discordant = above_x & above_y.transpose(0, 2, 1)
        self.above_x = above_x
        self.beaten_x = np.count_nonzero(above_x, axis=2)  # runs above i in x
        self.beaten_y = np.count_nonzero(above_y, axis=2)
        self.both = np.count_nonzero(self.concordant, axis=2)
        self.reversed = np.count_nonzero(self.discordant, axis=2)

    def tau_b(self) -> np.ndarray:
        agreement = (self.both.sum(axis=1) - self.reversed.sum(axis=1)).astype(float)
        untied = self.beaten_x.sum(axis=1).astype(float) * self.beaten_y.sum(axis=1)
        return _ratio(agreement, np.sqrt(untied))

    def tau_ap_b(self) -> np.ndarray:
        return (_tau_ap_given(self.both, self.beaten_y) + _tau_ap_given(self.both, self.beaten_x)) / 2

    def tau_gap(self) -> np.ndarray:
        x, y = self.x, self.y
        runs = x.shape[1]
        # [s, i, j]: run j precedes run i in y's order, ties broken by position (run-id order).
        earlier = np.tri(runs, k=-1, dtype=bool)[None, :, :]
        ahead = (y[:, None, :] > y[:, :, None]) | ((y[:, None, :] == y[:, :, None]) & earlier)
        gains = ahead & self.above_x  # ahead in y, above in x: the pair is ordered as x orders it
        losses = ahead & self.above_x.transpose(0, 2, 1)  # ahead in y, below in x

        def gap_sum(mask: np.ndarray) -> np.ndarray:
            # The sum over the runs j in mask[s, i] of x_j - x_i.
            return np.einsum("sij,sj->si", mask, x) - x * np.count_nonzero(mask, axis=2)

        correct = gap_sum(gains)
        gaps = correct - gap_sum(losses)  # every |x_j - x_i| of the runs ahead
        counted = gaps > 0
        terms = np.where(counted, correct / np.where(counted, gaps, 1), 0.0).sum(axis=1)
        return 2 * _ratio(terms, counted.sum(axis=1).astype(float)) - 1


def _tau_ap_given(both: np.ndarray, beaten: np.ndarray) -> np.ndarray:
    """tau_ap_b(x|y) from, per run, the runs above it in y (`beaten`) and above it in both (`both`)."""
    counted = beaten > 0
    shares = np.where(counted, both / np.where(counted, beaten, 1), 0.0).sum(axis=1)
    return 2 * _ratio(shares, counted.sum(axis=1).astype(float)) - 1


def tau_b(x, y) -> np.ndarray:
    return _Pairs(_rows(x), _rows(y)).tau_b()


def tau_ap_b(x, y) -> np.ndarray:
    return _Pairs(_rows(x), _rows(y)).tau_ap_b()


def tau_ap_b_directions(x, y) -> tuple[np.ndarray, np.ndarray]:
    """tau_ap_b(x|y) and tau_ap_b(y|x) apart, each NaN where its given ranking ties every run."""
    pairs = _Pairs(_rows(x), _rows(y))
    return _tau_ap_given(pairs.both, pairs.beaten_y), _tau_ap_given(pairs.both, pairs.beaten_x)


def tau_gap(x, y) -> np.ndarray:
    return _Pairs(_rows(x), _rows(y)).tau_gap()


def tau_top_k(x, y, k: int) -> np.ndarray:
    x, y = _rows(x), _rows(y)
    if x.shape[1] <= k:
        return tau_b(x, y)
    top = np.argsort(-x, axis=1, kind="stable")[:, :k]
    return tau_b(np.take_along_axis(x, top, axis=1), np.take_along_axis(y, top, axis=1))


def coefficients(x, y, *, top_k: int, top_k_of: str = "a") -> dict[str, np.ndarray]:
    """Every run-level coefficient of each row pair, by name (COEFFICIENTS); tau_top_k over x's top k, or y's
    (`top_k_of` "b": tau-b is symmetric, so the two swap)."""
    x, y = _rows(x), _rows(y)
    if x.shape[1] < 2:
        nothing = np.full(x.shape[0], np.nan)
        return {name: nothing for name in COEFFICIENTS}
    pairs = _Pairs(x, y)
    return {
        "tau": pairs.tau_b(),
        "spearman": spearman(x, y),
        "pearson": pearson(x, y),
        "tau_ap": pairs.tau_ap_b(),
        "tau_gap": pairs.tau_gap(),
        "tau_top_k": tau_top_k(x, y, top_k) if top_k_of == "a" else tau_top_k(y, x, top_k),
    }


# --- run means and their bootstrap over topics ----------------------------------------------


def exact_run_means(matrix: np.ndarray, *, missing: str) -> np.ndarray:
    """Each run's mean over every topic (a row of `matrix`): the point estimate, as `resampled_run_means`
    takes it on the one sample that draws each topic once."""
    return resampled_run_means(matrix, np.ones((1, matrix.shape[1])), missing=missing)[0]


def resampled_run_means(matrix: np.ndarray, draws: np.ndarray, *, missing: str) -> np.ndarray:
    """Each run's mean on each resample of topics: (samples, topics) draw counts x (runs, topics) -> (samples, runs).

    A mean is that of the scores' fractions (`assessor.scoring.exact`), rounded to a float once, so runs
    whose means are the same number tie on every resample, as they do in exact arithmetic: summed as
    floats, in a matrix product's order or even exactly (`math.fsum`), the means of 1/3, 1, 1 and of
    2/3, 2/3, 1 differ in their last bit. `matrix` holds NaN where a run did not answer a topic.
    `missing="zero"` counts such a topic as 0 in the denominator (the track's rule); `missing="skip"`
    averages over the topics the run answered (0 if none).
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"unknown missing-topic rule {missing!r}: zero or skip")
    answered = ~np.isnan(matrix)
    fractions = [common_denominator(row[has].tolist()) for row, has in zip(matrix, answered, strict=True)]
    drawn = draws.sum(axis=1, keepdims=True)
    counts = np.repeat(drawn, len(matrix), axis=1) if missing == "zero" else draws @ answered.T.astype(float)
    most = int(drawn.max(initial=0.0))
    small = np.array([_fits_floats(*fraction, most=most) for fraction in fractions], dtype=bool)
    means = np.zeros((len(draws), len(matrix)))
    if small.any():
        numerator_matrix = np.zeros((int(small.sum()), matrix.shape[1]))
        for place, run in enumerate(np.flatnonzero(small)):
            numerator_matrix[place, answered[run]] = fractions[run][0]
        denominators = np.array([fractions[run][1] for run in np.flatnonzero(small)], dtype=float)
        taken = counts[:, small]
        sums = draws @ numerator_matrix.T
        means[:, small] = np.where(taken > 0, sums / np.where(taken > 0, denominators * taken, 1.0), 0.0)
    for run in np.flatnonzero(~small):
        numerators, denominator = fractions[run]
        totals = _integer_sums(draws[:, answered[run]], numerators)
        means[:, run] = [
            total / (denominator * int(count)) if count else 0.0
            for total, count in zip(totals, counts[:, run], strict=True)
        ]
    return means


_EXACT_INTEGERS = 2**53
_LIMB_BITS = 26


def _fits_floats(numerators: list[int], denominator: int, *, most: int) -> bool:
    """Whether a run's sums of at most `most` draws of its numerators, and its denominator times that many,
    stay below 2^53: a float holds every integer below it, so a product of draw counts and such numerators
    is exact in any order, and its quotient by such a denominator correctly rounded."""
    return max(map(abs, numerators), default=0) * most < _EXACT_INTEGERS and denominator * most < _EXACT_INTEGERS


def _integer_sums(weights: np.ndarray, numerators: list[int]) -> list[int]:
    """weights @ numerators (weights: draw counts), exactly, as Python ints: the numerators cut into limbs of
    26 bits, whose weighted sums stay below 2^53 (a resample draws fewer than 2^27 topics), so that one float
    product per limb gives them exactly."""
    signs = np.array([-1.0 if n < 0 else 1.0 for n in numerators])
    mask = (1 << _LIMB_BITS) - 1
    totals = [0] * len(weights)
    for place in range(0, max(map(abs, numerators), default=0).bit_length(), _LIMB_BITS):
        limb = np.array([(abs(n) >> place) & mask for n in numerators], dtype=float) * signs
        parts = (weights @ limb).astype(np.int64).tolist()
        totals = [total + (part << place) for total, part in zip(totals, parts, strict=True)]
    return totals


def topic_draws(topics: int, *, samples: int, seed: int | None) -> np.ndarray:
    """(samples, topics) counts of how often each topic is drawn, resampling topics with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, topics, size=(samples, topics))
    offsets = np.arange(samples)[:, None] * topics
    return np.bincount((draws + offsets).ravel(), minlength=samples * topics).reshape(samples, topics).astype(float)


def bootstrap_intervals(
    a: np.ndarray,
    b: np.ndarray,
    *,
    missing: str,
    samples: int,
    seed: int | None,
    top_k: int,
    top_k_of: str = "a",
    draws: np.ndarray | None = None,
    chunk: int = 25,
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of every run-level coefficient, resampling the topics (columns) of a and b.

    `a` and `b` are runs x topics (NaN where a run has no score); `draws` may
    be given so that several metrics share one set of resamples.
    """
    if a.shape[1] == 0 or a.shape[0] < 2 or samples <= 0:
        return {name: (np.nan, np.nan) for name in COEFFICIENTS}
    if draws is None:
        draws = topic_draws(a.shape[1], samples=samples, seed=seed)
    means_a = resampled_run_means(a, draws, missing=missing)
    means_b = resampled_run_means(b, draws, missing=missing)
    values: dict[str, list[np.ndarray]] = {name: [] for name in COEFFICIENTS}
    # In chunks, so that the runs x runs comparisons of a chunk stay in the cache, and its arrays stay small (at
    # 146 runs, a chunk of 100 resamples held 54 MB of them at its peak, of 25 44 MB, in less time).
    for start in range(0, len(draws), chunk):
        part = coefficients(
            means_a[start : start + chunk], means_b[start : start + chunk], top_k=top_k, top_k_of=top_k_of
        )
        for name in COEFFICIENTS:
            values[name].append(part[name])
    intervals = {}
    for name in COEFFICIENTS:
        column = np.concatenate(values[name])
        column = column[~np.isnan(column)]
        intervals[name] = (
            (float(np.percentile(column, 2.5)), float(np.percentile(column, 97.5))) if len(column) else (np.nan, np.nan)
        )
    return intervals
