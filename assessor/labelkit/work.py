"""People's labels of answers on the label-app kit (assessor.work.kit): a topic's answers one a page, in an order
shuffled once per assessor and topic, named by position and token (never by run); saves go through the judging
core (replays, changes in another tab, the active time)."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.db import transaction

from assessor.labelkit.spec import AnswerLabels
from assessor.models import Answer, AssessorWork, Topic
from assessor.names import NameField
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

PEOPLE_SOURCE = "people"  # the source people's labels go into unless the organizer names another


@dataclass(frozen=True)
class AnswerPage:  # what templates/work/judge_text.html shows
    number: int
    total_answers: int
    answers_done: int
    next_incomplete: int | None
    frozen: bool
    token: str
    text: str
    current: str  # the label given, or "" before one
    waiting: str = ""


@dataclass
class AnswerDetail:  # a row of one work's page for organizers, who may see runs (templates/work/organize_work.html)
    number: int
    run_id: str
    label: str
    seconds: float | None


def answer_order(work: AssessorWork) -> list[int]:
    """The topic's answers in the order this assessor sees them."""
    ids = Answer.objects.filter(topic_id=work.topic_id).values_list("pk", flat=True)
    return shuffled(list(ids), assessor_id=work.assessor_id, topic_id=work.topic_id)


class GiveForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    name = NameField(required=False, help_text=f"The source; defaults to {PEOPLE_SOURCE!r}.")


@dataclass(frozen=True)
class AnswerWork:
    """The people's side of an `AnswerLabels`: giving, the page, a save, the submit, progress and detail."""

    spec: AnswerLabels

    def give(self, *, topic: Topic, assessor: User, kind: str = "", by: User | None, name: str = "") -> AssessorWork:
        """The registry's `WorkPage.give`: the topic's work, into a people's source."""
        source = person_source_claim(family=self.spec.name, name=name or PEOPLE_SOURCE, by=by)
        return work_give(topic=topic, assessor=assessor, kind=kind or self.spec.work_kind, by=by, source=source)

    def given(self, work: AssessorWork) -> dict[int, str]:  # answer id -> its label in this work
        labels = self.spec.model._default_manager.filter(source_id=work.source_id, work=work)
        return dict(labels.values_list("answer_id", "label"))

    def page_load(self, *, work: AssessorWork, number: int | None = None) -> AnswerPage | None:
        order, given = answer_order(work), self.given(work)
        done = [1 if answer_id in given else 0 for answer_id in order]
        position = position_choose(done_counts=done, needed=[1] * len(order), number=number)
        if position is None:
            return None
        answer_id = order[position.number - 1]
        frozen = work.status == AssessorWork.Status.SUBMITTED
        text = Answer.objects.get(pk=answer_id).text
        token = answer_token(answer_id)
        return AnswerPage(
            position.number,
            len(order),
            sum(done),
            position.next_incomplete,
            frozen,
            token,
            text,
            given.get(answer_id, ""),
        )

    def save(self, *, work_id: int, user: User, number: int, label: str, previous: str, **fields: Any) -> Any:
        with transaction.atomic():
            return self._save(work_id=work_id, user=user, number=number, label=label, previous=previous, **fields)

    def _save(
        self,
        *,
        work_id: int,
        user: User,
        number: int,
        label: str,
        previous: str,
        expected_version: int | None,
        token: str | None,
        op_id: str = "",
    ) -> Any | Replayed:
        spec = self.spec
        if label not in spec.labels:
            raise JudgeError(f"A {spec.noun} is {' or '.join(spec.labels)}.")
        work = locked_open_work(work_id=work_id, user=user, kinds=[spec.work_kind], expected_version=expected_version)
        if (source_id := work.source_id) is None:  # every such work is given with its source
            raise JudgeError(f"This work has no {spec.noun} source: an organizer has to give it again.")
        answer_id = answer_at(order=answer_order(work), number=number, token=token)
        labels = spec.model._default_manager
        return label_write(
            work=work,
            existing=labels.select_for_update().filter(source_id=source_id, answer_id=answer_id).first(),
            empty="",
            value=label,
            previous=previous,
            conflict=lambda now: f"This answer's {spec.noun} was changed to {now or 'none'} in another tab: reload.",
            create=lambda seconds: labels.create(
                answer_id=answer_id, source_id=source_id, work=work, created_by=user, label=label, seconds_spent=seconds
            ),
            item=str(number),
            op_id=op_id,
        )

    @transaction.atomic
    def submit(self, *, work_id: int, user: User, expected_version: int | None) -> None:
        kinds = [self.spec.work_kind]
        work = locked_open_work(work_id=work_id, user=user, kinds=kinds, expected_version=expected_version)
        if missing := len(answer_order(work)) - len(self.given(work)):
            raise WorkError(f"{missing} answer(s) have no {self.spec.noun} yet.")
        work_submit_mark(work=work, user=user)

    def progress(self, works: Sequence[AssessorWork]) -> dict[int, tuple[int, int]]:
        """The registry's `WorkPage.progress`: answers labelled of the topic's answers, per work (two queries)."""
        topics = {work.topic_id for work in works}
        totals = Counter(Answer.objects.filter(topic_id__in=topics).values_list("topic_id", flat=True))
        done = labels_counted_by_work(self.spec.model, works)
        return {work.pk: (done.get(work.pk, 0), totals[work.topic_id]) for work in works}

    def detail(self, work: AssessorWork) -> list[AnswerDetail]:
        runs = dict(Answer.objects.filter(topic_id=work.topic_id).values_list("pk", "run__run_id"))
        rows = self.spec.model._default_manager.filter(work=work).values_list("answer_id", "label", "seconds_spent")
        stored = {answer: (label, seconds) for answer, label, seconds in rows}
        order = enumerate(answer_order(work), start=1)
        return [AnswerDetail(number, runs[answer], *stored.get(answer, ("", 0.0))) for number, answer in order]

    def judging(self) -> LabelApp:
        spec = self.spec
        return LabelApp(
            namespace=spec.name,
            item="answer",
            template="work/judge_text.html",
            label_choices=spec.choices,
            page_load=self.page_load,
            save=self.save,
            submit=self.submit,
            empty="has no answer to judge yet",
            organizing=WorkOrganizing(
                kinds=(spec.work_kind,),
                title=spec.title,
                form=GiveForm,
                give=lambda topic, data, by: self.give(
                    topic=topic, assessor=data["assessor"], by=by, name=data["name"]
                ),
                progress=lambda: progress_rows(kinds=[spec.work_kind], progress=self.progress, models=[spec.model]),
                detail=self.detail,
                templates=("work/organize.html", "work/organize_work.html"),
                url_name=f"{spec.name}:organize",
                item_labels=time_or_dash,
                context=lambda rows: {
                    "title": spec.title,
                    "namespace": spec.name,
                    "unit": "answers",
                    "about": spec.about_work,
                },
            ),
        )
