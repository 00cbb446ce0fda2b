"""The organizer's pages of a kind of judging work, written once: give it, follow it, see one work, reopen it.

An app describes its work (`WorkOrganizing`: its kinds, its giving form and
service, its progress and detail rows, its templates and URL names) and takes
the three views from `organizer_views`; the pages and their rules are the same
for every kind.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor.http import AuthenticatedRequest
from assessor.models import AssessorWork, Topic
from assessor.work.pages import ReopenForm, closed_refusal, give_all, reopen_response, totals_labelled
from assessor.work.roles import organizer_required
from assessor.work.timing import duration_label

View = Callable[..., HttpResponse]


@dataclass(frozen=True)
class WorkOrganizing:
    kinds: tuple[str, ...]
    title: str  # what the success message calls the work: "ManualAssign", "Support judging"
    form: type[forms.Form]  # the giving form: `topics`, `assessor`, and the app's own fields
    give: Callable[[Topic, dict[str, Any], User], object]  # give(topic, the form's data, organizer)
    progress: Callable[[], Sequence[Any]]  # a row per work (with `.work`) for the organizer's table
    detail: Callable[[AssessorWork], Sequence[Any]]  # one work's items, in the assessor's order
    templates: tuple[str, str]  # the organizer's page, one work's page
    url_name: str  # the organizer's page, where giving and reopening come back to
    row_labels: Callable[[Any], None] = lambda row: None  # what a progress row shows beyond its time
    item_labels: Callable[[Any], None] = lambda item: None  # what a detail item shows
    context: Callable[[Sequence[Any]], dict[str, Any]] = field(default=lambda rows: {})  # more of the page's context


def organize_page(organizing: WorkOrganizing, request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "POST" and (refusal := closed_refusal(request, reverse(organizing.url_name))):
        return refusal
    form = organizing.form(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if give_all(form, lambda topic: organizing.give(topic, data, request.user)):
            topic_ids = ", ".join(str(topic) for topic in data["topics"])
            messages.success(request, f"{organizing.title} given to {data['assessor']}: {topic_ids}.")
            return redirect(organizing.url_name)
    rows = organizing.progress()
    for row in rows:
        row.time_label = duration_label(row.work.active_seconds)
        organizing.row_labels(row)
    context = {
        "form": form,
        "rows": rows,
        "reopen_form": ReopenForm(),
        "totals": totals_labelled(rows),
        **organizing.context(rows),
    }
    return render(request, organizing.templates[0], context, status=400 if form.errors else 200)


def work_page(organizing: WorkOrganizing, request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    work = get_object_or_404(
        AssessorWork.objects.select_related("assessor", "topic"), pk=work_id, kind__in=organizing.kinds
    )
    items = organizing.detail(work)
    for item in items:
        organizing.item_labels(item)
    events = list(work.events.select_related("user").order_by("at"))
    context = {"work": work, "items": items, "events": events, "time_label": duration_label(work.active_seconds)}
    return render(request, organizing.templates[1], context)


def reopen_page(organizing: WorkOrganizing, request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    work = get_object_or_404(AssessorWork, pk=work_id, kind__in=organizing.kinds)
    if refusal := closed_refusal(request, reverse(organizing.url_name)):
        return refusal
    return reopen_response(request, work=work, back=reverse(organizing.url_name))


def organizer_views(organizing: WorkOrganizing) -> tuple[View, View, View]:
    """The organizer's page, one work's page and the reopening, each behind the organizer's role."""

    @organizer_required
    def organize(request: AuthenticatedRequest) -> HttpResponse:
        return organize_page(organizing, request)

    @require_GET
    @organizer_required
    def organize_work(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
        return work_page(organizing, request, work_id)

    @require_POST
    @organizer_required
    def reopen(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
        return reopen_page(organizing, request, work_id)

    return organize, organize_work, reopen
