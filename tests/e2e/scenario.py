"""Builders for nugget workspace tests: a topic with relevant segments, drafts, and given work."""

from django.contrib.auth.models import User

from assessor.models import AssessorWork, ImportBatch, Topic
from assessor.work.roles import Role
from nuggets.models import Nugget, NuggetSet
from nuggets.services import nugget_work_give
from tests.builders import make_batch, make_qrel, make_segment, make_topic, make_user


def make_draft_set(topic: Topic, texts: list[str], *, name: str = "draft") -> NuggetSet:
    batch = make_batch(kind=ImportBatch.Kind.NUGGETS, file_name=f"{name}.jsonl")
    drafts = NuggetSet.objects.create(topic=topic, kind=NuggetSet.Kind.DRAFT, name=name, imported_from=batch)
    Nugget.objects.bulk_create(
        Nugget(nugget_set=drafts, position=i, text=text, imported_from=batch) for i, text in enumerate(texts)
    )
    return drafts


def make_relevant_segments(topic: Topic, grades: list[int]) -> list:
    """Segments judged by NIST with these grades (0 is judged irrelevant)."""
    segments = []
    for index, grade in enumerate(grades):
        segment = make_segment(text=f"Segment {index} of {topic.pk}: grade {grade} passage about nuggets.")
        make_qrel(topic, segment, grade=grade, source="nist")
        segments.append(segment)
    return segments


def make_given_topic(
    *,
    condition: str = "manual",
    drafts: list[str] | None = None,
    grades: list[int] | None = None,
    assessor: User | None = None,
    organizer: User | None = None,
    query: str = "how do nuggets evaluate rag answers",
) -> AssessorWork:
    topic = make_topic(query=query)
    make_relevant_segments(topic, grades if grades is not None else [2, 1, 0, 3])
    if condition == NuggetSet.Kind.AUTO_EDIT:
        make_draft_set(topic, drafts if drafts is not None else [f"draft fact number {i}" for i in range(30)])
    assessor = assessor or make_user(Role.ASSESSOR)
    organizer = organizer or make_user(Role.ORGANIZER)
    return nugget_work_give(topic=topic, assessor=assessor, condition=condition, by=organizer)


def nugget_set_of(work: AssessorWork) -> NuggetSet:
    return NuggetSet.objects.get(topic_id=work.topic_id, name=work.nugget_set_name)


def texts_of(work: AssessorWork) -> list[str]:
    return list(nugget_set_of(work).nuggets.order_by("position").values_list("text", flat=True))
