"""Reads for the meta-evaluation: imported score tables and their descriptive counts.

Each function runs a fixed number of queries whatever the size of the data. The
label cross-tabulations and descriptive counts of the apps' label families are
theirs, registered with their score families (assessor.registry.ScoreFamily).
"""

import math
from collections import Counter, defaultdict

from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.models import Run
from assessor.scoring.scores import ALL_TOPICS, NUGGET_METRICS, SUPPORT_METRICS, Scores
from metaeval.models import ImportedScore, ScoreTable

FETCH_CHUNK = 20_000


# --- imported score tables ----------------------------------------------------------------


def score_tables_list() -> list[str]:
    return list(ScoreTable.objects.order_by("name").values_list("name", flat=True))


def _metric_order(metrics: set[str]) -> tuple[str, ...]:
    known = [metric for metric in (*NUGGET_METRICS, *SUPPORT_METRICS) if metric in metrics]
    return (*known, *sorted(metrics - set(known)))


def _stored_run_ids(run_ids: set[str]) -> dict[str, str]:
    """A table's run ids mapped to the collection's (team prefixes differ between files, and a joined
    run's old id is an alias); unknown ones kept."""
    stored = set(Run.objects.values_list("run_id", flat=True))
    aliases = run_aliases()
    mapping = {}
    for run_id in run_ids:
        try:
            mapping[run_id] = run_match(run_id, stored, aliases) or run_id
        except AmbiguousRun:
            mapping[run_id] = run_id
    return mapping


def score_table_scores(*, name: str) -> Scores:
    """An imported table as Scores. A run without an `all` row gets its mean over the table's topics."""
    table = ScoreTable.objects.filter(name=name).first()
    if table is None:
        known = ", ".join(score_tables_list()) or "none"
        raise LookupError(f"no score table named {name!r}; tables: {known}")
    rows = list(table.scores.order_by().values_list("run_id", "topic_id", "metric", "value"))
    run_ids = _stored_run_ids({row[0] for row in rows})
    # Two of the table's ids naming one run (the halves of a joined run): each `all` row is the mean
    # of one half only, so that run's mean is computed from the per-topic rows instead.
    named = Counter(run_ids.values())
    per_topic: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    run_means: dict[str, dict[str, float]] = defaultdict(dict)
    metrics: set[str] = set()
    for run_id, topic_id, metric, value in rows:
        metrics.add(metric)
        if topic_id == ALL_TOPICS:
            if named[run_ids[run_id]] == 1:
                run_means[run_ids[run_id]][metric] = value
        else:
            per_topic[(run_ids[run_id], topic_id)][metric] = value
    topics = sorted({topic for _, topic in per_topic})
    runs = sorted({run for run, _ in per_topic} | set(run_means))
    for run in runs:
        for metric in metrics:
            if metric not in run_means[run] and per_topic:
                total = math.fsum(per_topic.get((run, topic), {}).get(metric, 0.0) for topic in topics)
                run_means[run][metric] = total / len(topics)
    return Scores(
        metrics=_metric_order(metrics),
        per_topic=dict(per_topic),
        run_means={run: means for run, means in run_means.items() if means},
        topics=topics,
        runs=runs,
    )


# --- descriptive statistics -----------------------------------------------------------------


def score_table_description_data(*, name: str) -> dict[str, float | int]:
    table = ScoreTable.objects.filter(name=name).first()
    if table is None:
        return {"topics": 0, "runs": 0, "rows": 0}
    scores = ImportedScore.objects.filter(table=table).order_by()
    return {
        "topics": scores.exclude(topic_id=ALL_TOPICS).values("topic_id").distinct().count(),
        "runs": scores.values("run_id").distinct().count(),
        "rows": scores.count(),
    }
