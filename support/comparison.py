"""The support methods in the meta-evaluation: what it asks of a method beyond its scores.

Registered with the methods' score family (support.parts; assessor.registry.ScoreFamily): the labels two
methods share on first citations, a method's descriptive statistics, and the method's label source.
"""

from collections import defaultdict

from django.db.models import Count

from assessor.models import Citation
from assessor.registry import Crosstab
from assessor.scoring.lifecycle import counted_sql
from assessor.scoring.paired import paired_label_counts
from metaeval.stats import support_method_describe
from support.kinds import LABEL_FAMILY
from support.models import SupportLabel
from support.selectors import counted_labels, method_require
from support.study import LABEL_NAMES

LABELS = tuple(LABEL_NAMES.values())


def method_crosstab(a: tuple[str, ...], b: tuple[str, ...]) -> Crosstab:
    """The registry's `ScoreFamily.crosstab`: (label by a, label by b) over the first citations both methods
    judged, unjudged (-1) left out, with the numbers of a's and of b's labels in all."""
    (method_a,), (method_b,) = a, b
    judged = [int(label) for label in LABEL_NAMES]
    labels = counted_labels().filter(citation__position=0, label__in=judged).order_by()
    if method_a == method_b:
        rows = labels.filter(method=method_a).values_list("label").annotate(n=Count("id"))
        counts = {(LABEL_NAMES[label],) * 2: n for label, n in rows}
        return Crosstab(LABELS, counts, sum(counts.values()), sum(counts.values()))
    citation_sql, citation_params = Citation.objects.filter(position=0).values("id").query.sql_with_params()
    raw, total_a, total_b = paired_label_counts(
        model=SupportLabel, who="method", a=method_a, b=method_b, item=("citation_id",),
        row_filter=f"{{t}}label IN ({', '.join(map(str, judged))}) AND " + counted_sql("{t}"),
        item_filter=f"{{t}}citation_id IN ({citation_sql})", item_params=list(citation_params),
        totals=lambda: dict(labels.filter(method__in=[method_a, method_b]).values_list("method").annotate(n=Count("id"))),
    )  # fmt: skip
    counts = {(LABEL_NAMES[label_a], LABEL_NAMES[label_b]): n for (label_a, label_b), n in raw.items()}
    return Crosstab(LABELS, counts, total_a, total_b)


def method_describe(columns: tuple[str, ...]) -> dict[str, float | int]:
    """The registry's `ScoreFamily.describe`: a method's first-citation labels counted by label (-1..2) and the
    topics it judged (metaeval.stats.support_method_describe). LookupError when it has no label."""
    (method,) = columns
    rows = (
        counted_labels()
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
    if not label_counts:
        raise LookupError("no support labels for this method")
    return support_method_describe(dict(label_counts), len(topics))


def method_require_columns(columns: tuple[str, ...]) -> None:
    """The registry's `ScoreFamily.require`."""
    method_require(method=columns[0])


def method_label_source(columns: tuple[str, ...]) -> tuple[str, str]:
    """The registry's `ScoreFamily.label_source`: the method's own source."""
    return LABEL_FAMILY, columns[0]
