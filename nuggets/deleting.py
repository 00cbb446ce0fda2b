"""Deleting uploaded nugget sets by name (every topic's set of that name), while nothing depends on them."""

from collections import defaultdict

from django.db.models import Count, Q

from assessor.collection.deleting import counted, label_sources_release
from assessor.models import AssessorWork
from assessor.registry import Deletable, UploadRow
from nuggets.giving import NIST_SOURCE
from nuggets.kinds import BANK_AUTO_EDIT, BANK_MANUAL, NUGGETS_AUTO_EDIT, NUGGETS_MANUAL
from nuggets.models import Nugget, NuggetSet


def nugget_upload_rows() -> list[UploadRow]:
    sets = (
        NuggetSet.objects.values("name")
        .annotate(
            topics=Count("pk", distinct=True),
            nugget_count=Count("nuggets", distinct=True),
            made_here=Count("pk", filter=Q(imported_from__isnull=True), distinct=True),
            edited=Count("edited_sets", distinct=True),
        )
        .order_by("name")
    )
    # Labels of any condition on the nuggets: the assignment app's rows point at nuggets ("labels").
    labels = dict(
        Nugget.objects.values("nugget_set__name")
        .annotate(label_count=Count("labels"))
        .filter(label_count__gt=0)
        .values_list("nugget_set__name", "label_count")
    )
    work: dict[str, int] = defaultdict(int)
    for name in AssessorWork.objects.exclude(nugget_set_name="").values_list("nugget_set_name", flat=True):
        work[name] += 1
    rows = []
    for row in sets:
        name = row["name"]
        blockers = []
        if row["made_here"]:
            blockers.append(
                f"made here on {counted(row['made_here'], 'topic')} (by assessors or an LLM job), not uploaded"
            )
        if labels.get(name):
            blockers.append(f"{counted(labels[name], 'assignment label')} on its nuggets")
        if row["edited"]:
            blockers.append(f"{counted(row['edited'], 'post-edited set')} started from these drafts")
        if work.get(name):
            blockers.append(f"assessors' work names it ({counted(work[name], 'topic')})")
        summary = f"{counted(row['topics'], 'topic')}, {counted(row['nugget_count'], 'nugget')}"
        rows.append(UploadRow(name=name, summary=summary, blockers=blockers))
    return rows


def nugget_sets_delete(name: str) -> str:
    sets = NuggetSet.objects.filter(name=name)
    topics = sets.count()
    nuggets = Nugget.objects.filter(nugget_set__name=name).count()
    source_ids = set(sets.values_list("source_id", flat=True))
    sets.delete()
    label_sources_release(source_ids)
    return f"{counted(topics, 'topic')}, {counted(nuggets, 'nugget')}"


NUGGETS_DELETABLE = Deletable(
    kind="nuggets", label="nugget set", rows=nugget_upload_rows, delete=nugget_sets_delete, order=20
)


def qrels_read_by_nugget_work() -> dict[str, list[str]]:
    """The NIST qrels are what assessors read to make nuggets: they stay while such work exists."""
    # A bank's work reads them too: its answers' documents are picked among the topic's qrels' segments.
    kinds = (NUGGETS_MANUAL, NUGGETS_AUTO_EDIT, BANK_MANUAL, BANK_AUTO_EDIT)
    topics = AssessorWork.objects.filter(kind__in=kinds).values("topic").distinct().count()
    if not topics:
        return {}
    return {NIST_SOURCE: [f"assessors' nugget work reads its relevant segments ({counted(topics, 'topic')})"]}
