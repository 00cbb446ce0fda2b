"""What the assessors' pages and the organizers' work pages share: forms, answers, refusals.

A save is a POST of a small form. Without JavaScript the page is redirected
back; the page's script asks for JSON with an `Accept: application/json`
header and gets the result or the refusal as JSON.
"""

from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from assessor.http import AuthenticatedRequest, back_url
from assessor.models import AssessorWork, Topic
from assessor.models.keys import KEY_SEPARATOR, published_id, topic_keys
from assessor.models.scope import scoped_campaign
from assessor.work.access import CampaignClosedForChanges, campaign_closed_reason, in_member_campaigns
from assessor.work.judging import JudgeError, assessor_totals, judge_work_reopen
from assessor.work.roles import Role, organizer_required
from assessor.work.services import WorkError, work_notes_set
from assessor.work.timing import duration_label
from assessor.work.topic_picker import TopicPicker


def wants_json(request: AuthenticatedRequest) -> bool:
    """The page's script asked for JSON (a browser's own navigation prefers HTML)."""
    return request.get_preferred_type(["text/html", "application/json"]) == "application/json"


def expected_version(request: AuthenticatedRequest) -> int | None:
    """The version of the work (or list) the page was loaded at; None when the post does not say."""
    return int_param(request, "version")


def operation_id(request: AuthenticatedRequest) -> str:
    """The id the page's script gave this save (empty without the script): a retry carries the same."""
    value = request.POST.get("op_id", "")
    return value if len(value) <= 64 and value.replace("-", "").isalnum() else ""


def label_fields(request: AuthenticatedRequest) -> dict[str, Any]:
    """What every label save posts besides the item: the label, the one the page showed, the work's
    version, the answer's token and the operation id."""
    return {
        "label": request.POST.get("label", ""),
        "previous": request.POST.get("previous", ""),
        "expected_version": expected_version(request),
        "token": request.POST.get("answer") or None,
        "op_id": operation_id(request),
    }


def int_param(request: AuthenticatedRequest, name: str) -> int | None:
    try:
        return int(request.POST[name])
    except (KeyError, ValueError):
        return None


def refused(
    request: AuthenticatedRequest,
    message: str,
    *,
    status: int,
    back: str,
    current: Any = None,
    state: dict[str, str] | None = None,
) -> HttpResponse:
    """A refusal: JSON for the page's script (with the stored label, where a conflict has one, and the
    work's state), else the message on the page it came from."""
    if wants_json(request):
        answer: dict[str, Any] = {"error": message, "kind": "conflict" if status == 409 else "invalid", **(state or {})}
        if current is not None:
            answer["current"] = current
        return JsonResponse(answer, status=status)
    messages.error(request, message)
    return redirect(back)


def label_response(request: AuthenticatedRequest, *, work_id: int, save: Callable[[], Any], back: str) -> HttpResponse:
    """Run a label save; answer with the stored label and the work's state (JSON) or a redirect back,
    or the refusal."""
    try:
        saved = save()
    except CampaignClosedForChanges as closed:
        return refused(request, closed.message, status=409, back=back)
    except JudgeError as error:
        return refused(
            request,
            error.message,
            status=error.status,
            back=back,
            current=error.current,
            state=work_state(work_id, request.user),
        )
    if wants_json(request):
        # The save's own locked work, as it stored it, when the save hands it back: no second read.
        work = getattr(saved, "work", None)
        state = work_state_shown(work) if isinstance(work, AssessorWork) else work_state(work_id, request.user)
        return JsonResponse({"label": saved.label, **state})
    return redirect(back)


def work_state(work_id: int, user: User) -> dict[str, str]:
    """The status and active time of the assessor's own work, as the judging pages show them."""
    works = AssessorWork.objects.only("status", "active_seconds").filter(pk=work_id, assessor=user)
    work = in_member_campaigns(works, user).first()
    if work is None:
        return {}
    return work_state_shown(work)


def work_state_shown(work: AssessorWork) -> dict[str, str]:
    return {"status": work.get_status_display(), "time": duration_label(work.active_seconds)}


def submit_response(request: AuthenticatedRequest, *, submit: Callable[[], Any], back: str) -> HttpResponse:
    """Run a submit; a refusal says what is missing."""
    try:
        submit()
    except CampaignClosedForChanges as closed:
        return refused(request, closed.message, status=409, back=back)
    except JudgeError as error:
        return refused(request, error.message, status=error.status, back=back)
    except WorkError as error:
        return refused(request, error.message, status=400, back=back)
    messages.success(request, "Submitted. The labels are frozen; an organizer can reopen the topic.")
    if wants_json(request):
        return JsonResponse({"submitted": True})
    return redirect(back)


# --- Organizers' forms ---------------------------------------------------------------------


def topics_parse(value: str) -> list[Topic]:
    """Topic ids separated by spaces, commas or lines, as the campaign's files have them (a stored key is taken
    too); unknown ids, another campaign's keys among them, are an error naming them."""
    wanted = list(dict.fromkeys(value.replace(",", " ").split()))
    keys = {topic_id: topic_id for topic_id in wanted}
    if published := [topic_id for topic_id in wanted if KEY_SEPARATOR not in topic_id]:
        keys.update(topic_keys(published))  # the campaign read once
    found = Topic.objects.in_bulk(list(keys.values()))
    unknown = [topic_id for topic_id in wanted if keys[topic_id] not in found]
    if unknown:
        raise forms.ValidationError(f"Unknown topic(s): {', '.join(unknown)}.")
    return [found[keys[topic_id]] for topic_id in wanted]


class TopicsField(forms.CharField):
    """Topic ids separated by spaces, commas or lines; unknown ids are an error naming them.

    Shown as the topic picker (`assessor.work.topic_picker`); what it posts is checked the same way.
    """

    widget = TopicPicker

    def clean(self, value: Any) -> list[Topic]:
        return topics_parse(super().clean(value))


def give_all(form: forms.Form, give: Callable[[Topic], object]) -> bool:
    """Give the form's topics one by one, all or none: a refusal names its topic, gives nothing and
    becomes the form's error."""
    try:
        with transaction.atomic():
            for topic in form.cleaned_data["topics"]:
                give(topic)
    except WorkError as error:
        form.add_error(None, error.message + " Nothing was given.")
        return False
    return True


def assessor_choices() -> QuerySet[User]:
    return User.objects.filter(groups__name=Role.ASSESSOR.value, is_superuser=False).order_by("username")


class ReopenForm(forms.Form):
    reason = forms.CharField(required=False, max_length=500)


def reopen_response(request: AuthenticatedRequest, *, work: AssessorWork, back: str) -> HttpResponse:
    """An organizer reopens submitted work, with an optional reason kept in its history."""
    form = ReopenForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        judge_work_reopen(work_id=work.pk, by=request.user, kinds=[work.kind], reason=reason)
    except WorkError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Reopened {work.kind_label} of topic {published_id(work.topic_id)}; recorded.")
    return redirect(back)


def closed_refusal(request: AuthenticatedRequest, back: str) -> HttpResponse | None:
    """A change asked on a page of a closed campaign: refused, with the message, on the page it came from."""
    if reason := campaign_closed_reason(scoped_campaign()):
        messages.error(request, reason)
        return redirect(back)
    return None


def totals_labelled(rows: Sequence) -> list:
    totals = assessor_totals(rows)
    for total in totals:
        total.time_label = duration_label(total.seconds)  # type: ignore[attr-defined]
        total.change_label = (  # type: ignore[attr-defined]
            f"{total.change_rate:.0%} ({total.changed}/{total.shown})" if total.shown else "—"
        )
    return totals


class NotesForm(forms.Form):
    notes = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))


@require_POST
@organizer_required
def work_notes(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    """An organizer sets the notes an assessor reads beside the guidelines, then returns to the page they came from."""
    work = get_object_or_404(AssessorWork, pk=work_id)  # the campaign's (its scoped manager)
    form = NotesForm(request.POST)
    if form.is_valid():
        work_notes_set(work_id=work.pk, notes=form.cleaned_data["notes"], by=request.user)
        messages.success(request, f"Notes of {work.kind_label} of topic {published_id(work.topic_id)} saved.")
    else:
        messages.error(request, "The notes are too long (at most 5000 characters).")
    return redirect(back_url(request, request.POST.get("next"), fallback=reverse("home")))
