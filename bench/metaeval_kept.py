"""bench_metaeval --kept: a kept comparison brought up to date after one topic's labels change, and the truth page.

On the collection bench_metaeval loads (two conditions on one nugget set, 146 runs x 301 topics):

- the worker's full computation of the comparison page (`metaeval.comparison_page`, bootstrap as asked), kept;
- for each of `repeat` topics in turn: some of that topic's labels by the second condition's assigner changed,
  and its kept scores refreshed as a label save's write does (timed apart: the write's own cost); then the kept
  comparison brought up to date by its changed cells (`page_update` and keeping it: what the next view waits
  for), then its intervals computed from the kept matrices; and the page checked against a full computation
  (every figure equal, to the last bit);
- the truth leaderboard page (`/metaeval/truth/`) of the first condition against a truth table of the second's
  Vstrict (146 runs x 301 topics and the `all` rows), without and with each topic's rows.
"""

import math
import os
import pickle
import random
import statistics
import time
from collections.abc import Callable

from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

TRUTH = "bench-truth"


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _equal(x: object, y: object) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return (math.isnan(x) and math.isnan(y)) or x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_equal(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_equal(p, q) for p, q in zip(x, y, strict=True))
    return x == y


def _pages_equal(kept, full) -> bool:
    from metaeval.stats import TauResult

    fields = list(TauResult.__dataclass_fields__)
    taus = [[getattr(tau, name) for name in fields] for tau in kept.comparison.taus]
    full_taus = [[getattr(tau, name) for name in fields] for tau in full.comparison.taus]
    return (
        _equal(taus, full_taus)
        and kept.comparison.confusion.counts == full.comparison.confusion.counts
        and _equal(kept.described, full.described)
    )


def _summary(name: str, seconds: list[float], say: Callable[[str], None]) -> None:
    say(
        f"{name:<58} {min(seconds):8.3f} s min  {statistics.median(seconds):8.3f} s median  "
        f"{max(seconds):8.3f} s max  (x{len(seconds)}, {_load()})"
    )


def kept_comparison_bench(
    *, a: str, b: str, assigner_b: str, nuggets: str, bootstrap: int, repeat: int, say: Callable[[str], None]
) -> None:
    from assessor.scoring.kept import scores_refresh
    from assignment.models import AssignmentLabel
    from metaeval import comparison_page
    from metaeval.models import KeptComparison

    query = {"a": a, "b": b, "metric": "Vstrict", "bootstrap": str(bootstrap)}
    kept = comparison_page.kept_query(query)
    assert kept is not None, "the two conditions have no kept scores"
    KeptComparison.objects.filter(key=kept.key).delete()
    started = time.perf_counter()
    comparison_page._computed(query, kept)
    say(
        f"{'kept comparison: full computation (the worker, before)':<58} {time.perf_counter() - started:8.3f} s  ({_load()})"
    )
    topics = sorted(set(AssignmentLabel.objects.filter(assigner=assigner_b).values_list("answer__topic_id", flat=True)))
    rng = random.Random(0)
    refreshes, updates, intervals, fulls = [], [], [], []
    equal = True
    for topic in rng.sample(topics, k=min(repeat, len(topics))):
        labels = list(AssignmentLabel.objects.filter(answer__topic_id=topic, assigner=assigner_b).order_by("id"))
        for label in rng.sample(labels, k=min(40, len(labels))):
            label.label = rng.choice(["support", "partial_support", "not_support"])
        started = time.perf_counter()
        with transaction.atomic():
            AssignmentLabel.objects.bulk_update(labels, ["label"])
            scores_refresh(family="conditions", columns=(nuggets, assigner_b), topics=[topic])
        refreshes.append(time.perf_counter() - started)
        kept = comparison_page.kept_query(query)
        assert kept is not None
        started = time.perf_counter()
        row = KeptComparison.objects.defer("plots").get(key=kept.key)
        updated = comparison_page.page_update(kept, row)
        assert updated is not None, "the kept comparison could not be brought up to date by its cells"
        page, cells = updated
        computed_at = timezone.now()
        comparison_page.page_keep(kept, page, computed_at=computed_at, seconds=0.0, cells=cells)
        updates.append(time.perf_counter() - started)
        started = time.perf_counter()
        comparison_page.complete_keep(kept.key, kept.stamps, computed_at, page, cells)
        intervals.append(time.perf_counter() - started)
        started = time.perf_counter()
        full = comparison_page.page_compute(query)
        fulls.append(time.perf_counter() - started)
        whole = pickle.loads(bytes(KeptComparison.objects.get(key=kept.key).page or b""))  # noqa: S301 (just kept)
        equal = equal and _pages_equal(whole, full)
    _summary("one topic's labels changed: their refresh (the write)", refreshes, say)
    _summary("kept comparison brought up to date by its changed cells", updates, say)
    _summary("  then completed: intervals (kept matrices), confusion, describe", intervals, say)
    _summary("  the same page computed in full (for reference)", fulls, say)
    say(f"{'every figure equal to a full computation':<58} {'yes' if equal else 'NO'}")


def truth_table_make(*, source: str, metric: str) -> None:
    """A truth table at the collection's scale: the source's per-topic `metric` and its run means."""
    from metaeval.models import ImportedScore, ScoreTable
    from metaeval.sources import source_load

    ScoreTable.objects.filter(name=TRUTH).delete()
    table = ScoreTable.objects.create(name=TRUTH)
    _source, scores = source_load(source)
    rows = [
        ImportedScore(table=table, run_id=run, topic_id=topic, metric=metric, value=values[metric])
        for (run, topic), values in scores.per_topic.items()
    ]
    rows += [
        ImportedScore(table=table, run_id=run, topic_id="all", metric=metric, value=means[metric])
        for run, means in scores.run_means.items()
    ]
    ImportedScore.objects.bulk_create(rows, batch_size=5000)


def truth_page_bench(*, judged: str, truth_of: str, repeat: int, say: Callable[[str], None]) -> None:
    from django.contrib.auth.models import User

    from assessor.work.roles import Role, user_set_role

    truth_table_make(source=truth_of, metric="Vstrict")
    user, _ = User.objects.get_or_create(username="bench-metaeval-organizer")
    user_set_role(user, Role.ORGANIZER)
    client = Client()
    client.force_login(user)
    url = reverse("metaeval:truth")
    query = {"a": judged, "truth": f"scores:{TRUTH}", "metric": "Vstrict", "on_missing": "zero"}
    for name, params in (("", query), (", each topic's rows", {**query, "per_topic": "1"})):
        response = client.get(url, params)  # warm: imports, templates
        assert response.status_code == 200 and b'id="truth-runs"' in response.content, response.content[:500]
        times = []
        for _ in range(max(repeat, 5)):
            started = time.perf_counter()
            client.get(url, params)
            times.append(time.perf_counter() - started)
        _summary(f"truth page{name}", times, say)
