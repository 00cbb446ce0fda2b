"""Two label sources' labels of the items both labelled, counted by pair of labels in the database.

One row per label pair, never fetched label by label, so that a confusion matrix over a million labels stays
fast: on PostgreSQL a self-join on the item, elsewhere one pass grouped by item. The apps' crosstabs
(assessor.registry.Crosstab) run through it.
"""

from collections.abc import Callable

from django.db import connection
from django.db.models import Model

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


def paired_label_counts(
    *,
    model: type[Model],
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

    `who` is the column naming the source; `row_filter` keeps a label row (written with `{t}` before column
    names); `item_filter` keeps an item, checked once (its params are `item_params`); `totals` counts each
    side's labels where the query does not.
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
