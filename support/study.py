"""Support labels in the meta-evaluation: the family's items, labels and part in the disagreement study.

An item is a sentence's first citation, (citation id,): the pair the support metrics judge. Labels are named
as the confusion matrices name them (NS/PS/FS); an unjudged pair is no item. Registered with the label family
(support.parts), as every family's are (assessor.registry.LabelFamily, StudyJudging).
"""

from collections.abc import Collection, Sequence

from django.contrib.auth.models import User

from assessor.collection.exporting import PROVENANCE_FIELDS
from assessor.jobs.llm.client import LLMConfig
from assessor.models import AssessorWork, Citation, Job, LabelSource, Topic
from assessor.registry import StudyItem, StudyItemShown, StudyJudging, TopicItemLabels, study_item_stored
from assessor.work.services import work_give
from support.auto import auto_support_job_create
from support.kinds import SUPPORT_SCRATCH
from support.models import SupportLabel
from support.selectors import counted_labels

LABEL_NAMES = {SupportLabel.Label.NS: "NS", SupportLabel.Label.PS: "PS", SupportLabel.Label.FS: "FS"}


def item_labels(name: str, topics: Collection[str] | None = None) -> TopicItemLabels:
    """The registry's `LabelFamily.item_labels`: a method's counted labels of first citations, per topic."""
    names = {int(value): label for value, label in LABEL_NAMES.items()}
    support = counted_labels().filter(method=name, citation__position=0, label__in=list(names))
    if topics is not None:
        support = support.filter(citation__sentence__answer__topic_id__in=list(topics))
    result: TopicItemLabels = {}
    for topic_id, citation_id, value in support.order_by().values_list(
        "citation__sentence__answer__topic_id", "citation_id", "label"
    ):
        result.setdefault(topic_id, {})[(citation_id,)] = names[value]
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
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=SUPPORT_SCRATCH,
        by=by,
        source=source,
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
    return auto_support_job_create(
        name=name, topics=topics, user=user, config=config, answers=answers, endpoint=endpoint
    )


def _shown(items: Collection[StudyItem]) -> dict[StudyItem, StudyItemShown]:
    cited = Citation.objects.filter(pk__in=[item[0] for item in items]).values_list(
        "pk", "sentence__answer_id", "sentence__index"
    )
    return {(pk,): StudyItemShown(answer_id, f"citation {pk} (sentence {index})") for pk, answer_id, index in cited}


def _labelled(name: str, items: Collection[StudyItem]) -> dict[StudyItem, tuple[str, tuple]]:
    judged = counted_labels().filter(method=name, citation_id__in=sorted(item[0] for item in items))
    found = {
        (row[0],): (LABEL_NAMES.get(row[1], str(row[1])), row[2:])
        for row in judged.order_by().values_list("citation_id", "label", *PROVENANCE_FIELDS)
    }
    return {item: made for item, made in found.items() if item in items}


def _judgeable(items: Collection[StudyItem]) -> set[StudyItem]:
    """An assessor cannot judge a citation of a passage without text."""
    empty = set(
        Citation.objects.filter(pk__in=[item[0] for item in items], segment__text="").values_list("pk", flat=True)
    )
    return {item for item in items if item[0] not in empty}


STUDY = StudyJudging(
    work_kind=SUPPORT_SCRATCH,
    compares="support labels",
    give=_give,
    llm_job=_job,
    shown=_shown,
    labelled=_labelled,
    judgeable=_judgeable,
    order=10,
)
