"""The meta-evaluation's numbers, as plain functions over plain data (no ORM).

Kendall's tau is tau-b, as `scipy.stats.kendalltau` computes it, with Knight's
O(n log n) counting so that the all-pairs variant (tens of thousands of
topic/run pairs) stays fast; the confusion matrix and Cohen's kappa are the
textbook ones, with weighted kappa and Krippendorff's alpha beside them
(metaeval.agreement). The other run-level coefficients and their bootstrap
intervals are in metaeval.rankcorr.
"""

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np

from assessor.scoring.scores import Scores
from metaeval import rankcorr
from metaeval.agreement import alpha_nominal, alpha_ordinal, kappa_weighted

NAN = float("nan")


def nan_as_none(value: float) -> float | None:
    """A figure for JSON and templates: NaN (undefined, e.g. a tau of a constant ranking) becomes None."""
    return None if math.isnan(value) else value


# --- Kendall's tau-b ------------------------------------------------------------------


@dataclass(frozen=True)
class PairCounts:
    """The pair counts tau-b is made of; `n0` is the number of pairs."""

    n: int
    concordant: int
    discordant: int
    ties_x: int  # pairs tied in x (including those tied in both)
    ties_y: int  # pairs tied in y (including those tied in both)
    ties_xy: int  # pairs tied in both

    @property
    def n0(self) -> int:
        return self.n * (self.n - 1) // 2

    @property
    def tau_b(self) -> float:
        denominator = (self.n0 - self.ties_x) * (self.n0 - self.ties_y)
        if denominator <= 0:
            # A constant ranking: tau is undefined (scipy says nan too).
            return NAN
        return (self.concordant - self.discordant) / math.sqrt(denominator)


def _inversions(ranks: np.ndarray) -> int:
    """Pairs i < j with ranks[i] > ranks[j], by a bottom-up merge sort done a level at a time in numpy."""
    n = len(ranks)
    values = ranks.astype(np.int64)
    positions = np.arange(n, dtype=np.int64)
    inversions = 0
    width = 1
    while width < n:
        block = positions // width  # blocks of `width`, each sorted
        pair = block // 2
        is_left = block % 2 == 0
        # Keys sort within each pair of blocks and keep pairs apart.
        keys = pair * n + values
        left_keys = keys[is_left]
        right_keys = keys[~is_left]
        if len(right_keys):
            # For each right element: left elements of its pair greater than it.
            not_greater = np.searchsorted(left_keys, right_keys, side="right")
            left_end = np.searchsorted(left_keys, (pair[~is_left] + 1) * n, side="left")
            inversions += int((left_end - not_greater).sum())
        # Merge: each pair of sorted blocks becomes one sorted block.
        values = np.sort(keys, kind="stable") - pair * n
        width *= 2
    return inversions


SMALL_SAMPLE = 400


def _tau_b_small(xs: np.ndarray, ys: np.ndarray) -> float:
    """tau-b from the signs of all pairwise differences: O(n^2), but quicker for a topic's runs."""
    sx = np.sign(np.subtract.outer(xs, xs))
    sy = np.sign(np.subtract.outer(ys, ys))
    # Over the full matrix every pair counts twice, which the ratio cancels.
    denominator = float(np.count_nonzero(sx)) * float(np.count_nonzero(sy))
    if denominator <= 0:
        return NAN
    # An elementwise product, not np.dot: a BLAS call here costs threads, not time saved.
    sx *= sy
    return float(sx.sum()) / math.sqrt(denominator)


TABLE_CELLS = 1 << 20


def _pair_counts_table(x_ranks: np.ndarray, y_ranks: np.ndarray, shape: tuple[int, int]) -> tuple[int, int]:
    """Concordant and discordant pairs from the table of (x rank, y rank) counts.

    Scores take few distinct values (Vstrict of 20 nuggets has at most 21), so
    the table is small and the counts cost cumulative sums over it.
    """
    rows, columns = shape
    table = np.bincount(x_ranks * columns + y_ranks, minlength=rows * columns).reshape(shape).astype(np.int64)
    # below[i, j]: items with a greater x rank than i and y rank j.
    below = np.zeros_like(table)
    below[:-1] = table[::-1].cumsum(axis=0)[::-1][1:]
    # greater[i, j]: items with greater x and greater y; lesser[i, j]: greater x, lesser y.
    greater = np.zeros_like(table)
    greater[:, :-1] = below[:, ::-1].cumsum(axis=1)[:, ::-1][:, 1:]
    lesser = np.zeros_like(table)
    lesser[:, 1:] = below.cumsum(axis=1)[:, :-1]
    return int((table * greater).sum()), int((table * lesser).sum())


def pair_counts(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *, method: str = "auto"
) -> PairCounts:
    """Concordant, discordant and tied pairs of two paired samples.

    `method`: "table" counts over the table of distinct values (quick when they
    are few, as scores' are), "merge" by Knight's merge sort (any data); "auto"
    picks by the table's size.
    """
    if len(x) != len(y):
        raise ValueError(f"the two samples differ in length ({len(x)} and {len(y)})")
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    n = len(xs)
    if n < 2:
        return PairCounts(n=n, concordant=0, discordant=0, ties_x=0, ties_y=0, ties_xy=0)
    x_values, x_ranks, x_counts = np.unique(xs, return_inverse=True, return_counts=True)
    y_values, y_ranks, y_counts = np.unique(ys, return_inverse=True, return_counts=True)
    x_ranks, y_ranks = x_ranks.reshape(-1), y_ranks.reshape(-1)
    ties_x = int((x_counts * (x_counts - 1) // 2).sum())
    ties_y = int((y_counts * (y_counts - 1) // 2).sum())
    joint = np.unique(x_ranks.astype(np.int64) * len(y_values) + y_ranks, return_counts=True)[1]
    ties_xy = int((joint * (joint - 1) // 2).sum())
    n0 = n * (n - 1) // 2
    shape = (len(x_values), len(y_values))
    if method == "table" or (method == "auto" and shape[0] * shape[1] <= TABLE_CELLS):
        concordant, discordant = _pair_counts_table(x_ranks, y_ranks, shape)
    else:
        # Sorted by x, then y: a strict inversion in y is a discordant pair (ties in x
        # are in increasing y, so they never count).
        order = np.lexsort((y_ranks, x_ranks))
        discordant = _inversions(y_ranks[order])
        concordant = n0 - ties_x - ties_y + ties_xy - discordant
    return PairCounts(n=n, concordant=concordant, discordant=discordant, ties_x=ties_x, ties_y=ties_y, ties_xy=ties_xy)


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    if len(x) != len(y):
        raise ValueError(f"the two samples differ in length ({len(x)} and {len(y)})")
    if len(x) <= SMALL_SAMPLE:
        return _tau_b_small(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return pair_counts(x, y).tau_b


# --- Kendall's tau between two score sources, three ways ------------------------------


@dataclass(frozen=True)
class TauResult:
    metric: str
    tau_run: float  # runs ranked by their mean scores
    tau_topic_avg: float  # mean of per-topic taus over the topics where tau is defined
    tau_all: float  # all topic/run pairs as independent observations
    runs: int  # runs in both sources (run level)
    topics: int  # topics in both sources
    topics_with_tau: int  # topics where the per-topic tau is defined (>= 2 runs, not constant)
    pairs: int  # topic/run pairs in both sources
    # The other run-level coefficients (metaeval.rankcorr), the top k runs being source a's.
    spearman_run: float = NAN
    pearson_run: float = NAN
    tau_ap_run: float = NAN
    tau_gap_run: float = NAN
    tau_top_k_run: float = NAN
    spearman_topic_avg: float = NAN
    pearson_topic_avg: float = NAN
    spearman_all: float = NAN
    pearson_all: float = NAN
    # 95% bootstrap intervals over topics: coefficient name ("tau_run", ...) -> (low, high); empty if none.
    ci95: dict[str, tuple[float, float]] = field(default_factory=dict)


RUN_COEFFICIENTS = {
    "tau_run": "tau",
    "spearman_run": "spearman",
    "pearson_run": "pearson",
    "tau_ap_run": "tau_ap",
    "tau_gap_run": "tau_gap",
    "tau_top_k_run": "tau_top_k",
}


@dataclass(frozen=True)
class TauOptions:
    """How the run-level figures are made: the topics, the missing-topic rule, k and the bootstrap."""

    top_k: int = 10
    top_k_of: str = "a"  # whose top k runs tau_top_k is over: "a", or "b" (a truth given as b)
    bootstrap: int = 0  # resamples of the topics for the 95% intervals; 0: none
    seed: int | None = None
    missing: str = "zero"  # "zero": a topic a run did not answer counts 0; "skip": mean over its answered topics
    topics: frozenset[str] | None = None  # a subset of the topics; None: all both sources scored


@dataclass
class PairedScores:
    """Two sources' scores of some metrics as run x topic arrays (NaN where a source has no score).

    Built once per comparison, so that the taus of all metrics cost array
    operations, not a dictionary lookup per run, topic and metric.
    """

    runs: list[str]
    topics: list[str]
    a: dict[str, np.ndarray]
    b: dict[str, np.ndarray]
    shared_runs: np.ndarray  # row indexes of the runs both sources list
    shared_topics: np.ndarray  # column indexes of the topics both sources evaluated


def _values_table(values: list[dict[str, float]], metrics: Sequence[str]) -> np.ndarray:
    """answers x metrics, NaN where an answer lacks a metric."""
    if not values:
        return np.empty((0, len(metrics)))
    if len(metrics) == 1:
        return np.fromiter((v.get(metrics[0], NAN) for v in values), dtype=float, count=len(values))[:, None]
    getter = itemgetter(*metrics)
    try:
        # Every answer of a source has every metric: one C-level lookup per answer.
        return np.array([getter(v) for v in values], dtype=float)
    except KeyError:
        return np.array([[v.get(metric, NAN) for metric in metrics] for v in values], dtype=float)


def _matrix(scores: Scores, metrics: Sequence[str], run_index: dict, topic_index: dict) -> dict[str, np.ndarray]:
    shape = (len(run_index), len(topic_index))
    keys = list(scores.per_topic)
    rows = np.fromiter((run_index[run] for run, _ in keys), dtype=np.int64, count=len(keys))
    columns = np.fromiter((topic_index[topic] for _, topic in keys), dtype=np.int64, count=len(keys))
    table = _values_table(list(scores.per_topic.values()), metrics)
    matrices = {}
    for position, metric in enumerate(metrics):
        matrix = np.full(shape, np.nan)
        matrix[rows, columns] = table[:, position]
        matrices[metric] = matrix
    return matrices


def paired_build(a: Scores, b: Scores, metrics: Sequence[str]) -> PairedScores:
    runs = sorted({run for run, _ in a.per_topic} | {run for run, _ in b.per_topic} | set(a.runs) | set(b.runs))
    topics = sorted(
        {topic for _, topic in a.per_topic} | {topic for _, topic in b.per_topic} | set(a.topics) | set(b.topics)
    )
    run_index = {run: i for i, run in enumerate(runs)}
    topic_index = {topic: i for i, topic in enumerate(topics)}
    both_runs = set(a.runs) & set(b.runs)
    both_topics = set(a.topics) & set(b.topics)
    return PairedScores(
        runs=runs,
        topics=topics,
        a=_matrix(a, metrics, run_index, topic_index),
        b=_matrix(b, metrics, run_index, topic_index),
        shared_runs=np.array([run_index[run] for run in runs if run in both_runs], dtype=int),
        shared_topics=np.array([topic_index[topic] for topic in topics if topic in both_topics], dtype=int),
    )


def _selected_topics(paired: PairedScores, options: TauOptions) -> np.ndarray:
    if options.topics is None:
        return paired.shared_topics
    return np.array([i for i in paired.shared_topics if paired.topics[i] in options.topics], dtype=int)


def _paired_run_matrices(
    paired: PairedScores, metric: str, options: TauOptions
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The shared runs and their scores on the selected topics (runs x topics, NaN where unanswered)."""
    topics = _selected_topics(paired, options)
    if not len(topics) or not len(paired.shared_runs):
        return [], np.empty((0, 0)), np.empty((0, 0))
    rows, columns = np.ix_(paired.shared_runs, topics)
    return (
        [paired.runs[i] for i in paired.shared_runs],
        paired.a[metric][rows, columns],
        paired.b[metric][rows, columns],
    )


def _paired_run_means(
    paired: PairedScores, metric: str, options: TauOptions = TauOptions()
) -> tuple[list[str], np.ndarray, np.ndarray]:
    runs, a, b = _paired_run_matrices(paired, metric, options)
    if not runs:
        return [], np.empty(0), np.empty(0)
    return (
        runs,
        rankcorr.exact_run_means(a, missing=options.missing),
        rankcorr.exact_run_means(b, missing=options.missing),
    )


def _table_run_means(a: Scores, b: Scores, metric: str) -> list[tuple[str, float, float]]:
    return [
        (run, a.run_means[run][metric], b.run_means[run][metric])
        for run in sorted(set(a.run_means) & set(b.run_means))
        if metric in a.run_means[run] and metric in b.run_means[run]
    ]


def run_points(a: Scores, b: Scores, metric: str, options: TauOptions = TauOptions()) -> list[tuple[str, float, float]]:
    """(run, mean in a, mean in b) for the runs both sources have: the run-level points.

    Where both sources have per-topic scores, the means are taken again over the
    topics both evaluated (a run's missing answer counts 0, as in the official
    scores), so that a condition judged on 21 topics is compared with another on
    the same 21. Where either has only run means (a table of `all` rows), those.
    """
    if not (a.per_topic and b.per_topic):
        return _table_run_means(a, b, metric)
    runs, xs, ys = _paired_run_means(paired_build(a, b, [metric]), metric, options)
    return list(zip(runs, xs.tolist(), ys.tolist(), strict=True))


def pair_points(a: Scores, b: Scores, metric: str) -> list[tuple[str, str, float, float]]:
    """(run, topic, score in a, score in b) for every topic/run pair both sources scored."""
    shared = []
    for key, a_values in a.per_topic.items():
        b_values = b.per_topic.get(key)
        if b_values is None or metric not in a_values or metric not in b_values:
            continue
        shared.append((key[0], key[1], a_values[metric], b_values[metric]))
    shared.sort()
    return shared


@dataclass
class TopicFigures:
    """Each topic's tau-b, Spearman and Pearson over the runs both sources scored there (topics in the matrices'
    order; NaN where a topic has none), and whether every run was scored there: what the per-topic averages are
    made of, kept by a comparison so that a change to some topics computes those topics' figures only."""

    tau: np.ndarray
    spearman: np.ndarray
    pearson: np.ndarray
    full: np.ndarray  # bool: every run scored on the topic (those are computed together, and come first)

    @classmethod
    def empty(cls, topics: int) -> "TopicFigures":
        return cls(np.full(topics, NAN), np.full(topics, NAN), np.full(topics, NAN), np.zeros(topics, dtype=bool))


def topic_figures_compute(
    x: np.ndarray, y: np.ndarray, scored: np.ndarray, figures: TopicFigures, which: np.ndarray | None = None
) -> None:
    """Compute into `figures` the figures of the topics `which` (indexes; None: all). `x`, `y` and `scored` are
    topics x runs. A topic's figures depend on its own row only (the topics every run answered are computed
    together, row by row, as each alone would be)."""
    rows = np.arange(len(x)) if which is None else np.asarray(which, dtype=int)
    per_topic_runs = scored[rows].sum(axis=1)
    full = per_topic_runs == x.shape[1]
    for array in (figures.tau, figures.spearman, figures.pearson):
        array[rows] = NAN
    figures.full[rows] = full
    full_rows = rows[full]
    if len(full_rows) and x.shape[1] >= 2:
        figures.tau[full_rows] = [_tau_b_small(xs, ys) for xs, ys in zip(x[full_rows], y[full_rows], strict=True)]
        figures.spearman[full_rows] = rankcorr.spearman(x[full_rows], y[full_rows])
        figures.pearson[full_rows] = rankcorr.pearson(x[full_rows], y[full_rows])
    for topic in rows[~full & (per_topic_runs >= 2)]:
        have = scored[topic]
        xs, ys = x[topic][have], y[topic][have]
        figures.tau[topic] = kendall_tau_b(xs, ys)
        figures.spearman[topic] = rankcorr.spearman(xs, ys)[0]
        figures.pearson[topic] = rankcorr.pearson(xs, ys)[0]


def topic_level_from(figures: TopicFigures, x: np.ndarray, y: np.ndarray, scored: np.ndarray) -> dict[str, float | int]:
    """The per-topic averages of the topics' figures, and the figures over all topic/run pairs (`x`, `y`, `scored`
    topics x runs).

    Averaged in the order they were always taken: the topics every run answered first, then the others, each
    in topic order (a float mean depends on the order of its terms)."""
    order = np.concatenate([np.flatnonzero(figures.full), np.flatnonzero(~figures.full)])

    def mean_defined(values: np.ndarray) -> tuple[float, int]:
        values = values[order]
        values = values[~np.isnan(values)]
        return (float(values.mean()) if len(values) else NAN), len(values)

    tau_topic_avg, topics_with_tau = mean_defined(figures.tau)
    all_x, all_y = x[scored], y[scored]
    many = len(all_x) >= 2
    return {
        "tau_topic_avg": tau_topic_avg,
        "topics_with_tau": topics_with_tau,
        "spearman_topic_avg": mean_defined(figures.spearman)[0],
        "pearson_topic_avg": mean_defined(figures.pearson)[0],
        "tau_all": kendall_tau_b(all_x, all_y),
        "spearman_all": float(rankcorr.spearman(all_x, all_y)[0]) if many else NAN,
        "pearson_all": float(rankcorr.pearson(all_x, all_y)[0]) if many else NAN,
        "topics": int((scored.sum(axis=1) > 0).sum()),
        "pairs": int(scored.sum()),
    }


def _topic_level(x: np.ndarray, y: np.ndarray, scored: np.ndarray) -> dict[str, float | int]:
    """The per-topic averages of tau-b, Spearman and Pearson, and their values over all topic/run pairs.

    `x`, `y` and `scored` are topics x runs.
    """
    figures = TopicFigures.empty(len(x))
    topic_figures_compute(x, y, scored, figures)
    return topic_level_from(figures, x, y, scored)


BOOTSTRAP_CHUNK_CELLS = 25 * 146 * 146


@dataclass(frozen=True)
class Resamples:
    """The bootstrap's resamples of the topics, each distinct one once: a comparison on a few topics draws the
    same counts again and again (5 topics give at most 126 distinct draws in 1,000), and a draw's coefficients
    are the same each time, so they are computed once a draw and counted as often as it was drawn."""

    distinct: np.ndarray  # (distinct draws, topics): how often each topic is drawn
    each: np.ndarray  # for each resample, in the order drawn, its row of `distinct`

    @classmethod
    def draw(cls, topics: int, *, samples: int, seed: int | None) -> "Resamples":
        draws = rankcorr.topic_draws(topics, samples=samples, seed=seed)
        distinct, each = np.unique(draws, axis=0, return_inverse=True)
        return cls(distinct=distinct, each=np.asarray(each).reshape(-1))


def _coefficients_stacked(x: np.ndarray, y: np.ndarray, options: TauOptions) -> dict[str, np.ndarray]:
    """rankcorr.coefficients of each row pair (the leaderboards of every metric, or of every resample of every
    metric) in a few calls: each call costs its overhead, and a row's coefficients do not depend on the others.
    In chunks whose runs x runs comparisons are no larger than 25 resamples' at TREC scale (146 runs), as
    rankcorr.bootstrap_intervals takes them there."""
    chunk = max(25, BOOTSTRAP_CHUNK_CELLS // max(1, x.shape[1] ** 2))
    parts: dict[str, list[np.ndarray]] = {name: [] for name in rankcorr.COEFFICIENTS}
    for start in range(0, max(1, len(x)), chunk):
        part = rankcorr.coefficients(
            x[start : start + chunk], y[start : start + chunk], top_k=options.top_k, top_k_of=options.top_k_of
        )
        for name in rankcorr.COEFFICIENTS:
            parts[name].append(part[name])
    return {name: np.concatenate(parts[name]) for name in rankcorr.COEFFICIENTS}


def _percentile_interval(column: np.ndarray) -> tuple[float, float]:
    column = column[~np.isnan(column)]
    if not len(column):
        return (NAN, NAN)
    low, high = np.percentile(column, [2.5, 97.5])
    return (float(low), float(high))


Matrices = list[tuple[np.ndarray, np.ndarray]]


def _bootstrap_intervals(
    matrices: Matrices, resamples: Resamples, options: TauOptions
) -> list[dict[str, tuple[float, float]]]:
    """rankcorr.bootstrap_intervals of each metric's (a, b) runs x topics, on the distinct resamples of all the
    metrics at once, each coefficient's percentiles taken over every resample (a distinct one as often as it
    was drawn): the same intervals, in a fraction of the time."""
    runs, topics = matrices[0][0].shape
    if topics == 0 or runs < 2:
        return [{name: (NAN, NAN) for name in rankcorr.COEFFICIENTS} for _ in matrices]
    means_a = np.vstack(
        [rankcorr.resampled_run_means(a, resamples.distinct, missing=options.missing) for a, _ in matrices]
    )
    means_b = np.vstack(
        [rankcorr.resampled_run_means(b, resamples.distinct, missing=options.missing) for _, b in matrices]
    )
    values = _coefficients_stacked(means_a, means_b, options)
    drawn = len(resamples.distinct)
    return [
        {
            name: _percentile_interval(values[name][place * drawn : (place + 1) * drawn][resamples.each])
            for name in rankcorr.COEFFICIENTS
        }
        for place in range(len(matrices))
    ]


@dataclass(frozen=True)
class _RunLevel:
    """A metric's run means in a and b, their coefficients (RUN_COEFFICIENTS) and 95% intervals."""

    xs: np.ndarray
    ys: np.ndarray
    coefficients: dict[str, float]
    intervals: dict[str, tuple[float, float]]


def _run_levels(
    a: Scores, b: Scores, paired: PairedScores, metrics: Sequence[str], options: TauOptions, resamples: Resamples | None
) -> list[_RunLevel]:
    """Each metric's run level, the coefficients of every metric computed together (the same runs on each)."""
    if not (a.per_topic and b.per_topic):
        return [_table_run_level(a, b, metric, options) for metric in metrics]
    matrices = [_paired_run_matrices(paired, metric, options)[1:] for metric in metrics]
    means = [
        tuple(rankcorr.exact_run_means(m, missing=options.missing) if len(m) else np.empty(0) for m in pair)
        for pair in matrices
    ]
    point = _coefficients_stacked(np.array([x for x, _ in means]), np.array([y for _, y in means]), options)
    intervals: list[dict[str, tuple[float, float]]] = [{} for _ in metrics]
    if resamples is not None and len(matrices[0][0]):
        intervals = [
            {name: found[coefficient] for name, coefficient in RUN_COEFFICIENTS.items()}
            for found in _bootstrap_intervals(matrices, resamples, options)
        ]
    return [
        _RunLevel(xs, ys, {name: float(point[c][place]) for name, c in RUN_COEFFICIENTS.items()}, intervals[place])
        for place, (xs, ys) in enumerate(means)
    ]


def _table_run_level(a: Scores, b: Scores, metric: str, options: TauOptions) -> _RunLevel:
    """The run level of a metric from the run means of a table's `all` rows (no per-topic scores, no intervals)."""
    points = _table_run_means(a, b, metric)
    xs, ys = np.array([p[1] for p in points]), np.array([p[2] for p in points])
    found = rankcorr.coefficients(xs, ys, top_k=options.top_k, top_k_of=options.top_k_of)
    return _RunLevel(xs, ys, {name: float(found[c][0]) for name, c in RUN_COEFFICIENTS.items()}, {})


def _paired_taus(paired: PairedScores, metric: str, options: TauOptions, run_level: _RunLevel) -> TauResult:
    x_matrix, y_matrix = paired.a[metric], paired.b[metric]
    scored = ~np.isnan(x_matrix) & ~np.isnan(y_matrix)
    if options.topics is not None:
        scored &= np.array([topic in options.topics for topic in paired.topics])[None, :]
    # Topic-major copies: a topic's runs are contiguous.
    topic_level = _topic_level(x_matrix.T.copy(), y_matrix.T.copy(), scored.T.copy())
    coefficients: dict[str, Any] = {
        **topic_level,
        **{name: value for name, value in run_level.coefficients.items() if name != "tau_run"},
    }
    return TauResult(
        metric=metric,
        tau_run=kendall_tau_b(run_level.xs, run_level.ys),
        runs=len(run_level.xs),
        ci95=run_level.intervals,
        **coefficients,
    )


def taus_compute_all(
    a: Scores, b: Scores, metrics: Sequence[str], options: TauOptions = TauOptions()
) -> list[TauResult]:
    """The coefficients of each metric (the arrays are built once for all of them, the resamples drawn once)."""
    if not metrics:
        return []
    paired = paired_build(a, b, metrics)
    resamples = None
    topics = len(_selected_topics(paired, options))
    if options.bootstrap > 0 and topics and a.per_topic and b.per_topic:
        resamples = Resamples.draw(topics, samples=options.bootstrap, seed=options.seed)
    run_levels = _run_levels(a, b, paired, metrics, options, resamples)
    return [
        _paired_taus(paired, metric, options, run_level) for metric, run_level in zip(metrics, run_levels, strict=True)
    ]


def taus_compute(a: Scores, b: Scores, metric: str, options: TauOptions = TauOptions()) -> TauResult:
    return taus_compute_all(a, b, [metric], options)[0]


def shared_metrics(a: Scores, b: Scores) -> list[str]:
    """The metrics both sources have, in the first source's order."""
    return [metric for metric in a.metrics if metric in b.metrics]


# --- Confusion matrices -----------------------------------------------------------------


@dataclass
class Confusion:
    """Counts of label pairs: rows the first source's labels, columns the second's."""

    labels: list[str]
    counts: list[list[int]]
    missing_a: int = 0  # pairs only the second source labelled
    missing_b: int = 0  # pairs only the first source labelled
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(sum(row) for row in self.counts)

    @property
    def percentages(self) -> list[list[float]]:
        total = self.total
        return [[100.0 * cell / total if total else 0.0 for cell in row] for row in self.counts]

    @property
    def agreement(self) -> float:
        """Share of pairs labelled alike (0..1)."""
        total = self.total
        if not total:
            return NAN
        return sum(self.counts[i][i] for i in range(len(self.labels))) / total

    @property
    def kappa(self) -> float:
        """Cohen's kappa: (p_o - p_e) / (1 - p_e), p_e from the two sources' marginals."""
        total = self.total
        if not total:
            return NAN
        rows = [sum(row) for row in self.counts]
        columns = [sum(row[j] for row in self.counts) for j in range(len(self.labels))]
        expected = sum(r * c for r, c in zip(rows, columns, strict=True)) / (total * total)
        if expected == 1:
            return NAN  # both sources gave one and the same label throughout
        return (self.agreement - expected) / (1 - expected)

    @property
    def kappa_linear(self) -> float:
        return kappa_weighted(self.counts, weights="linear")

    @property
    def kappa_quadratic(self) -> float:
        return kappa_weighted(self.counts, weights="quadratic")

    @cached_property
    def alpha_ordinal(self) -> float:
        # One unit per labelled pair: worth computing once for a matrix of a million pairs.
        return alpha_ordinal(self.counts)

    @cached_property
    def alpha_nominal(self) -> float:
        return alpha_nominal(self.counts)

    def row_totals(self) -> list[int]:
        return [sum(row) for row in self.counts]

    def column_totals(self) -> list[int]:
        return [sum(row[j] for row in self.counts) for j in range(len(self.labels))]


def confusion_from_counts(counts: Mapping[tuple[str, str], int], labels: Sequence[str]) -> Confusion:
    """A matrix from counts of (first label, second label); pairs with an unlisted label are left out."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for (label_a, label_b), count in counts.items():
        if label_a in index and label_b in index:
            matrix[index[label_a]][index[label_b]] += count
    return Confusion(labels=list(labels), counts=matrix)


Key = TypeVar("Key", bound=Hashable)


def confusion_from_pairs(a: Mapping[Key, str], b: Mapping[Key, str], labels: Sequence[str]) -> Confusion:
    """A matrix over the keys (answer/nugget or citation) both label maps have."""
    counts = Counter((label, b[key]) for key, label in a.items() if key in b)
    confusion = confusion_from_counts(counts, labels)
    confusion.missing_a = sum(1 for key in b if key not in a)
    confusion.missing_b = sum(1 for key in a if key not in b)
    return confusion


# --- Descriptive statistics ---------------------------------------------------------------


@dataclass(frozen=True)
class NuggetRow:
    topic_id: str
    words: int
    importance: str


def nugget_condition_describe(
    nuggets: Sequence[NuggetRow], label_counts: Mapping[str, int], topics: int
) -> dict[str, float | int]:
    """The study's descriptive table for one nugget condition.

    `nuggets` are the nuggets of the condition's topics, `label_counts` the
    condition's assignment labels counted by label, `topics` the topics it labelled.
    """
    total_nuggets = len(nuggets)
    total_labels = sum(label_counts.values())
    importance = Counter(row.importance for row in nuggets)

    def pct(part: int, whole: int) -> float:
        return 100.0 * part / whole if whole else 0.0

    return {
        "topics": topics,
        "avg_nuggets": total_nuggets / topics if topics else 0.0,
        "avg_nugget_words": sum(row.words for row in nuggets) / total_nuggets if total_nuggets else 0.0,
        "pct_vital": pct(importance["vital"], total_nuggets),
        "pct_okay": pct(importance["okay"], total_nuggets),
        "pct_not_support": pct(label_counts.get("not_support", 0), total_labels),
        "pct_partial_support": pct(label_counts.get("partial_support", 0), total_labels),
        "pct_support": pct(label_counts.get("support", 0), total_labels),
    }


def support_method_describe(label_counts: Mapping[int, int], topics: int) -> dict[str, float | int]:
    """Topics, judged pairs and FS/PS/NS counts of a support method (labels 2/1/0; -1 unjudged is left out)."""
    fs, ps, ns = label_counts.get(2, 0), label_counts.get(1, 0), label_counts.get(0, 0)
    return {"topics": topics, "pairs": fs + ps + ns, "FS": fs, "PS": ps, "NS": ns}
