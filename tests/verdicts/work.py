"""People's verdicts on the label-app kit (assessor.work.kit): an answer a page, named by position and token; saves
go through the judging core (replays, changes in another tab, the active time)."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django import forms
from django.contrib.auth.models import User
from django.db import transaction

from assessor.models import Answer, AssessorWork, Topic
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_at,
    answer_token,
    label_write,
    locked_open_work,
    position_choose,
    shuffled,
)
from assessor.work.kit import LabelApp, labels_counted_by_work, progress_rows, time_or_dash
from assessor.work.organizing import WorkOrganizing
from assessor.work.pages import TopicsField, assessor_choices
from assessor.work.services import WorkError, person_source_claim, work_give, work_submit_mark
from tests.verdicts.models import LABEL_FAMILY, LABELS, VERDICT_WORK, Verdict

PEOPLE_SOURCE = "people"  # the source people's verdicts go into unless the organizer names another


class GiveVerdictsForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    name = forms.SlugField(required=False, max_length=100, help_text=f"The source; defaults to {PEOPLE_SOURCE!r}.")


def verdict_work_give(
    *, topic: Topic, assessor: User, kind: str = VERDICT_WORK, by: User | None, name: str = ""
) -> AssessorWork:
    """The registry's `WorkPage.give`: the topic's verdict work, into a people's source."""
    source = person_source_claim(family=LABEL_FAMILY, name=name or PEOPLE_SOURCE, by=by)
    return work_give(topic=topic, assessor=assessor, kind=kind, by=by, source=source)


def answer_order(work: AssessorWork) -> list[int]:
    """The topic's answers in the order this assessor sees them (shuffled once per assessor and topic)."""
    ids = Answer.objects.filter(topic_id=work.topic_id).values_list("pk", flat=True)
    return shuffled(list(ids), assessor_id=work.assessor_id, topic_id=work.topic_id)


def _given(work: AssessorWork) -> dict[int, str]:  # answer id -> its verdict in this work
    return dict(Verdict.objects.filter(source_id=work.source_id, work=work).values_list("answer_id", "label"))


@dataclass(frozen=True)
class AnswerPage:  # what templates/work/judge_text.html shows
    number: int
    total_answers: int
    answers_done: int
    next_incomplete: int | None
    frozen: bool
    token: str
    text: str
    current: str  # "yes", "no", or "" before a verdict
    waiting: str = ""


def page_load(*, work: AssessorWork, number: int | None = None) -> AnswerPage | None:
    order, given = answer_order(work), _given(work)
    done = [1 if answer_id in given else 0 for answer_id in order]
    position = position_choose(done_counts=done, needed=[1] * len(order), number=number)
    if position is None:
        return None
    answer_id = order[position.number - 1]
    return AnswerPage(
        position.number,
        len(order),
        sum(done),
        position.next_incomplete,
        work.status == AssessorWork.Status.SUBMITTED,
        answer_token(answer_id),
        Answer.objects.get(pk=answer_id).text,
        given.get(answer_id, ""),
    )


@transaction.atomic
def verdict_save(
    *,
    work_id: int,
    user: User,
    number: int,
    label: str,
    previous: str,
    expected_version: int | None,
    token: str | None,
    op_id: str = "",
) -> Verdict | Replayed:
    if label not in LABELS:
        raise JudgeError("A verdict is yes or no.")
    work = locked_open_work(work_id=work_id, user=user, kinds=[VERDICT_WORK], expected_version=expected_version)
    if (source_id := work.source_id) is None:  # every verdict work is given with its source
        raise JudgeError("This work has no verdict source: an organizer has to give it again.")
    answer_id = answer_at(order=answer_order(work), number=number, token=token)
    return label_write(
        work=work,
        existing=Verdict.objects.select_for_update().filter(source_id=source_id, answer_id=answer_id).first(),
        empty="",
        value=label,
        previous=previous,
        conflict=lambda current: f"This answer's verdict was changed to {current or 'none'} in another tab: reload.",
        create=lambda seconds: Verdict.objects.create(
            answer_id=answer_id,
            source_id=source_id,
            work=work,
            created_by=user,
            label=label,
            seconds_spent=seconds,
        ),
        item=str(number),
        op_id=op_id,
    )


@transaction.atomic
def verdict_submit(*, work_id: int, user: User, expected_version: int | None) -> None:
    work = locked_open_work(work_id=work_id, user=user, kinds=[VERDICT_WORK], expected_version=expected_version)
    if missing := len(answer_order(work)) - len(_given(work)):
        raise WorkError(f"{missing} answer(s) have no verdict yet.")
    work_submit_mark(work=work, user=user)


def verdict_progress(works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
    """The registry's `WorkPage.progress`: answers judged of the topic's answers, per work (two queries)."""
    totals = Counter(
        Answer.objects.filter(topic_id__in={work.topic_id for work in works}).values_list("topic_id", flat=True)
    )
    done = labels_counted_by_work(Verdict, works)
    return {work.pk: (done.get(work.pk, 0), totals[work.topic_id]) for work in works}


@dataclass
class AnswerDetail:  # a row of one work's page for organizers, who may see runs (templates/work/organize_work.html)
    number: int
    run_id: str
    label: str
    seconds: float | None


def work_detail(work: AssessorWork) -> list[AnswerDetail]:
    runs = dict(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", "run__run_id"))
    stored = {
        row[0]: row[1:] for row in Verdict.objects.filter(work=work).values_list("answer_id", "label", "seconds_spent")
    }
    order = enumerate(answer_order(work), start=1)
    return [AnswerDetail(number, runs[answer], *stored.get(answer, ("", 0.0))) for number, answer in order]


VERDICT_JUDGING = LabelApp(
    namespace="verdicts",
    item="answer",
    template="work/judge_text.html",
    label_choices=[("yes", "y", "yes", "yes"), ("no", "n", "no", "no")],
    page_load=page_load,
    save=verdict_save,
    submit=verdict_submit,
    empty="has no answer to judge yet",
    organizing=WorkOrganizing(
        kinds=(VERDICT_WORK,),
        title="Answer verdicts",
        form=GiveVerdictsForm,
        give=lambda topic, data, by: verdict_work_give(
            topic=topic, assessor=data["assessor"], by=by, name=data["name"]
        ),
        progress=lambda: progress_rows(kinds=[VERDICT_WORK], progress=verdict_progress, models=[Verdict]),
        detail=work_detail,
        templates=("work/organize.html", "work/organize_work.html"),
        url_name="verdicts:organize",
        item_labels=time_or_dash,
        context=lambda rows: {
            "title": "Answer verdicts",
            "namespace": "verdicts",
            "unit": "answers",
            "about": "An assessor says, answer by answer, whether the answer answers the question.",
        },
    ),
)
app_name = "verdicts"  # the URLconf of the pages (parts.py's register_urls)
urlpatterns = VERDICT_JUDGING.urls()
