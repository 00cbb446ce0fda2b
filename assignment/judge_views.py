"""Pages of ManualAssign (assessors) and of its distribution and progress (organizers).

A label is a POST of a small form: without JavaScript the page is redirected
back; the page's script sends the same form with `HX-Request` and gets JSON.
Everything the assessor's pages show comes from assignment.judging, which
reads no LLM output and no run.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.models import AssessorWork, Topic
from assessor.work.roles import Role, assessor_required, organizer_required
from assessor.work.services import WorkError
from assignment import judging
from nuggets.workspace import duration_label


class TopicsField(forms.CharField):
    """Topic ids separated by spaces, commas or lines; unknown ids are an error naming them."""

    widget = forms.Textarea(attrs={"rows": 2})

    def clean(self, value) -> list[Topic]:
        value = super().clean(value)
        wanted = list(dict.fromkeys(value.replace(",", " ").split()))
        found = Topic.objects.in_bulk(wanted)
        unknown = [topic_id for topic_id in wanted if topic_id not in found]
        if unknown:
            raise forms.ValidationError(f"Unknown topic(s): {', '.join(unknown)}.")
        return [found[topic_id] for topic_id in wanted]


def assessor_choices():
    return User.objects.filter(groups__name=Role.ASSESSOR.value, is_superuser=False).order_by("username")


class GiveAssignForm(forms.Form):
    topics = TopicsField(help_text="One or more topic ids.")
    assessor = forms.ModelChoiceField(queryset=assessor_choices())
    nuggets = forms.SlugField(
        required=False, max_length=100, help_text="The nugget list to assign; defaults to the topic's only one."
    )


class ReopenForm(forms.Form):
    reason = forms.CharField(required=False, max_length=500)


def expected_version(request: HttpRequest) -> int | None:
    try:
        return int(request.POST["version"])
    except (KeyError, ValueError):
        return None


def int_param(request: HttpRequest, name: str) -> int | None:
    try:
        return int(request.POST[name])
    except (KeyError, ValueError):
        return None


def refused(request: HttpRequest, message: str, *, status: int, back: str, current=None) -> HttpResponse:
    if request.htmx:
        kind = "conflict" if status == 409 else "invalid"
        return JsonResponse({"error": message, "kind": kind, "current": current}, status=status)
    messages.error(request, message)
    return redirect(back)


# --- Assessors ---------------------------------------------------------------------


@require_GET
@assessor_required
def start(request: HttpRequest, work_id: int) -> HttpResponse:
    """The first answer with labels missing."""
    work = judging.assign_work_for_assessor(work_id=work_id, user=request.user)
    if not judging.answer_order(work=work):
        messages.info(request, f"Topic {work.topic_id} has no answers to judge yet.")
        return redirect("home")
    page = judging.assign_page_load(work=work)
    return redirect("judge:answer", work_id=work.pk, number=page.number)


@require_GET
@assessor_required
def answer(request: HttpRequest, work_id: int, number: int) -> HttpResponse:
    work = judging.assign_work_for_assessor(work_id=work_id, user=request.user)
    page = judging.assign_page_load(work=work, number=number)
    context = {
        "page": page,
        "work": work,
        "topic": work.topic,
        "time_label": duration_label(work.active_seconds),
        "label_choices": [
            ("support", "s", "support"),
            ("partial_support", "p", "partial"),
            ("not_support", "n", "not support"),
        ],
    }
    return render(request, "judge/assign.html", context)


@require_POST
@assessor_required
def label(request: HttpRequest, work_id: int, number: int) -> HttpResponse:
    back = reverse("judge:answer", args=[work_id, number])
    try:
        saved = judging.assignment_label_save(
            work_id=work_id,
            user=request.user,
            number=number,
            nugget_id=int_param(request, "nugget") or 0,
            label=request.POST.get("label", ""),
            previous=request.POST.get("previous", ""),
            expected_version=expected_version(request),
            token=request.POST.get("answer") or None,
        )
    except judging.JudgeError as error:
        return refused(request, error.message, status=error.status, back=back, current=error.current)
    if request.htmx:
        return JsonResponse({"label": saved.label})
    return redirect(back)


@require_POST
@assessor_required
def submit(request: HttpRequest, work_id: int) -> HttpResponse:
    back = reverse("judge:assign", args=[work_id])
    try:
        judging.assign_submit(work_id=work_id, user=request.user, expected_version=expected_version(request))
    except judging.JudgeError as error:
        return refused(request, error.message, status=error.status, back=back)
    except WorkError as error:
        return refused(request, error.message, status=400, back=back)
    messages.success(request, "Submitted. The labels are frozen; an organizer can reopen the topic.")
    if request.htmx:
        return JsonResponse({"submitted": True})
    return redirect(back)


def totals_labelled(rows) -> list:
    totals = judging.assessor_totals(rows)
    for total in totals:
        total.time_label = duration_label(total.seconds)
        total.change_label = f"{total.change_rate:.0%} ({total.changed}/{total.shown})" if total.shown else "—"
    return totals


# --- Organizers ----------------------------------------------------------------------


@organizer_required
def organize(request: HttpRequest) -> HttpResponse:
    form = GiveAssignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            # All the topics or none: a refusal names its topic and gives nothing.
            with transaction.atomic():
                for topic in data["topics"]:
                    judging.assign_work_give(
                        topic=topic, assessor=data["assessor"], by=request.user, nugget_set_name=data["nuggets"]
                    )
        except WorkError as error:
            form.add_error(None, error.message + " Nothing was given.")
        else:
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
def organize_work(request: HttpRequest, work_id: int) -> HttpResponse:
    """One ManualAssign work: each answer (with its run) in the assessor's order, labels and time."""
    work = get_object_or_404(
        AssessorWork.objects.select_related("assessor", "topic"), pk=work_id, kind=AssessorWork.Kind.ASSIGN_MANUAL
    )
    answers = judging.assign_work_detail(work=work)
    for row in answers:
        row.time_label = duration_label(row.seconds) if row.labels_done else "—"
    events = list(work.events.select_related("user").order_by("at"))
    context = {"work": work, "answers": answers, "events": events, "time_label": duration_label(work.active_seconds)}
    return render(request, "judge/organize_work.html", context)


@require_POST
@organizer_required
def reopen(request: HttpRequest, work_id: int) -> HttpResponse:
    work = get_object_or_404(AssessorWork, pk=work_id, kind=AssessorWork.Kind.ASSIGN_MANUAL)
    form = ReopenForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        judging.judge_work_reopen(work_id=work.pk, by=request.user, kinds=[work.kind], reason=reason)
    except WorkError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Reopened ManualAssign of topic {work.topic_id}; recorded.")
    return redirect("judge:organize")
