"""The disagreement study's parts for the TREC 2024 family's labels: support and nugget assignment.

Their items are the meta-evaluation's (metaeval.judges): (first citation id,) for support, (answer id,
nugget id) for assignment. Families of other apps register their own parts with their label family
(assessor.registry.StudyJudging); these two live here, beside the judges that read them.
"""

from collections.abc import Collection, Sequence

from django.contrib.auth.models import User

from assessor.collection.exporting import PROVENANCE_FIELDS
from assessor.jobs.llm.client import LLMConfig
from assessor.models import AssessorWork, Citation, Job, LabelSource, Topic
from assessor.registry import StudyItem, StudyItemShown, StudyJudging
from assessor.work.services import WorkError, work_give
from assignment import kinds as assignment_kinds
from assignment.auto import auto_assign_job_create
from assignment.judging import HUMAN_NUGGET_KINDS
from assignment.selectors import counted_labels as counted_assignment_labels
from metaeval.judges import Family, item_stored
from metaeval.selectors import SUPPORT_LABEL_NAMES
from nuggets.models import NuggetSet
from support import kinds as support_kinds
from support.auto import auto_support_job_create
from support.selectors import counted_labels as counted_support_labels

# --- support labels: an item is (first citation id,) -------------------------------------------


def _support_give(
    *,
    topic: Topic,
    assessor: User,
    by: User | None,
    source: LabelSource,
    blind_to: Sequence[LabelSource],
    items: Sequence[StudyItem],
    nugget_set: str,
) -> AssessorWork:
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=support_kinds.SUPPORT_SCRATCH,
        by=by,
        source=source,
        blind_to=blind_to,
        items=[item_stored(item) for item in items],
    )


def _support_job(
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
    return auto_support_job_create(
        name=name, topics=topics, user=user, config=config, answers=answers, endpoint=endpoint
    )


def _support_shown(items: Collection[StudyItem]) -> dict[StudyItem, StudyItemShown]:
    cited = Citation.objects.filter(pk__in=[item[0] for item in items]).values_list(
        "pk", "sentence__answer_id", "sentence__index"
    )
    return {(pk,): StudyItemShown(answer_id, f"citation {pk} (sentence {index})") for pk, answer_id, index in cited}


def _support_labelled(name: str, items: Collection[StudyItem]) -> dict[StudyItem, tuple[str, tuple]]:
    judged = counted_support_labels().filter(method=name, citation_id__in=sorted(item[0] for item in items))
    found = {
        (row[0],): (SUPPORT_LABEL_NAMES.get(row[1], str(row[1])), row[2:])
        for row in judged.order_by().values_list("citation_id", "label", *PROVENANCE_FIELDS)
    }
    return {item: made for item, made in found.items() if item in items}


def _support_judgeable(items: Collection[StudyItem]) -> set[StudyItem]:
    """An assessor cannot judge a citation of a passage without text."""
    empty = set(
        Citation.objects.filter(pk__in=[item[0] for item in items], segment__text="").values_list("pk", flat=True)
    )
    return {item for item in items if item[0] not in empty}


# --- nugget assignment labels: an item is (answer id, nugget id) ------------------------------------------


def _assignment_give(
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
        kind=assignment_kinds.ASSIGN_MANUAL,
        by=by,
        source=source,
        nugget_set_name=nugget_set,
        blind_to=blind_to,
        items=[item_stored(item) for item in items],
    )


def _assignment_job(
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


def _assignment_shown(items: Collection[StudyItem]) -> dict[StudyItem, StudyItemShown]:
    return {item: StudyItemShown(item[0], f"nugget {item[1]}") for item in items}


def _assignment_labelled(name: str, items: Collection[StudyItem]) -> dict[StudyItem, tuple[str, tuple]]:
    answers = sorted({item[0] for item in items})
    assigned = counted_assignment_labels().filter(assigner=name, answer_id__in=answers).order_by()
    found = {
        (row[0], row[1]): (row[2], row[3:])
        for row in assigned.values_list("answer_id", "nugget_id", "label", *PROVENANCE_FIELDS)
    }
    return {item: made for item, made in found.items() if item in items}


FIRST_FAMILY_STUDIES: dict[str, StudyJudging] = {
    Family.SUPPORT: StudyJudging(
        work_kind=support_kinds.SUPPORT_SCRATCH,
        compares="support labels",
        give=_support_give,
        llm_job=_support_job,
        shown=_support_shown,
        labelled=_support_labelled,
        judgeable=_support_judgeable,
    ),
    Family.ASSIGNMENT: StudyJudging(
        work_kind=assignment_kinds.ASSIGN_MANUAL,
        compares="nugget assignment labels",
        give=_assignment_give,
        llm_job=_assignment_job,
        shown=_assignment_shown,
        labelled=_assignment_labelled,
        nugget_set="nugget list",
    ),
}
