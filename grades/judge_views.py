"""The grading pages: an assessor's report pages, and the organizer's giving and progress pages.

Everything the assessor's pages show comes from grades.judging, which reads no LLM grade and no run.
"""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.http import AuthenticatedRequest
from assessor.names import NameField
from assessor.work.organizing import WorkOrganizing, organizer_views
from assessor.work.pages import (
    TopicsField,
    assessor_choices,
    expected_version,
    int_param,
    label_fields,
    label_response,
    submit_response,
)
from assessor.work.queue import next_work
from assessor.work.roles import assessor_required
from assessor.work.timing import duration_label
from grades import judging
from grades.kinds import GRADE_WORK
from grades.models import GRADE_MEANINGS
from nuggets.banks import bank_names
from reports.texts import request_texts

# (value, key, name, tone), as the judging frame shows them; the tone colours the choice.
LABEL_CHOICES = [
    (str(grade), str(grade), str(grade), "yes" if grade >= 4 else "part" if grade >= 2 else "no")
    for grade in (0, 1, 2, 3, 4, 5)
]
DEFINITIONS = [(grade, GRADE_MEANINGS[grade]) for grade in (5, 4, 3, 2, 1, 0)]


class GiveGradesForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    bank = forms.ChoiceField(help_text="The question bank the reports are graded on (each topic must have it).")
    name = NameField(
        label="Grade source",
        required=False,
        max_length=100,
        help_text=f"The name the grades are kept under; defaults to {judging.PEOPLE_SOURCE!r}.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["bank"].choices = [(name, name) for name in bank_names()]


@require_GET
@assessor_required
def start(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """The first report with a question left to grade."""
    work = judging.grade_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.report_page_load(work=work)
    if page is None:
        messages.info(request, f"Topic {work.topic_id} has no report to grade yet.")
        return redirect("home")
    return redirect("grades:report", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def report(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.grade_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.report_page_load(work=work, number=number)
    if page is None:
        raise Http404("No such report.")
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": LABEL_CHOICES,
        "definitions": DEFINITIONS,
        "request_text": request_texts([work.topic_id])[work.topic_id],
        "next_work": next_work(user=request.user, after=work) if page.frozen else None,
    }
    return render(request, "grades/judge.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    return label_response(
        request,
        work_id=work_id,
        save=lambda: judging.grade_save(
            work_id=work_id,
            user=request.user,
            number=number,
            question=int_param(request, "question") or 0,
            **label_fields(request),
        ),
        back=reverse("grades:report", args=[work_id, number]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: judging.grade_submit(
            work_id=work_id, user=request.user, expected_version=expected_version(request)
        ),
        back=reverse("grades:judge", args=[work_id]),
    )


def _give(topic, data: dict, organizer):
    return judging.grade_work_give(
        topic=topic, assessor=data["assessor"], by=organizer, name=data["name"], bank=data["bank"]
    )


def _time_label(row) -> None:
    row.time_label = duration_label(row.seconds) if row.seconds else "—"


ORGANIZING = WorkOrganizing(
    kinds=(GRADE_WORK,),
    title="Grading",
    form=GiveGradesForm,
    give=_give,
    progress=judging.organizer_progress,
    detail=judging.work_detail,
    templates=("grades/organize.html", "grades/organize_work.html"),
    url_name="grades:organize",
    item_labels=_time_label,
)
organize, organize_work, reopen = organizer_views(ORGANIZING)
