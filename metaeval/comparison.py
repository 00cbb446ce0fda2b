"""A comparison of two sources: the taus per metric and the confusion matrix, and their JSON and CSV forms."""

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assessor.models.keys import KEY_SEPARATOR, published_id, topic_keys
from assessor.scoring.scores import Scores
from metaeval.sources import (
    Source,
    labels_comparable,
    source_describe,
    source_judge,
    source_load,
    source_parse,
    source_require,
    sources_confusion,
)
from metaeval.stats import (
    RUN_COEFFICIENTS,
    Confusion,
    TauOptions,
    TauResult,
    nan_as_none,
    pair_points,
    run_points,
    shared_metrics,
    taus_compute_all,
)

# The figures of each metric, in the order the JSON, the CSV and the page give them.
TOPIC_FIGURES = ("tau_topic_avg", "tau_all", "spearman_topic_avg", "spearman_all", "pearson_topic_avg", "pearson_all")
COUNTS = ("runs", "topics", "topics_with_tau", "pairs")

DEFAULT_OPTIONS = TauOptions()  # frozen: one shared default is safe


@dataclass
class Comparison:
    a: Source
    b: Source
    scores_a: Scores
    scores_b: Scores
    taus: list[TauResult]
    confusion: Confusion | None
    options: TauOptions = TauOptions()


class TopicsError(ValueError):
    """A topic subset that names unknown topics or a source without topics."""


def topics_resolve(*, topics: Sequence[str] = (), topics_of: str = "") -> frozenset[str] | None:
    """The topic subset: the topics listed (as the campaign's files name them), or the topics source `topics_of`
    scored (None: no subset); as the topics' stored keys in the campaign in effect."""
    if topics_of:
        _source, scores = source_load(topics_of)
        chosen = set(scores.topics) | {topic for _, topic in scores.per_topic}
        if not chosen:
            raise TopicsError(f"{topics_of} has no per-topic scores to take the topics of")
        return frozenset(chosen)
    if topics:
        listed = [topic.strip() for topic in topics if topic.strip()]
        if refused := [topic for topic in listed if KEY_SEPARATOR in topic]:
            raise TopicsError(f"a topic id may not hold {KEY_SEPARATOR!r}: {refused[0]!r}")
        return frozenset(topic_keys(listed).values())
    return None


def _renamed(scores: Scores, names: dict[str, str]) -> Scores:
    """The scores with metrics renamed (`names`: old -> new); the others are left out."""
    return Scores(
        metrics=tuple(names[metric] for metric in scores.metrics if metric in names),
        per_topic={
            key: {names[m]: v for m, v in values.items() if m in names} for key, values in scores.per_topic.items()
        },
        run_means={
            run: {names[m]: v for m, v in values.items() if m in names} for run, values in scores.run_means.items()
        },
        topics=scores.topics,
        runs=scores.runs,
    )


def metrics_paired(
    scores_a: Scores, scores_b: Scores, pairs: Sequence[str], *, a: Source, b: Source
) -> tuple[Scores, Scores]:
    """Two sources whose metrics are named differently, compared metric by metric: each `A=B` of `pairs`
    compares a's metric A with b's metric B, under the name `A=B` (a Borda count with a truth's RELEVANCE)."""
    names_a: dict[str, str] = {}
    names_b: dict[str, str] = {}
    for pair in pairs:
        metric_a, _, metric_b = pair.partition("=")
        if metric_a not in scores_a.metrics:
            raise ValueError(f"{a} has no metric {metric_a!r}; it has {', '.join(scores_a.metrics) or 'none'}")
        if metric_b not in scores_b.metrics:
            raise ValueError(f"{b} has no metric {metric_b!r}; it has {', '.join(scores_b.metrics) or 'none'}")
        names_a[metric_a] = names_b[metric_b] = pair
    return _renamed(scores_a, names_a), _renamed(scores_b, names_b)


def _options_check(options: TauOptions) -> None:
    if options.missing not in ("zero", "skip"):
        raise ValueError(f"unknown missing-topic rule {options.missing!r}: zero or skip")
    if options.top_k < 2:
        raise ValueError("--top-k must be at least 2")
    if options.top_k_of not in ("a", "b"):
        raise ValueError(f"the top k are a's or b's, not {options.top_k_of!r}")


def _labels_compare(a_text: str, b_text: str, *, confusion: bool, options: TauOptions, partial_yes: bool) -> Comparison:
    """A comparison without scores or taus: the label matrix alone, when asked for."""
    a, b = source_parse(a_text), source_parse(b_text)
    source_require(a)
    source_require(b)
    empty = Scores(metrics=())
    return Comparison(
        a=a,
        b=b,
        scores_a=empty,
        scores_b=empty,
        taus=[],
        confusion=sources_confusion(a, b, partial_yes=partial_yes) if confusion else None,
        options=options,
    )


def comparison_build(
    a_text: str,
    b_text: str,
    *,
    metrics: Sequence[str] | None = None,
    scores: bool = True,
    confusion: bool = True,
    options: TauOptions = DEFAULT_OPTIONS,
    partial_yes: bool = False,
) -> Comparison:
    """Compare two sources for the given metrics (default: every metric both have).

    A metric `A=B` compares a's metric A with b's metric B (sources that name their metrics differently).
    `scores=False` skips loading the scores and the taus, `confusion=False` the
    label matrix (a download that needs one part only). `partial_yes`: a support
    method's PS counts as yes against a yes/no family (FS alone by default). Raises SourceError for
    an unknown source and ValueError for a metric one of them lacks.
    """
    _options_check(options)
    if not scores:
        return _labels_compare(a_text, b_text, confusion=confusion, options=options, partial_yes=partial_yes)
    a, scores_a = source_load(a_text)
    b, scores_b = source_load(b_text)
    pairs = [metric for metric in metrics or () if "=" in metric]
    if pairs:
        scores_a, scores_b = metrics_paired(scores_a, scores_b, pairs, a=a, b=b)
    shared = shared_metrics(scores_a, scores_b)
    # Labels that answer one question under scores named otherwise (a support method and yes/no judgments) still
    # compare: the matrix, with no tau unless metrics are paired.
    if not shared and (metrics or not labels_comparable(a, b)):
        raise ValueError(
            f"{a} and {b} share no metric to compare: {a} has {', '.join(scores_a.metrics) or 'none'}; "
            f"{b} has {', '.join(scores_b.metrics) or 'none'}"
        )
    if metrics:
        missing = [metric for metric in metrics if metric not in shared]
        if missing:
            raise ValueError(
                f"metric {', '.join(missing)} is not in both {a} and {b}; shared metrics: {', '.join(shared) or 'none'}"
            )
        shared = list(metrics)
    taus = taus_compute_all(scores_a, scores_b, shared, options) if shared else []
    return Comparison(
        a=a,
        b=b,
        scores_a=scores_a,
        scores_b=scores_b,
        taus=taus,
        confusion=sources_confusion(a, b, partial_yes=partial_yes) if confusion else None,
        options=options,
    )


def confusion_json(confusion: Confusion | None) -> dict | None:
    if confusion is None:
        return None
    return {
        "labels": confusion.labels,
        "counts": confusion.counts,
        "percentages": confusion.percentages,
        "agreement": nan_as_none(confusion.agreement),
        "kappa": nan_as_none(confusion.kappa),
        "kappa_linear": nan_as_none(confusion.kappa_linear),
        "kappa_quadratic": nan_as_none(confusion.kappa_quadratic),
        "alpha_ordinal": nan_as_none(confusion.alpha_ordinal),
        "alpha_nominal": nan_as_none(confusion.alpha_nominal),
        "pairs": confusion.total,
        "only_in_a": confusion.missing_b,
        "only_in_b": confusion.missing_a,
    }


def _interval(interval: tuple[float, float]) -> list[float | None]:
    return [nan_as_none(interval[0]), nan_as_none(interval[1])]


def metric_json(tau: TauResult) -> dict:
    return {
        **{name: nan_as_none(getattr(tau, name)) for name in RUN_COEFFICIENTS},
        **{name: nan_as_none(getattr(tau, name)) for name in TOPIC_FIGURES},
        **{name: getattr(tau, name) for name in COUNTS},
        "ci95": {name: _interval(interval) for name, interval in tau.ci95.items()},
    }


def options_json(options: TauOptions) -> dict:
    return {
        "top_k": options.top_k,
        "top_k_of": options.top_k_of,
        "bootstrap": options.bootstrap,
        "seed": options.seed,
        "missing": options.missing,
        "topics": sorted(options.topics) if options.topics is not None else None,
    }


def comparison_json(comparison: Comparison) -> dict:
    """The shape scripts read: figures per metric (null where undefined) and the confusion matrix or null."""
    return {
        "a": str(comparison.a),
        "b": str(comparison.b),
        # Who labelled each side: two LLM conditions differ by endpoint and model.
        "judges": {"a": source_judge(comparison.a), "b": source_judge(comparison.b)},
        "options": options_json(comparison.options),
        "metrics": {tau.metric: metric_json(tau) for tau in comparison.taus},
        "confusion": confusion_json(comparison.confusion),
    }


def describe_json(texts: Sequence[str]) -> dict[str, dict]:
    return {text: source_describe(source_parse(text)) for text in texts}


# --- CSV downloads -------------------------------------------------------------------------------


def _csv_lines(rows: Iterator[Sequence]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow(["" if isinstance(cell, float) and math.isnan(cell) else cell for cell in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


# Who made each source's labels, last in taus.csv (`source_judge`): for an LLM its endpoint, model and job.
JUDGE_FIELDS = ("kind", "made_by", "endpoint", "model", "prompt_versions", "job")


def _judge_value(value: object) -> object:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else value


def taus_csv(comparison: Comparison) -> Iterator[str]:
    """One row per metric: the three taus and counts first (the columns scripts already read), then the
    other coefficients, each run-level one followed by its 95% interval's ends, then the options."""
    older = ("tau_run", "tau_topic_avg", "tau_all")
    newer = [name for name in (*RUN_COEFFICIENTS, *TOPIC_FIGURES) if name not in older]

    def rows():
        interval_columns = [column for name in RUN_COEFFICIENTS for column in (f"{name}_ci_low", f"{name}_ci_high")]
        judge_columns = [f"{side}_{field}" for side in ("a", "b") for field in JUDGE_FIELDS]
        yield [
            "a", "b", "metric", *older, *COUNTS, *newer, *interval_columns, "top_k", "bootstrap", "seed", "missing",
            *judge_columns,
        ]  # fmt: skip
        options = comparison.options
        judges = [source_judge(comparison.a) or {}, source_judge(comparison.b) or {}]
        judge_values = [_judge_value(judge.get(field)) for judge in judges for field in JUDGE_FIELDS]
        for tau in comparison.taus:
            interval_values = [end for name in RUN_COEFFICIENTS for end in tau.ci95.get(name, (math.nan, math.nan))]
            yield [
                str(comparison.a), str(comparison.b), tau.metric,
                *(getattr(tau, name) for name in (*older, *COUNTS, *newer)),
                *interval_values, options.top_k, options.bootstrap, options.seed, options.missing, *judge_values,
            ]  # fmt: skip

    return _csv_lines(rows())


def confusion_csv(comparison: Comparison) -> Iterator[str]:
    confusion = comparison.confusion

    def rows():
        if confusion is None:
            yield ["no labels shared between", str(comparison.a), str(comparison.b)]
            return
        yield [f"{comparison.a} \\ {comparison.b}", *confusion.labels, "total"]
        for label, row in zip(confusion.labels, confusion.counts, strict=True):
            yield [label, *row, sum(row)]
        yield ["total", *confusion.column_totals(), confusion.total]
        yield []
        yield [f"% of {confusion.total} pairs", *confusion.labels]
        for label, shares in zip(confusion.labels, confusion.percentages, strict=True):
            yield [label, *(round(cell, 4) for cell in shares)]
        yield []
        yield ["agreement", confusion.agreement]
        yield ["kappa", confusion.kappa]
        yield ["kappa_linear", confusion.kappa_linear]
        yield ["kappa_quadratic", confusion.kappa_quadratic]
        yield ["alpha_ordinal", confusion.alpha_ordinal]
        yield ["alpha_nominal", confusion.alpha_nominal]

    return _csv_lines(rows())


def describe_csv(described: dict[str, dict]) -> Iterator[str]:
    def rows() -> Iterator[list]:
        columns: list[str] = []
        for values in described.values():
            columns += [key for key in values if key not in columns]
        yield ["source", *columns]
        for source, values in described.items():
            yield [source, *(values.get(column, "") for column in columns)]

    return _csv_lines(rows())


def points_csv(comparison: Comparison, metric: str) -> Iterator[str]:
    """The points of both scatter plots: run means, then every topic/run pair."""

    def rows():
        a, b = str(comparison.a), str(comparison.b)
        yield ["level", "run_id", "topic_id", f"{metric} {a}", f"{metric} {b}"]
        for run, x, y in run_points(comparison.scores_a, comparison.scores_b, metric, comparison.options):
            yield ["run", run, "all", x, y]
        for run, topic, x, y in pair_points(comparison.scores_a, comparison.scores_b, metric):
            yield ["pair", run, published_id(topic), x, y]

    return _csv_lines(rows())
