"""The meta-evaluation page: two sources, a metric, the taus, the matrices, the table and the plots.

Every figure on the page is also a download: the CSVs and the PNGs take the
same query string (`a`, `b`, `metric`, and the options `top_k`, `bootstrap`,
`seed`, `missing`, `topics`, `topics_of`) as the page.
"""

from collections.abc import Iterator, Sequence

from django.core.cache import cache
from django.http import HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from assessor.collection.exporting import campaign_file_name
from assessor.http import AuthenticatedRequest
from assessor.scoring.lifecycle import qrels_notes
from assessor.scoring.scores import NUGGET_METRICS, SUPPORT_METRICS
from assessor.work.roles import organizer_required
from metaeval.calibration import calibration_build, calibration_summary, simulation_on_condition, simulation_summary
from metaeval.cell_items import cells_listed
from metaeval.comparison import Comparison, confusion_csv, describe_csv, points_csv, taus_csv
from metaeval.comparison_page import (
    DEFAULT_METRIC,
    OPTION_KEYS,
    PAGE_DEFAULTS,
    PLOT_CACHE_SECONDS,
    BadQuery,
    ComparisonPage,
    PlotData,
    Shown,
    comparison_from_query,
    describe_all,
    kept_plots,
    metric_of,
    options_query,
    page_shown,
    plot_cache_key,
    plot_data,
)
from metaeval.qrels_agreement import FIGURES as QRELS_FIGURES
from metaeval.qrels_agreement import QrelsSourceError, qrels_agreement_build, qrels_sources_list
from metaeval.sources import CONDITION_PATTERN, SourceKind, source_judge, sources_list, sources_notes
from metaeval.stats import Confusion, TauResult, nan_as_none

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


def _with(request: AuthenticatedRequest, **values: str) -> str:
    """The request's query string with these parameters set."""
    query = request.GET.copy()
    query.update(values)
    return query.urlencode()


def _confusion_rows(confusion: Confusion, comparison: Comparison) -> list[dict]:
    """Cells with a shade proportional to their share of the largest cell (the colour of the table); each a link
    to the items behind it (metaeval:cell) where the two sources' labels pair up item by item."""
    listed = cells_listed(comparison.a, comparison.b)
    largest = max((cell for row in confusion.counts for cell in row), default=0) or 1
    rows = []
    for i, (label, counts, percentages) in enumerate(
        zip(confusion.labels, confusion.counts, confusion.percentages, strict=True)
    ):
        cells = [
            {
                "count": count,
                "pct": pct,
                "alpha": round(0.08 + 0.8 * count / largest, 3),
                "diagonal": i == j,
                "url": _cell_url(comparison, label, confusion.labels[j]) if listed and count else "",
            }
            for j, (count, pct) in enumerate(zip(counts, percentages, strict=True))
        ]
        rows.append({"label": label, "cells": cells, "total": sum(counts)})
    return rows


def _cell_url(comparison: Comparison, row: str, column: str) -> str:
    query = {"a": str(comparison.a), "b": str(comparison.b), "row": row, "column": column}
    return f"{reverse('metaeval:cell')}?{urlencode(query)}"


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
            shown = page_shown(request.GET, here=bool(request.GET.get("here")))
        except BadQuery as exc:
            # Nothing compared: no metric to offer (two sources with none in common offer none either).
            context.update(error=str(exc), metric_choices=[])
        else:
            if shown.page is None:  # a large comparison's first computation, under way in a worker
                context.update(shown=shown, here_query=_with(request, here="1"))
            else:
                context.update(_comparison_context(request, shown, shown.page))
    context.update(_qrels_context(request))
    template = "metaeval/index.html"
    if request.htmx:
        template += "#page"
    return render(request, template, context)


def _comparison_context(request: AuthenticatedRequest, shown: Shown, page: ComparisonPage) -> dict:
    """What the page shows of a comparison: its taus, matrix, table and plots, and whether it is current."""
    comparison, metric, described, describe_errors = (
        page.comparison,
        page.metric,
        page.described,
        page.describe_errors,
    )
    options = options_query(request.GET)
    query = urlencode({"a": str(comparison.a), "b": str(comparison.b), "metric": metric, **options})
    if page.plots is not None:  # computed in this request: its images ask right after it
        cache.set(
            plot_cache_key(str(comparison.a), str(comparison.b), metric, urlencode(options)),
            page.plots,
            PLOT_CACHE_SECONDS,
        )
    # A kept page's images name it: any web process draws them from its points.
    plot_query = f"{query}&{urlencode({'kept': shown.key})}" if shown.key else query
    describe_columns: list[str] = []
    for values in described.values():
        describe_columns += [key for key in values if key not in describe_columns]
    return dict(
        shown=shown,
        here_query=_with(request, here="1"),
        comparison=comparison,
        notes=sources_notes([str(comparison.a), str(comparison.b)]),
        judges=[(str(side), source_judge(side)) for side in (comparison.a, comparison.b)],
        metric=metric,
        metric_choices=[tau.metric for tau in comparison.taus],
        taus=_tau_rows(comparison.taus),
        **_confusion_context(comparison),
        described=[{"source": s, "values": [v.get(c, "") for c in describe_columns]} for s, v in described.items()],
        describe_columns=describe_columns,
        describe_headings=[DESCRIBE_HEADINGS.get(column, column) for column in describe_columns],
        describe_errors=describe_errors,
        query=query,
        plot_query=plot_query,
    )


def _tau_rows(taus: Sequence[TauResult]) -> list[dict]:
    """Each metric's taus, the run-level ones with their 95% intervals, as the page's table shows them."""
    return [
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
        for tau in taus
    ]


def _confusion_context(comparison: Comparison) -> dict:
    """The label matrix and its agreement figures, empty when the comparison has none."""
    return dict(
        confusion=comparison.confusion,
        # A support method against yes/no judgments: the page says how its FS/PS/NS were read.
        support_crossed=comparison.confusion is not None
        and {comparison.a.kind, comparison.b.kind} == {SourceKind.SUPPORT, SourceKind.FAMILY},
        confusion_rows=_confusion_rows(comparison.confusion, comparison) if comparison.confusion else [],
        confusion_agreement=nan_as_none(comparison.confusion.agreement) if comparison.confusion else None,
        confusion_agreement_pct=100 * comparison.confusion.agreement if comparison.confusion else None,
        confusion_kappa=nan_as_none(comparison.confusion.kappa) if comparison.confusion else None,
        confusion_weighted=[
            ("weighted kappa, linear", nan_as_none(comparison.confusion.kappa_linear)),
            ("weighted kappa, quadratic", nan_as_none(comparison.confusion.kappa_quadratic)),
            ("Krippendorff's alpha, ordinal", nan_as_none(comparison.confusion.alpha_ordinal)),
            ("Krippendorff's alpha, nominal", nan_as_none(comparison.confusion.alpha_nominal)),
        ]
        if comparison.confusion
        else [],
    )


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
        "qrels_headings": [
            "precision",
            "recall",
            "F1",
            "Jaccard",
            "Cohen's kappa",
            "Krippendorff's alpha, ordinal",
            "Krippendorff's alpha, nominal",
        ],
        "qrels": None,
        "qrels_notes": [],
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

    context["qrels_notes"] = qrels_notes([result.a, result.b])
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
    response["Content-Disposition"] = f'attachment; filename="{campaign_file_name(filename)}"'
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
        comparison = comparison_from_query(request.GET, **DOWNLOAD_PARTS[kind])
    except BadQuery as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    stem = _file_stem(comparison)
    if kind == "taus":
        return _csv_response(taus_csv(comparison), f"taus_{stem}.csv")
    if kind == "confusion":
        return _csv_response(confusion_csv(comparison), f"confusion_{stem}.csv")
    if kind == "describe":
        described, _ = describe_all([str(comparison.a), str(comparison.b)])
        return _csv_response(describe_csv(described), f"describe_{stem}.csv")
    metric = metric_of(request.GET, comparison)
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


@require_GET
@organizer_required
def plot(request: AuthenticatedRequest, level: str) -> HttpResponse:
    """A scatter plot PNG, `level` run (run means) or pairs (every topic/run pair); `?download=1` to save it."""
    a, b, metric = (request.GET.get(key, "").strip() for key in ("a", "b", "metric"))
    options = urlencode(options_query(request.GET))
    data: PlotData | None = None
    if metric:
        data = cache.get(plot_cache_key(a, b, metric, options)) or kept_plots(request.GET.get("kept", ""), metric)
    if data is None:
        try:
            comparison = comparison_from_query(request.GET, confusion=False, intervals=False)
        except BadQuery as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
        metric = metric_of(request.GET, comparison)
        if not metric:
            return HttpResponseBadRequest("the two sources share no metric", content_type="text/plain; charset=utf-8")
        data = plot_data(comparison, metric)
        a, b = str(comparison.a), str(comparison.b)
        cache.set(plot_cache_key(a, b, metric, options), data, PLOT_CACHE_SECONDS)
    points, tau = data[level]
    title = f"{metric}: run means" if level == "run" else f"{metric}: topic/run pairs"
    from metaeval.plots import scatter_png  # matplotlib, imported by the pages that draw (0.4 s)

    png = scatter_png(points, x_label=a, y_label=b, title=title, tau=tau)
    response = HttpResponse(png, content_type="image/png")
    if request.GET.get("download"):
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{a}_vs_{b}")
        name = f"scatter_{level}_{metric}_{stem}.png"
        response["Content-Disposition"] = f'attachment; filename="{campaign_file_name(name)}"'
    return response


SIMULATION_FRACTIONS = (0.05, 0.10, 0.25)


def _shares(text: str) -> list[float]:
    """Percentages typed as `5 10 25` (or with commas and %), as fractions."""
    parts = text.replace(",", " ").replace("%", " ").split()
    try:
        shares = [float(part) / 100 for part in parts]
    except ValueError:
        raise ValueError(f"the shares are percentages, such as 5 10 25, not {text!r}") from None
    if not shares or len(shares) > 10 or not all(0 < share <= 1 for share in shares):
        raise ValueError("give one to ten shares, each a percentage above 0 and at most 100")
    return shares


def _simulation_context(request: AuthenticatedRequest, sources: list[str]) -> dict:
    """The check of the method on a human condition (its labels the truth, an LLM-like copy the cheap source)."""
    condition = request.GET.get("sim_human", "")
    context: dict = {
        "sim_conditions": [source for source in sources if CONDITION_PATTERN.match(source)],
        "sim_human": condition,
        "sim_metric": request.GET.get("sim_metric", DEFAULT_METRIC),
        "sim_metrics": NUGGET_METRICS,
        "sim_seeds": request.GET.get("sim_seeds", "20"),
        "sim_shares": request.GET.get("sim_shares", " ".join(f"{f:.0%}".rstrip("%") for f in SIMULATION_FRACTIONS)),
    }
    match = CONDITION_PATTERN.match(condition)
    if not condition:
        return context
    try:
        seeds = int(context["sim_seeds"] or 20)
        if match is None:
            raise ValueError(f"{condition} is not a nugget condition (NUGGETS/ASSIGNER)")
        if not 1 <= seeds <= 500:
            raise ValueError("the samples per share are between 1 and 500")
        fractions = _shares(context["sim_shares"])
        simulation = simulation_on_condition(
            nuggets=match["nuggets"], assigner=match["assigner"], metric=context["sim_metric"],
            fractions=fractions, seeds=range(seeds),
        )  # fmt: skip
    except (LookupError, ValueError) as exc:
        context["sim_error"] = str(exc.args[0] if exc.args else exc)
    else:
        context["simulation"] = simulation
        context["sim_summary"] = simulation_summary(simulation)
        sizes = [row.sample_answers for row in simulation.rows]
        if len(set(sizes)) < len(sizes):
            context["sim_same_sizes"] = ", ".join(
                f"{row.fraction_text}: {row.sample_answers}" for row in simulation.rows
            )
    return context


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
            context["summary"] = calibration_summary(result)
            context["notes"] = sources_notes([context["llm"], context["human"]])
            context["rows"] = [
                (rank, estimate, result.human_means.get(estimate.run_id))
                for rank, estimate in enumerate(result.estimates, start=1)
            ]
    context.update(_simulation_context(request, sources))
    return render(request, "metaeval/calibrate.html", context)
