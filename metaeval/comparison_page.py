"""What the meta-evaluation page shows for a query, computed (seconds at TREC scale) or kept.

A query is the page's parameters (`a`, `b`, `metric` and the options), read
from a request or from a kept comparison by a worker. A computed page is kept
in KeptComparison under the stamps its two sources had when its computation
began (assessor's KeptSource.stamp, made anew by every refresh of a source):

- a kept page whose stamps are still its sources' is current, and is shown;
- a kept page whose stamps are not is stale: it is shown, marked as such, while
  a worker computes it again (`comparison_compute`), and the page asks again
  until the fresh figures are there;
- a query never computed before is computed in the request, and kept.

A refresh of a source asks a worker, after a short delay that gathers a burst
of refreshes into one, to bring up to date every comparison viewed lately
(`comparisons_warm_soon`, a stamp listener of the registry): the organizer's
next view is usually current.

Not kept: open work counted (`?open=1`: the labels of the moment), score tables
(no stamps) and topics taken from a third source.
"""

import gc
import hashlib
import json
import pickle
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from assessor.models import KeptSource
from assessor.models.scope import campaign_in_effect, campaign_scope
from assessor.project.celery import celery_task
from assessor.scoring.scores import Scores
from metaeval.comparison import Comparison, TopicsError, comparison_build, topics_resolve
from metaeval.comparison_cells import (
    Cells,
    cells_build,
    cells_kept_source,
    cells_loads,
    cells_taus,
    cells_update,
    confusion_again,
    fingerprints,
    intervals_compute,
    pair_points_of,
    run_points_of,
)
from metaeval.models import KeptComparison
from metaeval.sources import Source, SourceError, source_answers, source_describe, source_parse, source_stamp
from metaeval.stats import TauOptions, pair_points, run_points

DEFAULT_METRIC = "Vstrict"
OPTION_KEYS = ("top_k", "top_k_of", "bootstrap", "seed", "missing", "topics", "topics_of", "pairs", "partial")
PAGE_DEFAULTS = {
    "top_k": "10", "top_k_of": "a", "bootstrap": "1000", "seed": "0", "missing": "zero", "topics": "", "topics_of": "", "pairs": "",
    "partial": "no",
}  # fmt: skip
# Options whose default leaves them out of a kept comparison's key, as before they could be asked for.
KEY_DEFAULTS = {"top_k_of": "a", "partial": "no"}
QUERY_KEYS = ("a", "b", "metric", *OPTION_KEYS)
PLOT_CACHE_SECONDS = 120

COMPUTE_TASK = "metaeval.comparison_compute"
WARM_TASK = "metaeval.comparisons_warm"
# A burst of submits (an assessor's, or a job's items) refreshes a source many times: one warm-up follows it.
WARM_DELAY_SECONDS = 20
# The comparisons brought up to date when a source changes: the latest viewed, at most this many, within this
# many days (each takes seconds of a worker's CPU at TREC scale; the others are computed again when viewed).
WARM_VIEWED_DAYS = 14
WARM_AT_MOST = 12
# A comparison of sources that evaluate more answers than this together is computed by a worker the first
# time too (about a second on this many; 88,000 at TREC scale take 5-8 s).
INLINE_ANSWERS_AT_MOST = 20_000
# A stale page whose worker has not answered in this long offers to compute it in the request.
WORKER_PATIENCE = timedelta(minutes=2)

Params = Mapping[str, str]
PlotData = dict[str, tuple[list[tuple[float, float]], float]]


class BadQuery(Exception):
    pass


# --- the query ------------------------------------------------------------------------------------


def _text(params: Params, key: str) -> str:
    return (params.get(key) or "").strip()


def _whole(params: Params, key: str, *, low: int, high: int) -> int:
    text = _text(params, key) or PAGE_DEFAULTS[key]
    try:
        value = int(text)
    except ValueError:
        raise BadQuery(f"{key} must be a whole number, not {text!r}") from None
    if not low <= value <= high:
        raise BadQuery(f"{key} must be from {low} to {high}")
    return value


def options_from_query(params: Params) -> TauOptions:
    missing = _text(params, "missing") or "zero"
    if missing not in ("zero", "skip"):
        raise BadQuery("missing must be zero or skip")
    top_k_of = _text(params, "top_k_of") or "a"
    if top_k_of not in ("a", "b"):
        raise BadQuery("top_k_of must be a or b")
    try:
        topics = topics_resolve(
            topics=(params.get("topics") or "").replace(",", " ").split(),
            topics_of=_text(params, "topics_of"),
        )
    except (SourceError, TopicsError) as exc:
        raise BadQuery(str(exc.args[0] if exc.args else exc)) from None
    return TauOptions(
        top_k=_whole(params, "top_k", low=2, high=1000),
        top_k_of=top_k_of,
        bootstrap=_whole(params, "bootstrap", low=0, high=10000),
        seed=_whole(params, "seed", low=0, high=2**32 - 1),
        missing=missing,
        topics=topics,
    )


def options_query(params: Params) -> dict[str, str]:
    """The options the query names, to carry into the downloads' links."""
    return {key: _text(params, key) for key in OPTION_KEYS if _text(params, key)}


def comparison_from_query(
    params: Params, *, scores: bool = True, confusion: bool = True, intervals: bool = True
) -> Comparison:
    a, b = _text(params, "a"), _text(params, "b")
    if not (a and b):
        raise BadQuery("pick two sources, a and b")
    options = options_from_query(params) if scores else TauOptions()
    if not intervals:
        options = replace(options, bootstrap=0)
    partial = _text(params, "partial") or "no"
    if partial not in ("no", "yes"):
        raise BadQuery("partial must be no or yes")
    try:
        # Metrics named differently in the two sources, compared pair by pair ("borda=RELEVANCE").
        pairs = (params.get("pairs") or "").replace(",", " ").split() if scores else []
        return comparison_build(
            a,
            b,
            metrics=pairs or None,
            scores=scores,
            confusion=confusion,
            options=options,
            partial_yes=partial == "yes",
        )
    except (SourceError, ValueError) as exc:
        raise BadQuery(str(exc.args[0] if exc.args else exc)) from None


def metric_of(params: Params, comparison: Comparison) -> str:
    metrics = [tau.metric for tau in comparison.taus]
    metric = params.get("metric", "")
    if metric in metrics:
        return metric
    if DEFAULT_METRIC in metrics:
        return DEFAULT_METRIC
    return metrics[0] if metrics else ""


# --- computing a page -----------------------------------------------------------------------------


@dataclass
class ComparisonPage:
    """What a comparison's page shows that takes seconds to compute."""

    comparison: Comparison  # its taus, confusion matrix and options; its scores left out (the plots have them)
    metric: str
    plots: PlotData | None  # None in a page read back from KeptComparison (kept_plots reads them)
    described: dict[str, dict]
    describe_errors: list[str]
    # False: the figures of the scores are of the sources' latest labels, but the 95% intervals, the confusion matrix
    # and the descriptive table are of the labels before the last change and computed next (a page brought up to
    # date by its changed cells, metaeval.comparison_cells).
    complete: bool = True


def describe_all(texts: list[str], loaded: Mapping[str, Scores] | None = None) -> tuple[dict[str, dict], list[str]]:
    """Each source's descriptive statistics; `loaded`: scores already loaded, by source, not loaded again."""
    described, errors = {}, []
    for text in dict.fromkeys(texts):
        try:
            described[text] = source_describe(source_parse(text), (loaded or {}).get(text))
        except SourceError as exc:
            errors.append(str(exc.args[0] if exc.args else exc))
    return described, errors


def plot_cache_key(a: str, b: str, metric: str, options: str = "") -> str:
    # Two campaigns may name their sources alike: the campaign in effect is part of the key.
    campaign = campaign_in_effect().pk
    digest = hashlib.sha256(f"{a}\n{b}\n{metric}\n{options}\n{campaign}".encode()).hexdigest()
    return f"metaeval:plot:{digest}"


def plot_data(comparison: Comparison, metric: str) -> PlotData:
    """The points and tau of both plots."""
    tau = next(t for t in comparison.taus if t.metric == metric)
    points = run_points(comparison.scores_a, comparison.scores_b, metric, comparison.options)
    return {
        "run": ([(x, y) for _, x, y in points], tau.tau_run),
        "pairs": (
            [(x, y) for _, _, x, y in pair_points(comparison.scores_a, comparison.scores_b, metric)],
            tau.tau_all,
        ),
    }


def page_compute(params: Params) -> ComparisonPage:
    """The page of a query, from the kept scores and the labels: BadQuery for a query that names no comparison."""
    return _page_computed(params)[0]


def _page_computed(params: Params) -> tuple[ComparisonPage, Comparison]:
    """The page, and the comparison it was made of (with both sources' scores)."""
    comparison = comparison_from_query(params)
    metric = metric_of(params, comparison)
    plots = plot_data(comparison, metric) if metric else None
    loaded = {str(comparison.a): comparison.scores_a, str(comparison.b): comparison.scores_b}
    described, describe_errors = describe_all([str(comparison.a), str(comparison.b)], loaded)
    if comparison.confusion is not None:
        # Krippendorff's alpha is computed on first use (a fifth of a second): now, so that it is kept too.
        comparison.confusion.alpha_ordinal  # noqa: B018
        comparison.confusion.alpha_nominal  # noqa: B018
    no_scores = Scores(metrics=())
    page = ComparisonPage(
        comparison=replace(comparison, scores_a=no_scores, scores_b=no_scores),
        metric=metric,
        plots=plots,
        described=described,
        describe_errors=describe_errors,
    )
    return page, comparison


# --- keeping a page -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """A query that can be kept: its canonical form, its key and its sources' stamps now."""

    query: dict[str, str]
    key: str
    stamps: tuple[str, str]
    sources: tuple[Source, Source]

    def large(self) -> bool:
        """Whether its computation takes seconds: a worker's, not a request's, even the first time."""
        return sum(source_answers(source) for source in self.sources) > INLINE_ANSWERS_AT_MOST


def kept_query(params: Params) -> Kept | None:
    """The query as kept, or None when it is not kept: open work counted, a score table (no stamp),
    topics taken from a third source, a source that does not parse (its error is shown by the computation)."""
    if _text(params, "topics_of"):
        return None
    try:
        sides = [source_parse(_text(params, side)) for side in ("a", "b")]
    except SourceError:
        return None
    stamp_a, stamp_b = (source_stamp(side) for side in sides)
    if stamp_a is None or stamp_b is None:
        return None
    query = {
        key: _text(params, key)
        for key in QUERY_KEYS
        if key not in KEY_DEFAULTS or (_text(params, key) or KEY_DEFAULTS[key]) != KEY_DEFAULTS[key]
    }
    return Kept(query=query, key=kept_key(query), stamps=(stamp_a, stamp_b), sources=(sides[0], sides[1]))


def kept_key(query: dict[str, str]) -> str:
    """The key of a kept query in the campaign in effect: its sources are named as in that campaign. The first
    campaign's keys are the query's alone, as before campaigns (its kept pages stay valid)."""
    campaign = campaign_in_effect()
    hashed = {**query, "campaign": campaign.slug} if campaign.key_suffix else query
    return hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Shown:
    """The page to show, and whether it is current: a stale one says when it was computed and what is under way;
    none while a large comparison asked for is computed the first time."""

    page: ComparisonPage | None
    key: str = ""  # the kept comparison's, for the images; empty when not kept
    current: bool = True
    computed_at: datetime | None = None
    seconds: float | None = None
    changed: tuple[str, ...] = ()  # the sources changed since a stale page was computed
    queued_at: datetime | None = None

    @property
    def waiting_long(self) -> bool:
        """A worker was asked a while ago and has not answered: the page offers to compute here."""
        return self.queued_at is not None and timezone.now() - self.queued_at > WORKER_PATIENCE


def _unpickled(row: KeptComparison) -> ComparisonPage | None:
    if row.page is None:  # asked for, never computed
        return None
    try:
        page = pickle.loads(bytes(row.page))  # noqa: S301 (written by page_keep only, never from outside)
    except Exception:  # a page kept by an older version of the code: computed again
        return None
    return page if isinstance(page, ComparisonPage) else None


def page_keep(
    kept: Kept, page: ComparisonPage, *, computed_at: datetime, seconds: float, cells: Cells | None = None
) -> None:
    figures = {
        "query": kept.query,
        "stamp_a": kept.stamps[0],
        "stamp_b": kept.stamps[1],
        # The plots' points apart (tens of thousands of pairs): the page is read without them, the images with.
        "page": pickle.dumps(replace(page, plots=None), protocol=pickle.HIGHEST_PROTOCOL),
        "plots": pickle.dumps((page.metric, page.plots), protocol=pickle.HIGHEST_PROTOCOL),
        "computed_at": computed_at,
        "seconds": seconds,
        "error": "",
        "queued_at": None,
        "cells": cells.dumps() if cells is not None else None,
    }
    KeptComparison.objects.update_or_create(
        key=kept.key, defaults=figures, create_defaults={**figures, "viewed_at": computed_at}
    )


def _computed(params: Params, kept: Kept | None) -> Shown:
    started = time.perf_counter()
    sources = _cells_sources(kept)
    # The topics' fingerprints before their scores: a row written in between is read again at the next update.
    prints = (fingerprints(sources[0]), fingerprints(sources[1])) if sources is not None else None
    page, comparison = _page_computed(params)
    cells = cells_build(comparison, sources, prints) if sources is not None and prints is not None else None
    computed_at, seconds = timezone.now(), time.perf_counter() - started
    if kept is None:
        return Shown(page, computed_at=computed_at, seconds=seconds)
    page_keep(kept, page, computed_at=computed_at, seconds=seconds, cells=cells)
    return Shown(page, key=kept.key, computed_at=computed_at, seconds=seconds)


def _cells_sources(kept: Kept | None) -> tuple[KeptSource, KeptSource] | None:
    """Both sources' kept rows where their scores are those rows as they stand (metaeval.comparison_cells)."""
    if kept is None:
        return None
    a, b = (cells_kept_source(source) for source in kept.sources)
    return (a, b) if a is not None and b is not None else None


def page_update(kept: Kept, row: KeptComparison) -> tuple[ComparisonPage, Cells] | None:
    """The kept page brought up to date by the cells that changed in its sources (metaeval.comparison_cells): every
    figure of the scores, and the plots; its intervals, confusion matrix and descriptive table those of the labels
    before (`page_complete` next). None when it must be computed in full."""
    sources = _cells_sources(kept)
    page, cells = _unpickled(row), cells_loads(row.cells)
    if sources is None or page is None or cells is None or cells_update(cells, sources) is None:
        return None
    comparison = page.comparison
    taus = cells_taus(cells, [tau.ci95 for tau in comparison.taus])
    plots = None
    if page.metric:
        tau = next(t for t in taus if t.metric == page.metric)
        plots = {
            "run": (run_points_of(cells, page.metric), tau.tau_run),
            "pairs": (pair_points_of(cells, page.metric), tau.tau_all),
        }
    updated = replace(page, comparison=replace(comparison, taus=taus), plots=plots, complete=False)
    return updated, cells


def page_complete(page: ComparisonPage, cells: Cells, *, partial_yes: bool) -> ComparisonPage:
    """An updated page's intervals from the kept matrices, its confusion matrix and descriptive table counted again
    from the labels: the page a full computation gives."""
    comparison = page.comparison
    intervals = intervals_compute(cells) if comparison.options.bootstrap > 0 else [{} for _ in comparison.taus]
    taus = [replace(tau, ci95=found) for tau, found in zip(comparison.taus, intervals, strict=True)]
    comparison = confusion_again(replace(comparison, taus=taus), partial_yes)
    described, describe_errors = describe_all([str(comparison.a), str(comparison.b)])
    return replace(
        page, comparison=comparison, described=described, describe_errors=describe_errors, complete=True, plots=None
    )


def _updated(kept: Kept, row: KeptComparison) -> bool:
    """Bring a kept page up to date by its changed cells, then complete it; False when it cannot be."""
    started = time.perf_counter()
    updated = page_update(kept, row)
    if updated is None:
        return False
    page, cells = updated
    computed_at = timezone.now()
    page_keep(kept, page, computed_at=computed_at, seconds=time.perf_counter() - started, cells=cells)
    complete_keep(kept.key, kept.stamps, computed_at, page, cells)
    return True


def complete_keep(key: str, stamps: tuple[str, str], computed_at: datetime, page: ComparisonPage, cells: Cells) -> None:
    """Complete a kept page (`page_complete`) and keep it, unless the row holds another page by then (a newer one,
    kept by another worker)."""
    if page.complete:
        return
    query = KeptComparison.objects.filter(key=key).values_list("query", flat=True).first()
    if query is None:
        return
    whole = page_complete(page, cells, partial_yes=_text(query, "partial") == "yes")
    KeptComparison.objects.filter(key=key, stamp_a=stamps[0], stamp_b=stamps[1], computed_at=computed_at).update(
        page=pickle.dumps(whole, protocol=pickle.HIGHEST_PROTOCOL)
    )


def page_shown(params: Params, *, here: bool = False) -> Shown:
    """The page of a query: kept and current, kept and stale (a worker computes it again), under way (a large
    comparison's first computation, in a worker), or computed now.

    `here` computes it in the request instead of asking a worker (the organizer asked, or no worker answers).
    The stamps are read before a computation: a write committed meanwhile leaves the page under the stamps it
    replaced, stale, and the next view asks again."""
    kept = kept_query(params)
    if kept is None:
        return _computed(params, None)
    row = KeptComparison.objects.filter(key=kept.key).defer("plots", "cells").first()
    current = row is not None and (row.stamp_a, row.stamp_b) == kept.stamps
    if row is not None and current and row.error:
        raise BadQuery(row.error)
    page = _unpickled(row) if row is not None else None
    if page is not None and row is not None and current:
        if timezone.now() - row.viewed_at > timedelta(hours=1):
            KeptComparison.objects.filter(pk=row.pk).update(viewed_at=timezone.now())
        return Shown(page, key=kept.key, computed_at=row.computed_at, seconds=row.seconds)
    if here or (page is None and not kept.large()):
        return _computed(params, kept)
    return _asked(kept, row, page, params)


def _asked(kept: Kept, row: KeptComparison | None, page: ComparisonPage | None, params: Params) -> Shown:
    """A worker computes the page (asked once: the broker keeps the message until a worker takes it); meanwhile
    the stale page, or none."""
    now = timezone.now()
    if row is None:
        row, _ = KeptComparison.objects.get_or_create(key=kept.key, defaults={"query": kept.query, "viewed_at": now})
    queued_at = row.queued_at
    if queued_at is None:
        queued_at = now
        KeptComparison.objects.filter(pk=row.pk).update(queued_at=queued_at, viewed_at=queued_at)
        key = kept.key
        transaction.on_commit(lambda: celery_task(COMPUTE_TASK).apply_async(args=[key]), robust=True)
    changed = tuple(
        _text(params, side)
        for side, old, new in zip(("a", "b"), (row.stamp_a, row.stamp_b), kept.stamps, strict=True)
        if page is not None and old != new
    )
    return Shown(
        page,
        key=kept.key,
        current=False,
        computed_at=row.computed_at,
        seconds=row.seconds,
        changed=changed,
        queued_at=queued_at,
    )


def kept_plots(key: str, metric: str) -> PlotData | None:
    """The plots of the kept page `key` (its images name it) if they are of this metric: the points of the
    page as shown, current or stale (a stale page's figures and plots go together)."""
    plots = KeptComparison.objects.filter(key=key).values_list("plots", flat=True).first() if key else None
    if plots is None:
        return None
    try:
        plotted, points = pickle.loads(bytes(plots))  # noqa: S301 (written by page_keep only)
    except Exception:
        return None
    return points if plotted == metric else None


# --- bringing kept pages up to date in a worker ---------------------------------------------------


# One comparison computed at a time in a process. A worker runs its tasks in threads (bin/serve): each
# computation holds both sources' per-answer scores and the bootstrap's resamples (a few hundred MB at TREC
# scale), and three at once, which a run's import followed by views of three comparisons asks for, tripled the
# worker's peak memory for no gain in time (the threads share one interpreter lock).
_one_at_a_time = threading.Lock()


def comparison_compute(key: str) -> bool:
    """Compute a kept comparison again if its sources changed (or it was never computed); True if it was.

    One at a time in a process: a comparison asked for while another is computed waits, then is looked at
    again (the warm-up may have brought it up to date meanwhile)."""
    with _one_at_a_time:
        try:
            return _comparison_compute(key)
        finally:
            # What the computation held goes before the next one starts, cycles included.
            gc.collect()


def _comparison_compute(key: str) -> bool:
    # A worker is in no campaign: the row's own names its sources, which are read inside it.
    row = (
        KeptComparison.objects.unscoped().filter(key=key).select_related("campaign").defer("page", "plots", "cells")
    ).first()  # the page, plots and cells read when needed
    if row is None:
        return False
    with campaign_scope(row.campaign):
        return _row_compute(key, row)


def _row_compute(key: str, row: KeptComparison) -> bool:
    kept = kept_query(row.query)
    if kept is None or kept.key != key:  # a source gone or no longer kept: the row is of no use
        KeptComparison.objects.filter(pk=row.pk).delete()
        return False
    if (row.stamp_a, row.stamp_b) == kept.stamps:
        return _intervals_pending(row)
    if _updated(kept, row):
        return True
    try:
        _computed(row.query, kept)
    except BadQuery as exc:  # shown to the organizer as the page's error, until either source changes
        KeptComparison.objects.filter(pk=row.pk).update(
            error=str(exc), stamp_a=kept.stamps[0], stamp_b=kept.stamps[1], queued_at=None
        )
    return True


def _intervals_pending(row: KeptComparison) -> bool:
    """A current page not completed after its last update (the worker stopped short): completed now; True if so."""
    page = _unpickled(row)
    if page is None or page.complete or row.computed_at is None:
        return False
    cells = cells_loads(row.cells)
    if cells is None:
        return False
    complete_keep(row.key, (row.stamp_a, row.stamp_b), row.computed_at, page, cells)
    return True


def comparisons_warm() -> int:
    """Compute again the comparisons viewed lately whose sources changed, the latest viewed first; how many."""
    since = timezone.now() - timedelta(days=WARM_VIEWED_DAYS)
    # Every campaign's (each computed inside its own, comparison_compute): a worker is in none.
    latest = KeptComparison.objects.unscoped().filter(viewed_at__gte=since).order_by("-viewed_at")
    return sum(comparison_compute(key) for key in list(latest.values_list("key", flat=True)[:WARM_AT_MOST]))


WARM_QUEUED = "metaeval:warm-queued"


def comparisons_warm_soon() -> None:
    """A kept source's stamp changed (called after the commit): warm the comparisons a little later, once
    for a burst of changes (the flag is per process: two web processes may queue two, the second finds
    nothing stale)."""
    if cache.add(WARM_QUEUED, True, WARM_DELAY_SECONDS):
        celery_task(WARM_TASK).apply_async(countdown=WARM_DELAY_SECONDS)
