"""The meta-evaluation page: two sources, a metric, the taus, the matrices, the table and the plots.

Every figure on the page is also a download: the CSVs and the PNGs take the
same query string (`a`, `b`, `metric`, and the options `top_k`, `bootstrap`,
`seed`, `missing`, `topics`, `topics_of`) as the page.
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

from django.core.cache import cache
from django.http import HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from assessor.collection.scores import NUGGET_METRICS, SUPPORT_METRICS, Scores
from assessor.http import AuthenticatedRequest
from assessor.work.roles import organizer_required
from metaeval.calibration import calibration_build
from metaeval.comparison import (
    Comparison,
    TopicsError,
    comparison_build,
    confusion_csv,
    describe_csv,
    points_csv,
    taus_csv,
    topics_resolve,
)
from metaeval.plots import scatter_png
from metaeval.qrels_agreement import FIGURES as QRELS_FIGURES
from metaeval.qrels_agreement import QrelsSourceError, qrels_agreement_build, qrels_sources_list
from metaeval.sources import (
    SourceError,
    source_describe,
    source_judge,
    source_notes,
    source_parse,
    source_stamp,
    sources_list,
    sources_notes,
)
from metaeval.stats import Confusion, TauOptions, nan_as_none, pair_points, run_points

DEFAULT_METRIC = "Vstrict"
PLOT_CACHE_SECONDS = 120
COMPARISON_CACHE_SECONDS = 7 * 24 * 3600  # a stale page is never read (its key has the old stamps)
DESCRIBE_HEADINGS = {
    "avg_nuggets": "nuggets / topic",
    "avg_nugget_words": "words / nugget",
    "pct_vital": "% vital",
    "pct_okay": "% okay",
    "pct_not_support": "% not support",
    "pct_partial_support": "% partial support",
    "pct_support": "% support",
    "pairs": "judged pairs",
}


RUN_HEADINGS = {
    "tau_run": "tau-b",
    "spearman_run": "Spearman",
    "pearson_run": "Pearson",
    "tau_ap_run": "tau_ap_b",
    "tau_gap_run": "tau_GAP",
    "tau_top_k_run": "tau top k",
}
TOPIC_HEADINGS = {
    "tau_topic_avg": "tau-b, per-topic average",
    "tau_all": "tau-b, all pairs",
    "spearman_topic_avg": "Spearman, per-topic average",
    "spearman_all": "Spearman, all pairs",
    "pearson_topic_avg": "Pearson, per-topic average",
    "pearson_all": "Pearson, all pairs",
}
OPTION_KEYS = ("top_k", "bootstrap", "seed", "missing", "topics", "topics_of")
PAGE_DEFAULTS = {"top_k": "10", "bootstrap": "1000", "seed": "0", "missing": "zero", "topics": "", "topics_of": ""}


class BadQuery(Exception):
    pass


def _whole(request: AuthenticatedRequest, key: str, *, low: int, high: int) -> int:
    text = request.GET.get(key, "").strip() or PAGE_DEFAULTS[key]
    try:
        value = int(text)
    except ValueError:
        raise BadQuery(f"{key} must be a whole number, not {text!r}") from None
    if not low <= value <= high:
        raise BadQuery(f"{key} must be from {low} to {high}")
    return value


def _options_from_query(request: AuthenticatedRequest) -> TauOptions:
    missing = request.GET.get("missing", "").strip() or "zero"
    if missing not in ("zero", "skip"):
        raise BadQuery("missing must be zero or skip")
    try:
        topics = topics_resolve(
            topics=request.GET.get("topics", "").replace(",", " ").split(),
            topics_of=request.GET.get("topics_of", "").strip(),
        )
    except (SourceError, TopicsError) as exc:
        raise BadQuery(str(exc.args[0] if exc.args else exc)) from None
    return TauOptions(
        top_k=_whole(request, "top_k", low=2, high=1000),
        bootstrap=_whole(request, "bootstrap", low=0, high=10000),
        seed=_whole(request, "seed", low=0, high=2**32 - 1),
        missing=missing,
        topics=topics,
    )


def _options_query(request: AuthenticatedRequest) -> dict[str, str]:
    """The options the query names, to carry into the downloads' links."""
    return {key: request.GET[key].strip() for key in OPTION_KEYS if request.GET.get(key, "").strip()}


def _comparison_from_query(
    request: AuthenticatedRequest, *, scores: bool = True, confusion: bool = True, intervals: bool = True
) -> Comparison:
    a, b = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    if not (a and b):
        raise BadQuery("pick two sources, a and b")
    options = _options_from_query(request) if scores else TauOptions()
    if not intervals:
        options = replace(options, bootstrap=0)
    try:
        return comparison_build(a, b, scores=scores, confusion=confusion, options=options)
    except (SourceError, ValueError) as exc:
        raise BadQuery(str(exc.args[0] if exc.args else exc)) from None


def _metric_of(request: AuthenticatedRequest, comparison: Comparison) -> str:
    metrics = [tau.metric for tau in comparison.taus]
    metric = request.GET.get("metric", "")
    if metric in metrics:
        return metric
    if DEFAULT_METRIC in metrics:
        return DEFAULT_METRIC
    return metrics[0] if metrics else ""


def _confusion_rows(confusion: Confusion) -> list[dict]:
    """Cells with a shade proportional to their share of the largest cell (the colour of the table)."""
    largest = max((cell for row in confusion.counts for cell in row), default=0) or 1
    rows = []
    for i, (label, counts, percentages) in enumerate(
        zip(confusion.labels, confusion.counts, confusion.percentages, strict=True)
    ):
        cells = [
            {"count": count, "pct": pct, "alpha": round(0.08 + 0.8 * count / largest, 3), "diagonal": i == j}
            for j, (count, pct) in enumerate(zip(counts, percentages, strict=True))
        ]
        rows.append({"label": label, "cells": cells, "total": sum(counts)})
    return rows


def _describe_all(texts: list[str]) -> tuple[dict[str, dict], list[str]]:
    described, errors = {}, []
    for text in dict.fromkeys(texts):
        try:
            described[text] = source_describe(source_parse(text))
        except SourceError as exc:
            errors.append(str(exc.args[0] if exc.args else exc))
    return described, errors


@require_GET
@organizer_required
def index(request: AuthenticatedRequest) -> HttpResponse:
    sources = sources_list()
    context: dict = {
        "sources": sources,
        "a": request.GET.get("a", sources[0] if sources else ""),
        "b": request.GET.get("b", sources[1] if len(sources) > 1 else ""),
        "error": "",
        "comparison": None,
        "metric": request.GET.get("metric", DEFAULT_METRIC),
        "metric_choices": [*NUGGET_METRICS, *SUPPORT_METRICS],
        "options": {key: request.GET.get(key, PAGE_DEFAULTS[key]) for key in OPTION_KEYS},
        "run_headings": list(RUN_HEADINGS.values()),
        "topic_headings": list(TOPIC_HEADINGS.values()),
    }
    if "a" in request.GET or "b" in request.GET:
        try:
            page = _comparison_page(request)
        except BadQuery as exc:
            context["error"] = str(exc)
        else:
            comparison, metric, described, describe_errors = (
                page.comparison,
                page.metric,
                page.described,
                page.describe_errors,
            )
            query = urlencode(
                {"a": str(comparison.a), "b": str(comparison.b), "metric": metric, **_options_query(request)}
            )
            describe_columns: list[str] = []
            for values in described.values():
                describe_columns += [key for key in values if key not in describe_columns]
            context.update(
                comparison=comparison,
                notes=source_notes(comparison.a) + source_notes(comparison.b),
                judges=[(str(side), source_judge(side)) for side in (comparison.a, comparison.b)],
                metric=metric,
                metric_choices=[tau.metric for tau in comparison.taus],
                taus=[
                    {
                        "tau": tau,
                        "run": [
                            {
                                "value": nan_as_none(getattr(tau, name)),
                                "ci": [nan_as_none(end) for end in tau.ci95[name]] if name in tau.ci95 else None,
                            }
                            for name in RUN_HEADINGS
                        ],
                        "topic": [nan_as_none(getattr(tau, name)) for name in TOPIC_HEADINGS],
                    }
                    for tau in comparison.taus
                ],
                confusion=comparison.confusion,
                confusion_rows=_confusion_rows(comparison.confusion) if comparison.confusion else [],
                confusion_agreement=nan_as_none(comparison.confusion.agreement) if comparison.confusion else None,
                confusion_agreement_pct=100 * comparison.confusion.agreement if comparison.confusion else None,
                confusion_kappa=nan_as_none(comparison.confusion.kappa) if comparison.confusion else None,
                confusion_weighted=[
                    ("weighted kappa, linear", nan_as_none(comparison.confusion.kappa_linear)),
                    ("weighted kappa, quadratic", nan_as_none(comparison.confusion.kappa_quadratic)),
                    ("Krippendorff's alpha, ordinal", nan_as_none(comparison.confusion.alpha_ordinal)),
                ]
                if comparison.confusion
                else [],
                described=[
                    {"source": s, "values": [v.get(c, "") for c in describe_columns]} for s, v in described.items()
                ],
                describe_columns=describe_columns,
                describe_headings=[DESCRIBE_HEADINGS.get(column, column) for column in describe_columns],
                describe_errors=describe_errors,
                query=query,
            )
    context.update(_qrels_context(request))
    template = "metaeval/index.html"
    if request.htmx:
        template += "#page"
    return render(request, template, context)


def _qrels_context(request: AuthenticatedRequest) -> dict:
    """The qrels agreement section: two qrels sources and a threshold, per topic and on average."""
    sources = qrels_sources_list()
    context: dict = {
        "qrels_sources": sources,
        "qrels_a": request.GET.get("qrels_a", "nist" if "nist" in sources else (sources[0] if sources else "")),
        "qrels_b": request.GET.get(
            "qrels_b", "umbrela" if "umbrela" in sources else (sources[1] if len(sources) > 1 else "")
        ),
        "qrels_threshold": request.GET.get("threshold", "1"),
        "qrels_headings": ["precision", "recall", "F1", "Jaccard", "Cohen's kappa", "Krippendorff's alpha"],
        "qrels": None,
        "qrels_error": "",
    }
    if "qrels_a" not in request.GET:
        return context
    try:
        threshold = int(context["qrels_threshold"])
        result = qrels_agreement_build(context["qrels_a"].strip(), context["qrels_b"].strip(), threshold=threshold)
    except ValueError:
        context["qrels_error"] = "the threshold must be a whole number"
        return context
    except QrelsSourceError as exc:
        context["qrels_error"] = str(exc.args[0])
        return context

    def row(topic, values) -> dict:
        return {"topic": topic, "values": [nan_as_none(value) for value in values]}

    context["qrels"] = {
        "result": result,
        "rows": [
            {**row(r.topic, [r.figure(name) for name in QRELS_FIGURES]), "shared": r.shared} for r in result.topics
        ],
        "mean": row("mean", [result.mean[name] for name in QRELS_FIGURES]),
        "pooled": {
            **row("pooled", [result.pooled.figure(name) for name in QRELS_FIGURES]),
            "shared": result.pooled.shared,
        },
    }
    return context


def _csv_response(lines: Iterator[str], filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _file_stem(comparison: Comparison) -> str:
    def safe(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)

    return f"{safe(str(comparison.a))}_vs_{safe(str(comparison.b))}"


# What each download needs: loading the scores, counting the label pairs.
DOWNLOAD_PARTS = {
    "taus": {"scores": True, "confusion": False},
    "confusion": {"scores": False, "confusion": True},
    "describe": {"scores": False, "confusion": False},
    "points": {"scores": True, "confusion": False, "intervals": False},
}


def _download(request: AuthenticatedRequest, kind: str) -> HttpResponse | StreamingHttpResponse:
    try:
        comparison = _comparison_from_query(request, **DOWNLOAD_PARTS[kind])
    except BadQuery as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    stem = _file_stem(comparison)
    if kind == "taus":
        return _csv_response(taus_csv(comparison), f"taus_{stem}.csv")
    if kind == "confusion":
        return _csv_response(confusion_csv(comparison), f"confusion_{stem}.csv")
    if kind == "describe":
        described, _ = _describe_all([str(comparison.a), str(comparison.b)])
        return _csv_response(describe_csv(described), f"describe_{stem}.csv")
    metric = _metric_of(request, comparison)
    return _csv_response(points_csv(comparison, metric), f"scores_{metric}_{stem}.csv")


@require_GET
@organizer_required
def taus_download(request: AuthenticatedRequest) -> HttpResponse | StreamingHttpResponse:
    return _download(request, "taus")


@require_GET
@organizer_required
def confusion_download(request: AuthenticatedRequest) -> HttpResponse | StreamingHttpResponse:
    return _download(request, "confusion")


@require_GET
@organizer_required
def describe_download(request: AuthenticatedRequest) -> HttpResponse | StreamingHttpResponse:
    return _download(request, "describe")


@require_GET
@organizer_required
def points_download(request: AuthenticatedRequest) -> HttpResponse | StreamingHttpResponse:
    return _download(request, "points")


PlotData = dict[str, tuple[list[tuple[float, float]], float]]


@dataclass
class ComparisonPage:
    """What a comparison's page shows that takes seconds to compute: kept under its sources' stamps."""

    comparison: Comparison  # its taus, confusion matrix and options; its scores left out (the plots have them)
    metric: str
    plots: PlotData | None
    described: dict[str, dict]
    describe_errors: list[str]


def _comparison_page_key(request: AuthenticatedRequest) -> str | None:
    """The key a comparison's page is kept under: the query and both sources' stamps (assessor's KeptSource,
    made anew by every refresh, so a change to either source's labels or figures is a new key).
    None when it is not kept: a score table, open work counted, topics taken from a third source."""
    if request.GET.get("topics_of", "").strip():
        return None
    try:
        sides = [source_parse(request.GET.get(side, "")) for side in ("a", "b")]
    except SourceError:
        return None
    stamps = [source_stamp(side) for side in sides]
    if None in stamps:
        return None
    query = urlencode(sorted((key, request.GET.get(key, "").strip()) for key in ("a", "b", "metric", *OPTION_KEYS)))
    digest = hashlib.sha256(f"{query}\n{stamps[0]}\n{stamps[1]}".encode()).hexdigest()
    return f"metaeval:comparison:{digest}"


def _comparison_page(request: AuthenticatedRequest) -> ComparisonPage:
    """The comparison's page as kept, or computed (seconds at TREC scale) and kept for the next view.

    The stamps are read before the computation: a write committed meanwhile leaves this page under the
    stamps it replaced, and the next view computes again."""
    key = _comparison_page_key(request)
    options = urlencode(_options_query(request))
    kept = cache.get(key) if key else None
    if kept is not None:
        if kept.plots is not None:
            cache.set(
                _plot_cache_key(str(kept.comparison.a), str(kept.comparison.b), kept.metric, options),
                kept.plots,
                PLOT_CACHE_SECONDS,
            )
        return kept
    comparison = _comparison_from_query(request)
    metric = _metric_of(request, comparison)
    plots = _plot_data(comparison, metric, options) if metric else None
    described, describe_errors = _describe_all([str(comparison.a), str(comparison.b)])
    if comparison.confusion is not None:
        # Krippendorff's alpha is computed on first use (a fifth of a second): now, so that it is kept too.
        comparison.confusion.alpha_ordinal  # noqa: B018
    no_scores = Scores(metrics=())
    page = ComparisonPage(
        comparison=replace(comparison, scores_a=no_scores, scores_b=no_scores),
        metric=metric,
        plots=plots,
        described=described,
        describe_errors=describe_errors,
    )
    if key:
        cache.set(key, page, COMPARISON_CACHE_SECONDS)
    return page


def _plot_cache_key(a: str, b: str, metric: str, options: str = "") -> str:
    digest = hashlib.sha256(f"{a}\n{b}\n{metric}\n{options}".encode()).hexdigest()
    return f"metaeval:plot:{digest}"


def _plot_data(comparison: Comparison, metric: str, options: str = "") -> PlotData:
    """The points and tau of both plots; kept a little while, since the page's images ask right after it."""
    tau = next(t for t in comparison.taus if t.metric == metric)
    points = run_points(comparison.scores_a, comparison.scores_b, metric, comparison.options)
    data = {
        "run": ([(x, y) for _, x, y in points], tau.tau_run),
        "pairs": (
            [(x, y) for _, _, x, y in pair_points(comparison.scores_a, comparison.scores_b, metric)],
            tau.tau_all,
        ),
    }
    cache.set(_plot_cache_key(str(comparison.a), str(comparison.b), metric, options), data, PLOT_CACHE_SECONDS)
    return data


@require_GET
@organizer_required
def plot(request: AuthenticatedRequest, level: str) -> HttpResponse:
    """A scatter plot PNG, `level` run (run means) or pairs (every topic/run pair); `?download=1` to save it."""
    a, b, metric = (request.GET.get(key, "").strip() for key in ("a", "b", "metric"))
    options = urlencode(_options_query(request))
    data = cache.get(_plot_cache_key(a, b, metric, options)) if metric else None
    if data is None:
        try:
            comparison = _comparison_from_query(request, confusion=False, intervals=False)
        except BadQuery as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
        metric = _metric_of(request, comparison)
        if not metric:
            return HttpResponseBadRequest("the two sources share no metric", content_type="text/plain; charset=utf-8")
        data = _plot_data(comparison, metric, options)
        a, b = str(comparison.a), str(comparison.b)
    points, tau = data[level]
    title = f"{metric}: run means" if level == "run" else f"{metric}: topic/run pairs"
    png = scatter_png(points, x_label=a, y_label=b, title=title, tau=tau)
    response = HttpResponse(png, content_type="image/png")
    if request.GET.get("download"):
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{a}_vs_{b}")
        response["Content-Disposition"] = f'attachment; filename="scatter_{level}_{metric}_{stem}.png"'
    return response


@require_GET
@organizer_required
def calibrate(request: AuthenticatedRequest) -> HttpResponse:
    """Each run's human-equivalent score from an LLM condition and a human sample (metaeval.ppi)."""
    sources = sources_list()
    context: dict = {
        "sources": sources,
        "llm": request.GET.get("llm", ""),
        "human": request.GET.get("human", ""),
        "metric": request.GET.get("metric", DEFAULT_METRIC),
        "metric_choices": [*NUGGET_METRICS, *SUPPORT_METRICS],
        "fraction": request.GET.get("fraction", ""),
        "seed": request.GET.get("seed", "0"),
        "error": "",
        "result": None,
    }
    if context["llm"] and context["human"]:
        try:
            fraction = float(context["fraction"]) if context["fraction"] else None
            if fraction is not None and not 0 < fraction <= 1:
                raise ValueError("the sample share is a number above 0 and at most 1")
            result = calibration_build(
                llm=context["llm"],
                human=context["human"],
                metric=context["metric"],
                fraction=fraction,
                seed=int(context["seed"] or 0),
            )
        except (LookupError, ValueError) as exc:
            context["error"] = str(exc.args[0] if exc.args else exc)
        else:
            context["result"] = result
            context["notes"] = sources_notes([context["llm"], context["human"]])
            context["rows"] = [
                (rank, estimate, result.human_means.get(estimate.run_id) if result.human_means else None)
                for rank, estimate in enumerate(result.estimates, start=1)
            ]
            if result.human_means:
                covered = sum(1 for e in result.estimates if e.low <= result.human_means[e.run_id] <= e.high)
                context["covered"] = covered
    return render(request, "metaeval/calibrate.html", context)
