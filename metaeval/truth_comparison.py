"""A source against a truth leaderboard (metaeval.truth): the metric pairs, their figures, and the JSON form.

The judged source and the truth are any two sources (`scores:NAME` for an imported
leaderboard). Each source's run means are its `all` rows; its per-topic scores the
topics' rows (a topic a run did not answer has no row, as in the files the app writes).
"""

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, Max

from assessor.models.keys import published_id
from assessor.models.scope import campaign_in_effect
from assessor.scoring.lifecycle import open_included
from assessor.scoring.scores import Scores
from metaeval.models import ImportedScore, ScoreTable
from metaeval.sources import Source, SourceKind, source_judge, source_load, source_parse, source_stamp
from metaeval.truth import (
    MIN_RUNS,
    ON_MISSING,
    Leaderboard,
    TooFewRuns,
    TopicFigures,
    correlations,
    figure_names,
    per_topic_correlations,
    rankings_align,
)


@dataclass(frozen=True)
class TruthOptions:
    on_missing: str = "error"  # autojudge-evaluate's default
    top_k: int = 10


@dataclass
class MetricPair:
    metric: str  # the judged source's
    truth_metric: str
    runs: int  # aligned runs
    figures: dict[str, float]
    topics: TopicFigures
    missing_in_judged: list[str] = field(default_factory=list)
    missing_in_truth: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.metric if self.metric == self.truth_metric else f"{self.metric}={self.truth_metric}"


@dataclass
class TruthComparison:
    a: Source
    truth: Source
    options: TruthOptions
    pairs: list[MetricPair]


def metric_pairs(scores_a: Scores, scores_truth: Scores, metrics: Sequence[str], *, a: Source, truth: Source):
    """(a's metric, the truth's metric): `A=B` pairs A with B, `M` M with M; none given: every a metric with
    every truth metric, as meta-evaluate pairs them."""
    if not metrics:
        return [(m, t) for m in scores_a.metrics for t in scores_truth.metrics]
    pairs = []
    for text in metrics:
        metric, _, truth_metric = text.partition("=")
        truth_metric = truth_metric or metric
        if metric not in scores_a.metrics:
            raise ValueError(f"{a} has no metric {metric!r}; it has {', '.join(scores_a.metrics) or 'none'}")
        if truth_metric not in scores_truth.metrics:
            raise ValueError(
                f"{truth} has no metric {truth_metric!r}; it has {', '.join(scores_truth.metrics) or 'none'}"
            )
        pairs.append((metric, truth_metric))
    return pairs


def run_leaderboard(scores: Scores, metric: str) -> dict[str, float]:
    """run -> the run's `all` score of `metric`."""
    return {run: means[metric] for run, means in scores.run_means.items() if metric in means}


def topic_leaderboards(scores: Scores, metric: str) -> dict[str, dict[str, float]]:
    """topic -> run -> the run's score on the topic, for the rows there are."""
    topics: dict[str, dict[str, float]] = defaultdict(dict)
    for (run, topic), values in scores.per_topic.items():
        if metric in values:
            topics[topic][run] = values[metric]
    return dict(topics)


def pair_compute(judged: Scores, truth: Scores, metric: str, truth_metric: str, options: TruthOptions) -> MetricPair:
    truth_runs: Leaderboard = run_leaderboard(truth, truth_metric)
    judged_runs: Leaderboard = run_leaderboard(judged, metric)
    aligned = rankings_align(truth_runs, judged_runs, on_missing=options.on_missing)
    try:
        figures = correlations(truth_runs, judged_runs, on_missing=options.on_missing, top_k=options.top_k)
    except TooFewRuns:
        raise ValueError(
            f"{metric} against the truth's {truth_metric}: {len(aligned.runs)} runs to correlate, "
            f"at least {MIN_RUNS} are needed"
        ) from None
    topics = per_topic_correlations(
        topic_leaderboards(truth, truth_metric),
        topic_leaderboards(judged, metric),
        on_missing=options.on_missing,
        top_k=options.top_k,
    )
    return MetricPair(
        metric=metric,
        truth_metric=truth_metric,
        runs=len(aligned.runs),
        figures=figures,
        topics=topics,
        missing_in_judged=aligned.missing_in_judged,
        missing_in_truth=aligned.missing_in_truth,
    )


def truth_build(
    a_text: str, truth_text: str, *, metrics: Sequence[str] = (), options: TruthOptions = TruthOptions()
) -> TruthComparison:
    """`a_text` judged against the truth `truth_text`. SourceError for an unknown source; ValueError for a metric
    a source lacks, an option out of range, fewer than 3 runs; RunsMismatch (a ValueError) under `error`."""
    if options.on_missing not in ON_MISSING:
        raise ValueError(f"unknown missing-run rule {options.on_missing!r}: {', '.join(ON_MISSING)}")
    if options.top_k < MIN_RUNS:
        raise ValueError(f"the top k must be at least {MIN_RUNS} runs")
    a, scores_a = source_load(a_text)
    truth, scores_truth = source_load(truth_text)
    pairs = [
        pair_compute(scores_a, scores_truth, metric, truth_metric, options)
        for metric, truth_metric in metric_pairs(scores_a, scores_truth, metrics, a=a, truth=truth)
    ]
    return TruthComparison(a=a, truth=truth, options=options, pairs=pairs)


# A comparison with a truth computed once is kept (in the cache) under what it was computed from: both sources'
# stamps (a kept source's, made anew by every refresh; a score table's rows' fingerprint, which an import changes).
# At most this long, for what no stamp tells of (a run joined between two score tables, whose ids then match).
TRUTH_KEPT_SECONDS = 600


def _source_stamp(text: str) -> str | None:
    """What changes whenever the source's scores do, or None (open work counted: not kept)."""
    source = source_parse(text)
    if source.kind is SourceKind.SCORES:
        if open_included():
            return None
        # An import adds rows (more of them) or replaces them (new ids, above every id before); a table made
        # again has another creation time.
        found = ImportedScore.objects.filter(table__in=ScoreTable.objects.filter(name=source.name)).aggregate(
            n=Count("id"), most=Max("id"), made=Max("table__created_at")
        )
        return f"table:{source.name}:{found['n']}:{found['most']}:{found['made']}"
    return source_stamp(source)


def truth_kept(
    a_text: str, truth_text: str, *, metrics: Sequence[str] = (), options: TruthOptions = TruthOptions()
) -> TruthComparison:
    """`truth_build`, kept under both sources' stamps: a page viewed again reads no score (tens of thousands of
    rows at TREC scale, a few hundred milliseconds to read and correlate topic by topic)."""
    try:
        stamps = (_source_stamp(a_text), _source_stamp(truth_text))
    except LookupError:  # an unknown source: truth_build says which
        stamps = (None, None)
    if None in stamps:
        return truth_build(a_text, truth_text, metrics=metrics, options=options)
    # Two campaigns may name their sources alike: the campaign in effect is part of the key.
    campaign = campaign_in_effect().pk
    query = [a_text, truth_text, list(metrics), options.on_missing, options.top_k, list(stamps), campaign]
    key = "metaeval:truth:" + hashlib.sha256(json.dumps(query).encode()).hexdigest()
    kept = cache.get(key)
    if isinstance(kept, TruthComparison):
        return kept
    comparison = truth_build(a_text, truth_text, metrics=metrics, options=options)
    cache.set(key, comparison, TRUTH_KEPT_SECONDS)
    return comparison


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def pair_json(pair: MetricPair, top_k: int) -> dict:
    return {
        "metric": pair.metric,
        "truth_metric": pair.truth_metric,
        "runs": pair.runs,
        "missing_in_judged": pair.missing_in_judged,
        "missing_in_truth": pair.missing_in_truth,
        **{name: _number(pair.figures[name]) for name in figure_names(top_k)},
        "per_topic": {
            "mean": {name: _number(value) for name, value in pair.topics.mean.items()},
            "topics_counted": pair.topics.counted,
            "topics_tied": pair.topics.tied,
            "topics": {
                published_id(topic): None
                if figures is None
                else {name: _number(value) for name, value in figures.items()}
                for topic, figures in pair.topics.topics.items()
            },
        },
    }


def truth_json(comparison: TruthComparison) -> dict:
    options = comparison.options
    return {
        "a": str(comparison.a),
        "truth": str(comparison.truth),
        "judges": {"a": source_judge(comparison.a), "truth": source_judge(comparison.truth)},
        "options": {"on_missing": options.on_missing, "top_k": options.top_k},
        "pairs": [pair_json(pair, options.top_k) for pair in comparison.pairs],
    }
