"""Assignment labels as dependents of nugget lists (nuggets.dependents).

When a list changes after it was labelled: the labels of removed or reworded
nuggets are retired (RetiredAssignmentLabel keeps them, scores no longer see
them); each ManualAssign work on the list is reopened for exactly the changed
nuggets; each LLM source that labelled the list is marked stale for them,
until a re-run labels them (assignment.auto.auto_assign_rerun_create).
"""

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import User
from django.db.models import Count

from assessor.models import Answer, AssessorWork, LabelSource
from assessor.scoring.kept import scores_refresh
from assessor.work.services import work_reopen_mark
from assignment.kinds import ASSIGN_MANUAL
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from assignment.selectors import FAMILY
from nuggets.dependents import Change, Dependent
from nuggets.models import NuggetSet

# A label made for the old wording of a nugget no longer judges it.
RETIRED_CHANGES = (Change.REWORDED,)


def labels_describe(nugget_ids: Sequence[int]) -> list[Dependent]:
    rows = (
        AssignmentLabel.objects.filter(nugget_id__in=nugget_ids)
        .values("source__name", "source__kind")
        .annotate(n=Count("id"))
        .order_by("source__name")
    )
    return [
        Dependent(
            source=f"assigner {row['source__name']!r} ({LabelSource.Kind(row['source__kind']).label})",
            labels=row["n"],
            kind=row["source__kind"],
        )
        for row in rows
    ]


def labels_retire(nugget_ids: Sequence[int], reason: str, texts: Mapping[int, str] | None = None) -> int:
    """Move the labels of these nuggets to the record of retired labels (with the nugget's text they were
    made for: `texts`, where it has changed since)."""
    labels = list(
        AssignmentLabel.objects.filter(nugget_id__in=nugget_ids).select_related("nugget", "created_by", "imported_from")
    )
    RetiredAssignmentLabel.objects.bulk_create(
        RetiredAssignmentLabel(
            answer_id=label.answer_id,
            nugget_id=label.nugget_id,
            nugget_text=(texts or {}).get(label.nugget_id, label.nugget.text),
            nugget_set_id=label.nugget.nugget_set_id,
            source_id=label.source_id,
            assigner=label.assigner,
            label=label.label,
            made_by=label.made_by,
            made_at=label.created_at,
            work_id=label.work_id,
            seconds_spent=label.seconds_spent,
            reason=reason,
        )
        for label in labels
    )
    AssignmentLabel.objects.filter(pk__in=[label.pk for label in labels]).delete()
    topics = Answer.objects.filter(pk__in={label.answer_id for label in labels}).values_list("topic_id", flat=True)
    scores_refresh(family=FAMILY, topics=set(topics))
    return len(labels)


def _changes_text(changes: Mapping[int, str], numbers: Mapping[int, int]) -> str:
    parts = [
        f"nugget {numbers.get(nugget_id, '?')} {why}"
        for nugget_id, why in sorted(changes.items(), key=lambda c: numbers.get(c[0], 0))
    ]
    return ", ".join(parts)


def list_changed(
    nugget_set: NuggetSet, changes: Mapping[int, str], by: User | None, before: Mapping[int, str], reason: str
) -> list[str]:
    """Retire what no longer holds, reopen the people's work and mark the LLMs stale, for the changed nuggets."""
    done: list[str] = []
    retired = labels_retire([n for n, why in changes.items() if why in RETIRED_CHANGES], Change.REWORDED, before)
    if retired:
        done.append(f"{retired} label(s) of reworded nuggets retired")
    relabel = {nugget_id: why for nugget_id, why in changes.items() if why != Change.REMOVED}
    if not relabel:
        return done
    numbers = {
        pk: position + 1
        for position, pk in enumerate(nugget_set.nuggets.order_by("position", "id").values_list("pk", flat=True))
    }
    why = f"The nugget list changed: {_changes_text(relabel, numbers)}."
    if reason:
        why += f" The organizer reopened it: {reason.rstrip('.')}."
    redo = {"nuggets": {str(nugget_id): change for nugget_id, change in relabel.items()}, "why": why}
    works = AssessorWork.objects.select_for_update().filter(
        kind=ASSIGN_MANUAL, topic_id=nugget_set.topic_id, nugget_set_name=nugget_set.name
    )
    for work in works:
        # Work still open as a whole needs no reopening: every missing label is asked for anyway.
        if work.status == AssessorWork.Status.SUBMITTED:
            work_reopen_mark(work=work, by=by, reason=why, redo=redo)
            done.append(f"ManualAssign of {work.assessor} reopened for {len(relabel)} nugget(s)")
    labelled_by = set(AssignmentLabel.objects.filter(nugget__nugget_set=nugget_set).values_list("source_id", flat=True))
    labelled_by |= set(RetiredAssignmentLabel.objects.filter(nugget_set=nugget_set).values_list("source_id", flat=True))
    for source in LabelSource.objects.select_for_update().filter(pk__in=labelled_by, kind=LabelSource.Kind.LLM):
        topics = source.stale.setdefault(nugget_set.name, {})
        topics[nugget_set.topic_id] = sorted(set(topics.get(nugget_set.topic_id, [])) | set(relabel))
        source.save(update_fields=["stale"])
        done.append(f"the LLM assigner {source.name!r} is stale on {len(relabel)} nugget(s)")
    return done


def stale_settle(source: LabelSource, nugget_set: NuggetSet) -> None:
    """Clear a source's stale mark on a topic once every answer it labelled there has all the stale nuggets."""
    source = LabelSource.objects.select_for_update().get(pk=source.pk)
    topics = source.stale.get(nugget_set.name, {})
    wanted = set(topics.get(nugget_set.topic_id, []))
    if not wanted:
        return
    present = set(nugget_set.nuggets.filter(pk__in=wanted).values_list("pk", flat=True))
    labels = AssignmentLabel.objects.filter(source=source, nugget__nugget_set=nugget_set)
    answers = labels.values("answer_id").distinct().count()
    if labels.filter(nugget_id__in=present).count() < answers * len(present):
        return
    del topics[nugget_set.topic_id]
    if not topics:
        del source.stale[nugget_set.name]
    source.save(update_fields=["stale"])
