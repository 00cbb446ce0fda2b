"""People's verdicts: giving the work, the page's rows, saving one verdict, submitting.

Saves go through the judging core (assessor.work.judging): the work locked and
checked open at the page's version, the answer named by its position and token,
replays and changes in another tab handled, the active time credited.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from assessor.models import Answer, AssessorWork, Topic
from assessor.work.access import assessor_work
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_at,
    answer_token,
    label_write,
    locked_open_work,
    shuffled,
)
from assessor.work.services import WorkError, person_source_claim, work_give, work_submit_mark
from tests.verdicts.kinds import LABEL_FAMILY, VERDICT_WORK
from tests.verdicts.models import Verdict

PEOPLE_SOURCE = "people"  # the source people's verdicts go into unless the organizer names another
LABELS = ("yes", "no")
EMPTY = ""  # what a page shows for an answer not judged yet


def verdict_work_give(*, topic: Topic, assessor: User, kind: str = VERDICT_WORK, by: User | None, name: str = "") -> AssessorWork:
    """The registry's `WorkPage.give`: the topic's verdict work, into a people's source."""
    source = person_source_claim(family=LABEL_FAMILY, name=name or PEOPLE_SOURCE, by=by)
    return work_give(topic=topic, assessor=assessor, kind=kind, by=by, source=source)


def answer_order(work: AssessorWork) -> list[int]:
    """The topic's answers in the order this assessor sees them (shuffled once per assessor and topic)."""
    ids = Answer.objects.filter(topic_id=work.topic_id).values_list("pk", flat=True)
    return shuffled(list(ids), assessor_id=work.assessor_id, topic_id=work.topic_id)


@dataclass(frozen=True)
class Row:
    number: int  # 1-based position: the page names an answer by it and its token, never by id or run
    token: str
    text: str
    verdict: str  # "yes", "no", or EMPTY


def page_rows(work: AssessorWork) -> list[Row]:
    order = answer_order(work)
    texts = dict(Answer.objects.filter(pk__in=order).values_list("pk", "text"))
    given = dict(Verdict.objects.filter(source=work.source, answer_id__in=order).values_list("answer_id", "label"))
    return [
        Row(number, answer_token(answer_id), texts[answer_id], given.get(answer_id, EMPTY))
        for number, answer_id in enumerate(order, start=1)
    ]


def work_for_assessor(*, work_id: int, user: User) -> AssessorWork:
    return assessor_work(work_id=work_id, user=user, kinds=[VERDICT_WORK])


@transaction.atomic
def verdict_save(
    *, work_id: int, user: User, number: int, label: str, previous: str, expected_version: int | None, token: str | None, op_id: str = ""
) -> Verdict | Replayed:
    if label not in LABELS:
        raise JudgeError("A verdict is yes or no.")
    work = locked_open_work(work_id=work_id, user=user, kinds=[VERDICT_WORK], expected_version=expected_version)
    if work.source is None:
        raise JudgeError("This work has no verdict source: an organizer has to give it again.")
    source = work.source
    answer_id = answer_at(order=answer_order(work), number=number, token=token)
    existing = Verdict.objects.select_for_update().filter(source=source, answer_id=answer_id).first()
    saved = label_write(
        work=work,
        existing=existing,
        empty=EMPTY,
        value=label,
        previous=previous,
        conflict=lambda current: f"This answer's verdict was changed to {current or 'none'} in another tab: reload.",
        create=lambda seconds: Verdict.objects.create(
            answer_id=answer_id, source=source, work=work, created_by=user, label=label, seconds_spent=seconds
        ),
        item=str(number),
        op_id=op_id,
    )
    return saved


@transaction.atomic
def verdict_submit(*, work_id: int, user: User, expected_version: int | None) -> None:
    work = locked_open_work(work_id=work_id, user=user, kinds=[VERDICT_WORK], expected_version=expected_version)
    missing = len(answer_order(work)) - Verdict.objects.filter(source=work.source, work=work).count()
    if missing:
        raise WorkError(f"{missing} answer(s) have no verdict yet.")
    work_submit_mark(work=work, user=user)


def verdict_progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The registry's `WorkPage.progress`: answers judged of the topic's answers, per work (two queries)."""
    topics = {work.topic_id for work in works}
    totals: dict[str, int] = {}
    for topic_id in Answer.objects.filter(topic_id__in=topics).values_list("topic_id", flat=True):
        totals[topic_id] = totals.get(topic_id, 0) + 1
    done: dict[int, int] = {}
    for work_id in Verdict.objects.filter(work__in=works).values_list("work_id", flat=True):
        done[work_id] = done.get(work_id, 0) + 1
    return {work.pk: (done.get(work.pk, 0), totals.get(work.topic_id, 0)) for work in works}
