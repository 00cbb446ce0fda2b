"""A comparison of two sources: the taus per metric and the confusion matrix, and their JSON and CSV forms."""

import csv
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assessor.collection.scores import Scores
from metaeval.sources import Source, source_describe, source_load, source_parse, source_require, sources_confusion
from metaeval.stats import Confusion, TauResult, pair_points, run_points, shared_metrics, taus_compute_all


@dataclass
class Comparison:
    a: Source
    b: Source
    scores_a: Scores
    scores_b: Scores
    taus: list[TauResult]
    confusion: Confusion | None


def comparison_build(
    a_text: str, b_text: str, *, metrics: Sequence[str] | None = None, scores: bool = True, confusion: bool = True
) -> Comparison:
    """Compare two sources for the given metrics (default: every metric both have).

    `scores=False` skips loading the scores and the taus, `confusion=False` the
    label matrix (a download that needs one part only). Raises SourceError for
    an unknown source and ValueError for a metric one of them lacks.
    """
    if not scores:
        a, b = source_parse(a_text), source_parse(b_text)
        source_require(a)
        source_require(b)
        empty = Scores(metrics=())
        return Comparison(
            a=a, b=b, scores_a=empty, scores_b=empty, taus=[], confusion=sources_confusion(a, b) if confusion else None
        )
    a, scores_a = source_load(a_text)
    b, scores_b = source_load(b_text)
    shared = shared_metrics(scores_a, scores_b)
    if metrics:
        missing = [metric for metric in metrics if metric not in shared]
        if missing:
            raise ValueError(
                f"metric {', '.join(missing)} is not in both {a} and {b}; shared metrics: {', '.join(shared) or 'none'}"
            )
        shared = list(metrics)
    taus = taus_compute_all(scores_a, scores_b, shared)
    return Comparison(
        a=a, b=b, scores_a=scores_a, scores_b=scores_b, taus=taus, confusion=sources_confusion(a, b) if confusion else None
    )


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def confusion_json(confusion: Confusion | None) -> dict | None:
    if confusion is None:
        return None
    return {
        "labels": confusion.labels,
        "counts": confusion.counts,
        "percentages": confusion.percentages,
        "agreement": _number(confusion.agreement),
        "kappa": _number(confusion.kappa),
        "pairs": confusion.total,
        "only_in_a": confusion.missing_b,
        "only_in_b": confusion.missing_a,
    }


def comparison_json(comparison: Comparison) -> dict:
    """The shape scripts read: taus per metric (null where undefined) and the confusion matrix or null."""
    return {
        "a": str(comparison.a),
        "b": str(comparison.b),
        "metrics": {
            tau.metric: {
                "tau_run": _number(tau.tau_run),
                "tau_topic_avg": _number(tau.tau_topic_avg),
                "tau_all": _number(tau.tau_all),
                "runs": tau.runs,
                "topics": tau.topics,
                "topics_with_tau": tau.topics_with_tau,
                "pairs": tau.pairs,
            }
            for tau in comparison.taus
        },
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


def taus_csv(comparison: Comparison) -> Iterator[str]:
    def rows():
        yield ["a", "b", "metric", "tau_run", "tau_topic_avg", "tau_all", "runs", "topics", "topics_with_tau", "pairs"]
        for tau in comparison.taus:
            yield [
                str(comparison.a), str(comparison.b), tau.metric, tau.tau_run, tau.tau_topic_avg, tau.tau_all,
                tau.runs, tau.topics, tau.topics_with_tau, tau.pairs,
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
        for label, row in zip(confusion.labels, confusion.percentages, strict=True):
            yield [label, *(round(cell, 4) for cell in row)]
        yield []
        yield ["agreement", confusion.agreement]
        yield ["kappa", confusion.kappa]

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
        for run, x, y in run_points(comparison.scores_a, comparison.scores_b, metric):
            yield ["run", run, "all", x, y]
        for run, topic, x, y in pair_points(comparison.scores_a, comparison.scores_b, metric):
            yield ["pair", run, topic, x, y]

    return _csv_lines(rows())
