"""A kept comparison brought up to date by what changed in its sources, rather than computed again.

A comparison's figures are made of two sources' scores, one cell per (run, topic) each. A
refresh of a kept source (assessor.scoring.kept) deletes the kept rows of its scope and
writes new ones, whose ids no row ever had (AUTOINCREMENT on SQLite, a sequence on
PostgreSQL), and a row's values never change once written. So a topic whose kept rows
changed has another set of row ids, which the database tells in one aggregate a topic
(`fingerprints`: how many rows, the sum, least and greatest of their ids), without a
row being read.

Beside the page, a kept comparison keeps its `Cells` (pickled, `KeptComparison.cells`):
both sources' per-topic matrices of the compared metrics and the fingerprint of each
topic as read, each run's exact sum of its scores over the selected topics, and each
topic's tau-b, Spearman and Pearson. After a source changes, `cells_update` reads the
sources' fingerprints, reads the rows of the topics whose fingerprint changed (146 rows a
topic at TREC scale) and from the kept aggregates computes:

- each run's exact sum again by the changed cells' differences (fractions, so the means
  are a full computation's to the last bit), then the run-level coefficients of the run
  means (146 runs: array operations);
- the per-topic figures of the topics with a changed cell, and the per-topic averages
  of every topic's kept figures, in the order a full computation takes them;
- the all-pairs figures from the kept matrices (array operations on every pair, in a
  full computation's order);
- the plots' points.

What is not brought up to date by it (`ComparisonPage.complete` False until then): the
95% bootstrap intervals (every resample's run means move with any changed cell, and the
coefficients of a thousand resamples are most of a full computation's time), and the
confusion matrix and descriptive table, which are counts of the labels, not of the
scores (the database counts them again: seconds at TREC scale). The worker computes
them next (`metaeval.comparison_page.page_complete`: the intervals from the kept
matrices, no score read again), and the page says meanwhile that they are of the labels
before the change.

A change the kept cells cannot take (a run or topic new to both matrices, a run gone from
both, a source whose metrics changed) is computed in full, as is a comparison of sources
whose scores are not their kept rows as they stand (score tables, other families' sources).
"""

import math
import pickle
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
from django.db.models import Count, Max, Min, Sum

from assessor.models import KeptAnswerScore, KeptSource
from assessor.scoring.exact import mean_of_sum, score_fraction
from assessor.scoring.kept import source_name
from assessor.scoring.lifecycle import open_included
from assessor.scoring.scores import Scores
from metaeval.comparison import Comparison
from metaeval.sources import CONDITIONS, METHODS, Source, SourceKind, source_family, sources_confusion
from metaeval.stats import (
    RUN_COEFFICIENTS,
    PairedScores,
    Resamples,
    TauOptions,
    TauResult,
    TopicFigures,
    _bootstrap_intervals,
    _coefficients_stacked,
    kendall_tau_b,
    paired_build,
    topic_figures_compute,
    topic_level_from,
)

# The sources whose scores are their kept rows as they stand (assignment's and support's selectors read
# kept_scores unchanged); another family may shape its kept rows (grades, ARGUE-style) and is computed in full.
INCREMENTAL_FAMILIES = (CONDITIONS, METHODS)


def cells_kept_source(source: Source) -> KeptSource | None:
    """The kept source whose rows are the source's scores as they stand, or None (computed in full then)."""
    if open_included() or source.kind not in (SourceKind.CONDITION, SourceKind.SUPPORT):
        return None
    family = source_family(source)
    if family.name not in INCREMENTAL_FAMILIES:
        return None
    columns = (source.nuggets, source.assigner) if source.kind is SourceKind.CONDITION else (source.name,)
    return KeptSource.objects.filter(family=family.name, name=source_name(columns)).first()


Fingerprint = tuple[int, int, int, int]  # a topic's kept rows: how many, the sum, least and greatest of their ids


def fingerprints(source: KeptSource) -> dict[str, Fingerprint]:
    """topic id -> the fingerprint of the source's kept rows there, counted by the database (one row a topic).

    A refresh replaces every row of its scope by new rows, whose ids no row ever had, so a topic whose rows
    changed has another set of ids, and its count or sum or ends tell. Read before the scores: a row written
    between the two is in a topic whose fingerprint the comparison has not kept, read again at its next update."""
    rows = (
        KeptAnswerScore.objects.filter(source=source)
        .order_by()
        .values("topic_id")
        .annotate(n=Count("id"), total=Sum("id"), least=Min("id"), most=Max("id"))
        .values_list("topic_id", "n", "total", "least", "most")
    )
    return {topic: (n, int(total), least, most) for topic, n, total, least, most in rows}


@dataclass
class Side:
    """One source as the comparison last read it."""

    kept: int  # its KeptSource pk
    metrics: tuple[str, ...]  # the source's metrics
    names: dict[str, str]  # the comparison's metric -> the source's
    fingerprints: dict[str, Fingerprint]  # each topic's kept rows, as read
    present: np.ndarray  # runs x topics: whether the source has a kept row there
    topics: frozenset[str]  # the source's evaluated topics
    sums: dict[str, list[Fraction]]  # the comparison's metric -> each run's exact sum over the selected topics
    answered: np.ndarray  # each run's scored cells among the selected topics


CELLS_VERSION = 1
CELLS_COMPRESSION = 1  # zlib's level


@dataclass
class Cells:
    """What a kept comparison's figures are made of (see the module's docstring)."""

    paired: PairedScores  # the matrices, runs and topics, and the shared runs and topics
    options: TauOptions
    metrics: list[str]
    a: Side
    b: Side
    figures: dict[str, TopicFigures]  # each metric's per-topic figures
    version: int = 1  # CELLS_VERSION when kept: cells of another shape are not read (computed in full)

    def dumps(self) -> bytes:
        # Compressed at zlib's fastest level: at TREC scale the matrices are 5 MB that shrink to a quarter in 40 ms,
        # where the database's own compression of the column took a quarter of a second of each update's write.
        return zlib.compress(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL), CELLS_COMPRESSION)


def _decompressed(data: bytes) -> bytes:
    """Kept cells as `Cells.dumps` wrote them; those kept before they were compressed are the pickle itself."""
    try:
        return zlib.decompress(data)
    except zlib.error:
        return data


def cells_loads(data: bytes | memoryview | None) -> Cells | None:
    if data is None:
        return None
    try:
        cells = pickle.loads(_decompressed(bytes(data)))  # noqa: S301 (written by cells_build only, never from outside)
    except Exception:  # kept by an older version of the code
        return None
    return cells if isinstance(cells, Cells) and cells.__dict__.get("version") == CELLS_VERSION else None


def _selected(paired: PairedScores, options: TauOptions) -> np.ndarray:
    """Bool over the topics: those both sources evaluate, within the chosen subset."""
    selected = np.zeros(len(paired.topics), dtype=bool)
    selected[paired.shared_topics] = True
    if options.topics is not None:
        selected &= np.array([topic in options.topics for topic in paired.topics], dtype=bool)
    return selected


def _sums(matrix: np.ndarray, selected: np.ndarray) -> list[Fraction]:
    """Each run's exact sum of its scores on the selected topics."""
    return [
        sum((score_fraction(value) for value in row[selected & ~np.isnan(row)].tolist()), Fraction(0)) for row in matrix
    ]


def _present(scores: Scores, paired: PairedScores) -> np.ndarray:
    run_index = {run: i for i, run in enumerate(paired.runs)}
    topic_index = {topic: i for i, topic in enumerate(paired.topics)}
    present = np.zeros((len(paired.runs), len(paired.topics)), dtype=bool)
    for run, topic in scores.per_topic:
        present[run_index[run], topic_index[topic]] = True
    return present


def _names(scores: Scores, metrics: Sequence[str], side: int) -> dict[str, str]:
    """The comparison's metric -> the source's (`A=B` compares a's A with b's B)."""
    return {metric: (metric.partition("=")[2 * side] if "=" in metric else metric) for metric in metrics}


def cells_build(comparison: Comparison, kept: tuple[KeptSource, KeptSource], prints: tuple[dict, dict]) -> Cells | None:
    """The cells of a comparison just computed in full from its sources' kept scores, `prints` (their topics'
    fingerprints) read before them."""
    metrics = [tau.metric for tau in comparison.taus]
    scores = (comparison.scores_a, comparison.scores_b)
    if not metrics or not all(each.per_topic for each in scores):
        return None
    options = comparison.options
    paired = paired_build(scores[0], scores[1], metrics)
    selected = _selected(paired, options)
    sides = []
    for place, (source, each, matrices) in enumerate(zip(kept, scores, (paired.a, paired.b), strict=True)):
        sides.append(
            Side(
                kept=source.pk,
                metrics=tuple(source.metrics),
                names=_names(each, metrics, place),
                fingerprints=prints[place],
                present=_present(each, paired),
                topics=frozenset(each.topics),
                sums={metric: _sums(matrices[metric], selected) for metric in metrics},
                answered=(~np.isnan(matrices[metrics[0]][:, selected])).sum(axis=1),
            )
        )
    figures = {}
    for metric in metrics:
        x, y, scored = _topic_major(paired, metric, options)
        figures[metric] = TopicFigures.empty(len(paired.topics))
        topic_figures_compute(x, y, scored, figures[metric])
    return Cells(
        paired=paired, options=options, metrics=metrics, a=sides[0], b=sides[1], figures=figures, version=CELLS_VERSION
    )


def _topic_major(paired: PairedScores, metric: str, options: TauOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """topics x runs copies of both matrices and of the cells both scored (within the chosen topics)."""
    x_matrix, y_matrix = paired.a[metric], paired.b[metric]
    scored = ~np.isnan(x_matrix) & ~np.isnan(y_matrix)
    if options.topics is not None:
        scored &= np.array([topic in options.topics for topic in paired.topics])[None, :]
    return x_matrix.T.copy(), y_matrix.T.copy(), scored.T.copy()


# --- bringing the cells up to date --------------------------------------------------------------


@dataclass(frozen=True)
class Changes:
    cells: int  # cells whose row changed, both sources together
    topics: int  # topics where one did


def cells_update(cells: Cells, kept: tuple[KeptSource, KeptSource]) -> Changes | None:
    """Bring the cells up to date with their sources' kept rows (read now); None when they cannot take the change
    (compute in full then)."""
    paired, options, metrics = cells.paired, cells.options, cells.metrics
    topic_index = {topic: i for i, topic in enumerate(paired.topics)}
    run_index = {run: i for i, run in enumerate(paired.runs)}
    old_selected = _selected(paired, options)
    changed_topics = np.zeros(len(paired.topics), dtype=bool)
    changed_cells = 0
    old_matrices: list[dict[str, np.ndarray]] = []
    for side, source, matrices in zip((cells.a, cells.b), kept, (paired.a, paired.b), strict=True):
        if source.pk != side.kept or tuple(source.metrics) != side.metrics:
            return None
        prints = fingerprints(source)
        if any(topic not in topic_index for topic in prints):
            return None  # a topic new to both: the matrices take no new column
        changed = sorted(
            topic for topic in set(prints) | set(side.fingerprints) if prints.get(topic) != side.fingerprints.get(topic)
        )
        old_matrices.append({metric: matrix.copy() for metric, matrix in matrices.items()})
        rows = _topic_rows(source, changed)
        if any(run not in run_index for run, _, _ in rows):
            return None  # a run new to both: the matrices take no new row
        columns = [topic_index[topic] for topic in changed]
        side.present[:, columns] = False
        for matrix in matrices.values():
            matrix[:, columns] = np.nan
        for run, topic, values in rows:
            row, column = run_index[run], topic_index[topic]
            side.present[row, column] = True
            for metric in metrics:
                value = values.get(side.names[metric])
                matrices[metric][row, column] = np.nan if value is None else value
        for metric in metrics:
            before, after = old_matrices[-1][metric][:, columns], matrices[metric][:, columns]
            differ = (before != after) & ~(np.isnan(before) & np.isnan(after))
            changed_cells += int(differ.sum()) if metric == metrics[0] else 0
            changed_topics[columns] |= differ.any(axis=0)
        side.fingerprints = prints
        side.topics = frozenset(source.topics)
    # The runs and topics both sources have, as their scores list them: runs with a kept row, evaluated topics.
    has_a, has_b = cells.a.present.any(axis=1), cells.b.present.any(axis=1)
    if not (has_a | has_b).all():
        return None  # a run gone from both: a full computation no longer lists it
    paired.shared_runs = np.flatnonzero(has_a & has_b)
    both_topics = cells.a.topics & cells.b.topics
    paired.shared_topics = np.array([i for i, topic in enumerate(paired.topics) if topic in both_topics], dtype=int)
    selected = _selected(paired, options)
    # The run sums: the difference of each affected column, old cells (if selected before) to new (if now).
    affected = np.flatnonzero(changed_topics | (selected != old_selected))
    for side, old, matrices in zip((cells.a, cells.b), old_matrices, (paired.a, paired.b), strict=True):
        for metric in metrics:
            sums = side.sums[metric]
            for column in affected.tolist():
                nothing = [math.nan] * len(sums)
                was_column: list[float] = old[metric][:, column].tolist() if old_selected[column] else nothing
                now_column: list[float] = matrices[metric][:, column].tolist() if selected[column] else nothing
                for place, (was, now) in enumerate(zip(was_column, now_column, strict=True)):
                    if was == now or (math.isnan(was) and math.isnan(now)):
                        continue
                    if not math.isnan(was):
                        sums[place] -= score_fraction(was)
                    if not math.isnan(now):
                        sums[place] += score_fraction(now)
        side.answered = (~np.isnan(matrices[metrics[0]][:, selected])).sum(axis=1)
    which = np.flatnonzero(changed_topics)
    if len(which):
        for metric in metrics:
            x, y, scored = _topic_major(paired, metric, options)
            topic_figures_compute(x, y, scored, cells.figures[metric], which)
    return Changes(cells=changed_cells, topics=len(which))


def _topic_rows(source: KeptSource, topics: list[str]) -> list[tuple[str, str, dict[str, float]]]:
    """The source's kept rows in these topics: (run id, topic id, values)."""
    if not topics:
        return []
    rows = KeptAnswerScore.objects.filter(source=source, topic_id__in=topics).order_by()
    return list(rows.values_list("run__run_id", "topic_id", "values"))


# --- the figures from the cells -----------------------------------------------------------------


def _run_means(cells: Cells, side: Side) -> dict[str, np.ndarray]:
    """Each metric's means of the shared runs on the selected topics, as rankcorr.exact_run_means gives them."""
    paired, options = cells.paired, cells.options
    selected = _selected(paired, options)
    count = int(selected.sum())
    if not count or not len(paired.shared_runs):
        return {metric: np.empty(0) for metric in cells.metrics}
    runs = paired.shared_runs.tolist()
    if options.missing == "zero":
        counts = [count] * len(runs)
    else:
        counts = side.answered[runs].tolist()
    return {
        metric: np.array([mean_of_sum(side.sums[metric][run], n) for run, n in zip(runs, counts, strict=True)])
        for metric in cells.metrics
    }


def cells_taus(cells: Cells, intervals: Sequence[dict[str, tuple[float, float]]]) -> list[TauResult]:
    """Each metric's figures from the cells, with the given intervals (the kept ones, or computed anew)."""
    paired, options = cells.paired, cells.options
    means_a, means_b = _run_means(cells, cells.a), _run_means(cells, cells.b)
    point = _coefficients_stacked(
        np.array([means_a[m] for m in cells.metrics]), np.array([means_b[m] for m in cells.metrics]), options
    )
    taus = []
    for place, metric in enumerate(cells.metrics):
        x, y, scored = _topic_major(paired, metric, options)
        level: dict[str, Any] = topic_level_from(cells.figures[metric], x, y, scored)
        coefficients: dict[str, Any] = {
            name: float(point[c][place]) for name, c in RUN_COEFFICIENTS.items() if name != "tau_run"
        }
        taus.append(
            TauResult(
                metric=metric,
                tau_run=kendall_tau_b(means_a[metric], means_b[metric]),
                runs=len(means_a[metric]),
                ci95=dict(intervals[place]) if place < len(intervals) else {},
                **level,
                **coefficients,
            )
        )
    return taus


def intervals_compute(cells: Cells) -> list[dict[str, tuple[float, float]]]:
    """Each metric's 95% bootstrap intervals from the kept matrices, as a full computation draws them."""
    paired, options = cells.paired, cells.options
    selected = np.flatnonzero(_selected(paired, options))
    if options.bootstrap <= 0 or not len(selected):
        return [{} for _ in cells.metrics]
    resamples = Resamples.draw(len(selected), samples=options.bootstrap, seed=options.seed)
    if not len(paired.shared_runs):
        return [{} for _ in cells.metrics]
    rows, columns = np.ix_(paired.shared_runs, selected)
    matrices = [(paired.a[metric][rows, columns], paired.b[metric][rows, columns]) for metric in cells.metrics]
    return [
        {name: found[coefficient] for name, coefficient in RUN_COEFFICIENTS.items()}
        for found in _bootstrap_intervals(matrices, resamples, options)
    ]


def run_points_of(cells: Cells, metric: str) -> list[tuple[float, float]]:
    """The run-level plot's points: (mean in a, mean in b) of each shared run."""
    means_a, means_b = _run_means(cells, cells.a)[metric], _run_means(cells, cells.b)[metric]
    return list(zip(means_a.tolist(), means_b.tolist(), strict=True))


def pair_points_of(cells: Cells, metric: str) -> list[tuple[float, float]]:
    """The all-pairs plot's points: every (run, topic) both scored, by run then topic (metaeval.stats.pair_points)."""
    x, y = cells.paired.a[metric], cells.paired.b[metric]
    rows, columns = np.nonzero(~np.isnan(x) & ~np.isnan(y))
    return list(zip(x[rows, columns].tolist(), y[rows, columns].tolist(), strict=True))


def confusion_again(comparison: Comparison, partial_yes: bool) -> Comparison:
    """The comparison with its confusion matrix counted again (Krippendorff's alphas computed, to be kept)."""
    confusion = sources_confusion(comparison.a, comparison.b, partial_yes=partial_yes) if comparison.confusion else None
    if confusion is not None:
        confusion.alpha_ordinal  # noqa: B018
        confusion.alpha_nominal  # noqa: B018
    return replace(comparison, confusion=confusion)
