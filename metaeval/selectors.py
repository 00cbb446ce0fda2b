"""Reads for the meta-evaluation: imported score tables, label cross-tabulations, descriptive counts.

Each function runs a fixed number of queries whatever the size of the data;
label pairs are counted in the database (one row per label pair), never
fetched label by label, so a matrix over a million labels stays fast.
"""

import math
from collections import Counter, defaultdict
from collections.abc import Callable

from django.db import connection
from django.db.models import Count

from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.models import Citation, Run
from assessor.scoring.lifecycle import counted_sql
from assessor.scoring.scores import ALL_TOPICS, NUGGET_METRICS, SUPPORT_METRICS, Scores
from assignment.models import AssignmentLabel
from assignment.selectors import counted_labels as counted_assignment_labels
from metaeval.models import ImportedScore, ScoreTable
from metaeval.stats import NuggetRow
from nuggets.models import Nugget
from nuggets.selectors import nugget_sets_counted_q
from support.models import SupportLabel
from support.selectors import counted_labels as counted_support_labels

FETCH_CHUNK = 20_000
SUPPORT_LABEL_NAMES = {SupportLabel.Label.NS: "NS", SupportLabel.Label.PS: "PS", SupportLabel.Label.FS: "FS"}


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


# --- label cross-tabulations for the confusion matrices ------------------------------------


def _condition_labels(*, nuggets: str, assigner: str):
    return counted_assignment_labels().filter(assigner=assigner, nugget__nugget_set__name=nuggets).order_by()


PAIRED_LABELS_JOIN_SQL = """
SELECT a.label, b.label, COUNT(*)
FROM {table} a
JOIN {table} b ON {item_join} AND b.{who} = %s AND {row_filter_b}
WHERE a.{who} = %s AND {row_filter_a} AND {item_filter_a}
GROUP BY a.label, b.label
"""
PAIRED_LABELS_GROUP_SQL = """
SELECT label_a, label_b, COUNT(*) FROM (
    SELECT {item},
           MAX(CASE WHEN {who} = %s THEN label END) AS label_a,
           MAX(CASE WHEN {who} = %s THEN label END) AS label_b
    FROM {table}
    WHERE {who} IN (%s, %s) AND {row_filter}
    GROUP BY {item}
) paired
WHERE {item_filter}
GROUP BY label_a, label_b
"""


def _paired_label_counts(
    *,
    model,
    who: str,
    a: str,
    b: str,
    item: tuple[str, ...],
    row_filter: str,
    item_filter: str,
    item_params: list,
    totals: Callable[[], dict[str, int]],
) -> tuple[dict[tuple, int], int, int]:
    """(label by a, label by b) -> count over the items both labelled, and the numbers of a's and b's labels.

    `row_filter` keeps a label row (written with `{t}` before column names);
    `item_filter` keeps an item, checked once (its params are `item_params`);
    `totals` counts each side's labels where the query does not.
    """
    table = connection.ops.quote_name(model._meta.db_table)
    if connection.vendor == "postgresql":
        sql = PAIRED_LABELS_JOIN_SQL.format(
            table=table, who=who,
            item_join=" AND ".join(f"b.{column} = a.{column}" for column in item),
            row_filter_a=row_filter.format(t="a."), row_filter_b=row_filter.format(t="b."),
            item_filter_a=item_filter.format(t="a."),
        )  # fmt: skip
        params = [b, a, *item_params]
    else:
        sql = PAIRED_LABELS_GROUP_SQL.format(
            table=table, who=who, item=", ".join(item),
            row_filter=row_filter.format(t=""), item_filter=item_filter.format(t=""),
        )  # fmt: skip
        params = [a, b, a, b, *item_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    paired = {(label_a, label_b): n for label_a, label_b, n in rows if label_a is not None and label_b is not None}
    if connection.vendor == "postgresql":
        counted = totals()
        return paired, counted.get(a, 0), counted.get(b, 0)
    total_a = sum(n for label_a, _, n in rows if label_a is not None)
    total_b = sum(n for _, label_b, n in rows if label_b is not None)
    return paired, total_a, total_b


def assignment_crosstab(
    *, nuggets: str, assigner_a: str, assigner_b: str
) -> tuple[dict[tuple[str, str], int], int, int]:
    """Counts of (label by a, label by b) over the (answer, nugget) pairs both labelled.

    Returns the counts and the numbers of a's and of b's labels in all, so the
    caller can tell how many pairs only one of them labelled.
    """
    labels = counted_assignment_labels().filter(nugget__nugget_set__name=nuggets).order_by()
    if assigner_a == assigner_b:
        rows = labels.filter(assigner=assigner_a).values_list("label").annotate(n=Count("id"))
        counts = {(label, label): n for label, n in rows}
        return counts, sum(counts.values()), sum(counts.values())
    counted_nuggets = Nugget.objects.filter(nugget_sets_counted_q("nugget_set__"), nugget_set__name=nuggets)
    nugget_sql, nugget_params = counted_nuggets.values("id").query.sql_with_params()
    return _paired_label_counts(
        model=AssignmentLabel, who="assigner", a=assigner_a, b=assigner_b, item=("answer_id", "nugget_id"),
        row_filter=counted_sql("{t}"), item_filter=f"{{t}}nugget_id IN ({nugget_sql})", item_params=list(nugget_params),
        totals=lambda: dict(
            labels.filter(assigner__in=[assigner_a, assigner_b]).values_list("assigner").annotate(n=Count("id"))
        ),
    )  # fmt: skip


def support_crosstab(*, method_a: str, method_b: str) -> tuple[dict[tuple[str, str], int], int, int]:
    """Counts of (label by a, label by b) over the first citations both judged; unjudged (-1) left out."""
    judged = [int(label) for label in SUPPORT_LABEL_NAMES]
    labels = counted_support_labels().filter(citation__position=0, label__in=judged).order_by()
    if method_a == method_b:
        rows = labels.filter(method=method_a).values_list("label").annotate(n=Count("id"))
        counts = {(SUPPORT_LABEL_NAMES[label],) * 2: n for label, n in rows}
        return counts, sum(counts.values()), sum(counts.values())
    citation_sql, citation_params = Citation.objects.filter(position=0).values("id").query.sql_with_params()
    raw, total_a, total_b = _paired_label_counts(
        model=SupportLabel, who="method", a=method_a, b=method_b, item=("citation_id",),
        row_filter=f"{{t}}label IN ({', '.join(map(str, judged))}) AND " + counted_sql("{t}"),
        item_filter=f"{{t}}citation_id IN ({citation_sql})", item_params=list(citation_params),
        totals=lambda: dict(labels.filter(method__in=[method_a, method_b]).values_list("method").annotate(n=Count("id"))),
    )  # fmt: skip
    counts = {(SUPPORT_LABEL_NAMES[a], SUPPORT_LABEL_NAMES[b]): n for (a, b), n in raw.items()}
    return counts, total_a, total_b


# --- descriptive statistics -----------------------------------------------------------------


def condition_description_data(*, nuggets: str, assigner: str) -> tuple[list[NuggetRow], dict[str, int], int]:
    """The nuggets of a condition's labelled topics, its labels counted by label, and its topic count."""
    per_topic_label = (
        _condition_labels(nuggets=nuggets, assigner=assigner)
        .values_list("nugget__nugget_set__topic_id", "label")
        .annotate(n=Count("id"))
    )
    label_counts: dict[str, int] = defaultdict(int)
    topics: set[str] = set()
    for topic_id, label, n in per_topic_label:
        topics.add(topic_id)
        label_counts[label] += n
    rows = (
        Nugget.objects.filter(
            nugget_sets_counted_q("nugget_set__"), nugget_set__name=nuggets, nugget_set__topic_id__in=topics
        )
        .order_by()
        .values_list("nugget_set__topic_id", "text", "importance")
    )
    nugget_rows = [NuggetRow(topic_id, len(text.split()), importance) for topic_id, text, importance in rows]
    return nugget_rows, dict(label_counts), len(topics)


def support_description_data(*, method: str) -> tuple[dict[int, int], int]:
    """A method's first-citation labels counted by label (-1..2), and the number of topics it judged."""
    rows = (
        counted_support_labels()
        .filter(method=method, citation__position=0)
        .order_by()
        .values_list("citation__sentence__answer__topic_id", "label")
        .annotate(n=Count("id"))
    )
    label_counts: dict[int, int] = defaultdict(int)
    topics: set[str] = set()
    for topic_id, label, n in rows:
        topics.add(topic_id)
        label_counts[label] += n
    return dict(label_counts), len(topics)


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
