"""The meta-evaluation's numbers, as plain functions over plain data (no ORM).

Kendall's tau is tau-b, as `scipy.stats.kendalltau` computes it, with Knight's
O(n log n) counting so that the all-pairs variant (tens of thousands of
topic/run pairs) stays fast; the confusion matrix and Cohen's kappa are the
textbook ones.
"""

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assessor.scores import Scores

NAN = float("nan")


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


def _tied_pairs(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def _tied_pairs_rows(matrix: np.ndarray) -> int:
    _, counts = np.unique(matrix, axis=0, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


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


def pair_counts(x: Sequence[float], y: Sequence[float]) -> PairCounts:
    """Concordant, discordant and tied pairs of two paired samples."""
    if len(x) != len(y):
        raise ValueError(f"the two samples differ in length ({len(x)} and {len(y)})")
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    n = len(xs)
    if n < 2:
        return PairCounts(n=n, concordant=0, discordant=0, ties_x=0, ties_y=0, ties_xy=0)
    ties_x = _tied_pairs(xs)
    ties_y = _tied_pairs(ys)
    ties_xy = _tied_pairs_rows(np.column_stack([xs, ys]))
    # Sorted by x, then y: a strict inversion in y is a discordant pair (ties in x
    # are in increasing y, so they never count).
    order = np.lexsort((ys, xs))
    y_ranks = np.unique(ys, return_inverse=True)[1].reshape(-1)[order]
    discordant = _inversions(y_ranks)
    n0 = n * (n - 1) // 2
    concordant = n0 - ties_x - ties_y + ties_xy - discordant
    return PairCounts(
        n=n, concordant=concordant, discordant=discordant, ties_x=ties_x, ties_y=ties_y, ties_xy=ties_xy
    )


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
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


def run_points(a: Scores, b: Scores, metric: str) -> list[tuple[str, float, float]]:
    """(run, mean in a, mean in b) for the runs both sources have: the run-level points.

    Where both sources have per-topic scores, the means are taken again over the
    topics both evaluated (a run's missing answer counts 0, as in the official
    scores), so that a condition judged on 21 topics is compared with another on
    the same 21. Where either has only run means (a table of `all` rows), those.
    """
    if a.per_topic and b.per_topic:
        topics = sorted(set(a.topics) & set(b.topics))
        if not topics:
            return []
        points = []
        for run in sorted(set(a.runs) & set(b.runs)):
            x = sum(a.per_topic.get((run, topic), {}).get(metric, 0.0) for topic in topics) / len(topics)
            y = sum(b.per_topic.get((run, topic), {}).get(metric, 0.0) for topic in topics) / len(topics)
            points.append((run, x, y))
        return points
    return [
        (run, a.run_means[run][metric], b.run_means[run][metric])
        for run in sorted(set(a.run_means) & set(b.run_means))
        if metric in a.run_means[run] and metric in b.run_means[run]
    ]


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


def taus_compute(a: Scores, b: Scores, metric: str) -> TauResult:
    runs = run_points(a, b, metric)
    pairs = pair_points(a, b, metric)
    by_topic: dict[str, tuple[list[float], list[float]]] = {}
    for _run, topic, x, y in pairs:
        xs, ys = by_topic.setdefault(topic, ([], []))
        xs.append(x)
        ys.append(y)
    topic_taus = [kendall_tau_b(xs, ys) for xs, ys in by_topic.values() if len(xs) >= 2]
    defined = [tau for tau in topic_taus if not math.isnan(tau)]
    return TauResult(
        metric=metric,
        tau_run=kendall_tau_b([p[1] for p in runs], [p[2] for p in runs]),
        tau_topic_avg=sum(defined) / len(defined) if defined else NAN,
        tau_all=kendall_tau_b([p[2] for p in pairs], [p[3] for p in pairs]),
        runs=len(runs),
        topics=len(by_topic),
        topics_with_tau=len(defined),
        pairs=len(pairs),
    )


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


def confusion_from_pairs(
    a: Mapping[Hashable, str], b: Mapping[Hashable, str], labels: Sequence[str]
) -> Confusion:
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


def support_method_describe(label_counts: Mapping[int, int], topics: int) -> dict[str, int]:
    """Topics, judged pairs and FS/PS/NS counts of a support method (labels 2/1/0; -1 unjudged is left out)."""
    fs, ps, ns = label_counts.get(2, 0), label_counts.get(1, 0), label_counts.get(0, 0)
    return {"topics": topics, "pairs": fs + ps + ns, "FS": fs, "PS": ps, "NS": ns}
