"""Pages of ManualAssign (assessors) and of its distribution and progress (organizers).

A label is a POST of a small form (see assessor.work.pages for the answers).
Everything the assessor's pages show comes from assignment.judging, which
reads no LLM output and no run.
"""

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.http import AuthenticatedRequest
from assessor.models import AssessorWork
from assessor.work.pages import (
    ReopenForm,
    TopicsField,
    assessor_choices,
    expected_version,
    give_all,
    int_param,
    label_fields,
    label_response,
    reopen_response,
    submit_response,
    totals_labelled,
)
from assessor.work.queue import next_work
from assessor.work.roles import assessor_required, organizer_required
from assessor.work.timing import duration_label
from assignment import judging
from assignment.kinds import ASSIGN_MANUAL

# (value, key, name, tone): the tone colours the label the same on every page (green, yellow, red).
LABEL_CHOICES = [
    ("support", "s", "support", "yes"),
    ("partial_support", "p", "partial", "part"),
    ("not_support", "n", "not support", "no"),
]


class GiveAssignForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    nuggets = forms.SlugField(
        required=False, max_length=100, help_text="The nugget list to assign; defaults to the topic's only one."
    )
    assigner = forms.SlugField(
        label="Assigner name",
        required=False,
        max_length=100,
        help_text=f"The name the assessor's labels are scored under; defaults to {judging.MANUAL_ASSIGNER!r}.",
    )
    replicate_of = forms.SlugField(
        label="Replicate of",
        required=False,
        max_length=100,
        help_text="A second assessor: the assigner whose ManualAssign this work repeats, blind to its labels "
        "(the assigner name above is then required).",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("replicate_of") and not data.get("assigner"):
            self.add_error("assigner", "A replicate needs an assigner name of its own.")
        return data


# --- Assessors ---------------------------------------------------------------------


@require_GET
@assessor_required
def start(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """The first answer with labels missing."""
    work = judging.assign_work_for_assessor(work_id=work_id, user=request.user)
    if not judging.answer_order(work=work):
        messages.info(request, f"Topic {work.topic_id} has no answers to judge yet.")
        return redirect("home")
    page = judging.assign_page_load(work=work)
    return redirect("judge:answer", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def answer(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.assign_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.assign_page_load(work=work, number=number)
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": LABEL_CHOICES,
        "next_work": next_work(user=request.user, after=work) if page.frozen else None,
    }
    return render(request, "judge/assign.html", context)


@require_POST
@assessor_required
def label(request: AuthenticatedRequest, work_id: int, number: int) -> HttpResponse:
    return label_response(
        request,
        work_id=work_id,
        save=lambda: judging.assignment_label_save(
            work_id=work_id,
            user=request.user,
            number=number,
            nugget_id=int_param(request, "nugget") or 0,
            **label_fields(request),
        ),
        back=reverse("judge:answer", args=[work_id, number]),
    )


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    return submit_response(
        request,
        submit=lambda: judging.assign_submit(
            work_id=work_id, user=request.user, expected_version=expected_version(request)
        ),
        back=reverse("judge:assign", args=[work_id]),
    )


# --- Organizers ----------------------------------------------------------------------


@organizer_required
def organize(request: AuthenticatedRequest) -> HttpResponse:
    form = GiveAssignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        given = give_all(
            form,
            lambda topic: (
                judging.assign_replicate_give(
                    topic=topic,
                    assessor=data["assessor"],
                    by=request.user,
                    of_assigner=data["replicate_of"],
                    assigner_name=data["assigner"],
                )
                if data["replicate_of"]
                else judging.assign_work_give(
                    topic=topic,
                    assessor=data["assessor"],
                    by=request.user,
                    nugget_set_name=data["nuggets"],
                    assigner_name=data["assigner"],
                )
            ),
        )
        if given:
            topic_ids = ", ".join(topic.pk for topic in data["topics"])
            messages.success(request, f"ManualAssign given to {data['assessor']}: {topic_ids}.")
            return redirect("judge:organize")
    rows = judging.assign_progress()
    for row in rows:
        row.time_label = duration_label(row.work.active_seconds)
        row.per_answer_label = duration_label(row.seconds_per_answer) if row.seconds_per_answer else "—"
    context = {"form": form, "rows": rows, "reopen_form": ReopenForm(), "totals": totals_labelled(rows)}
    return render(request, "judge/organize.html", context, status=400 if form.errors else 200)


@require_GET
@organizer_required
def organize_work(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """One ManualAssign work: each answer (with its run) in the assessor's order, labels and time."""
    work = get_object_or_404(
        AssessorWork.objects.select_related("assessor", "topic"), pk=work_id, kind=ASSIGN_MANUAL
    )
    answers = judging.assign_work_detail(work=work)
    for row in answers:
        row.time_label = duration_label(row.seconds) if row.labels_done else "—"
    events = list(work.events.select_related("user").order_by("at"))
    context = {"work": work, "answers": answers, "events": events, "time_label": duration_label(work.active_seconds)}
    return render(request, "judge/organize_work.html", context)


@require_POST
@organizer_required
def reopen(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    work = get_object_or_404(AssessorWork, pk=work_id, kind=ASSIGN_MANUAL)
    return reopen_response(request, work=work, back=reverse("judge:organize"))
