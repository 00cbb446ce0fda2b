"""Nugget assignment labels in the meta-evaluation: the family's items, labels and part in the disagreement study.

An item is (answer id, nugget id), labelled against one nugget list: the labels are read on the list named,
and a study's independent assessor labels a list a person made or edited. Registered with the label family
(assignment.parts), as every family's are (assessor.registry.LabelFamily, StudyJudging).
"""

from collections.abc import Collection, Sequence

from django.contrib.auth.models import User

from assessor.collection.exporting import PROVENANCE_FIELDS
from assessor.jobs.llm.client import LLMConfig
from assessor.models import AssessorWork, Job, LabelSource, Topic
from assessor.registry import StudyItem, StudyItemShown, StudyJudging, TopicItemLabels, study_item_stored
from assessor.work.services import WorkError, work_give
from assignment.auto import auto_assign_job_create
from assignment.judging import HUMAN_NUGGET_KINDS
from assignment.kinds import ASSIGN_MANUAL
from assignment.models import AssignmentLabel
from assignment.selectors import counted_labels
from nuggets.models import NuggetSet

# In their ordinal order: the rows and columns of the confusion matrices.
LABELS = (
    AssignmentLabel.Label.NOT_SUPPORT.value,
    AssignmentLabel.Label.PARTIAL_SUPPORT.value,
    AssignmentLabel.Label.SUPPORT.value,
)


def set_item_labels(name: str, topics: Collection[str] | None, nugget_set: str) -> TopicItemLabels:
    """The registry's `LabelFamily.set_item_labels`: an assigner's counted labels per topic, on the nugget list
    `nugget_set` (every list when empty)."""
    rows = counted_labels().filter(assigner=name)
    if nugget_set:
        rows = rows.filter(nugget__nugget_set__name=nugget_set)
    if topics is not None:
        rows = rows.filter(nugget__nugget_set__topic_id__in=list(topics))
    result: TopicItemLabels = {}
    for topic_id, answer_id, nugget_id, label in rows.order_by().values_list(
        "nugget__nugget_set__topic_id", "answer_id", "nugget_id", "label"
    ):
        result.setdefault(topic_id, {})[(answer_id, nugget_id)] = label
    return result


def _give(
    *,
    topic: Topic,
    assessor: User,
    by: User | None,
    source: LabelSource,
    blind_to: Sequence[LabelSource],
    items: Sequence[StudyItem],
    nugget_set: str,
) -> AssessorWork:
    made_by_people = NuggetSet.objects.filter(
        topic=topic, name=nugget_set, kind__in=HUMAN_NUGGET_KINDS, form=NuggetSet.Form.FACTS
    )
    if not made_by_people.exists():
        raise WorkError(f"Topic {topic.pk}'s nugget list {nugget_set!r} is not one a person made or edited.")
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=ASSIGN_MANUAL,
        by=by,
        source=source,
        nugget_set_name=nugget_set,
        blind_to=blind_to,
        items=[study_item_stored(item) for item in items],
    )


def _job(
    *,
    name: str,
    nugget_set: str,
    topics: list[str],
    answers: list[int],
    items: list[StudyItem],
    user: User | None,
    endpoint: str | None,
    config: LLMConfig | None,
) -> Job:
    return auto_assign_job_create(
        nuggets=nugget_set,
        name=name,
        topics=topics,
        user=user,
        config=config,
        answers=answers,
        endpoint=endpoint,
    )


def _shown(items: Collection[StudyItem]) -> dict[StudyItem, StudyItemShown]:
    return {item: StudyItemShown(item[0], f"nugget {item[1]}") for item in items}


def _labelled(name: str, items: Collection[StudyItem]) -> dict[StudyItem, tuple[str, tuple]]:
    answers = sorted({item[0] for item in items})
    assigned = counted_labels().filter(assigner=name, answer_id__in=answers).order_by()
    found = {
        (row[0], row[1]): (row[2], row[3:])
        for row in assigned.values_list("answer_id", "nugget_id", "label", *PROVENANCE_FIELDS)
    }
    return {item: made for item, made in found.items() if item in items}


STUDY = StudyJudging(
    work_kind=ASSIGN_MANUAL,
    compares="nugget assignment labels",
    give=_give,
    llm_job=_job,
    shown=_shown,
    labelled=_labelled,
    nugget_set="nugget list",
    order=20,
)
