"""Pages of the nugget workspace (assessors) and of the nugget work (organizers).

Every operation is a POST to `op/<operation>/`: a page without JavaScript
submits the form and is redirected back; the workspace's script sends the
same form asking for JSON (`Accept: application/json`) and swaps the panel it
gets back in place, or shows the refusal.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from assessor.collection.pages import download_response
from assessor.http import AuthenticatedRequest
from assessor.models import AssessorWork, Topic
from assessor.models.keys import published_id, topic_key
from assessor.work.access import CampaignClosedForChanges
from assessor.work.pages import (
    ReopenForm,
    closed_refusal,
    expected_version,
    give_all,
    operation_id,
    refused,
    wants_json,
)
from assessor.work.queue import next_work
from assessor.work.roles import Role, assessor_required, organizer_required, user_role
from assessor.work.services import WorkError, work_heartbeat
from assessor.work.timing import duration_label
from nuggets import selectors
from nuggets.bankchoices import started_from_label
from nuggets.bankediting import topic_document_texts
from nuggets.bankfiles import banks_lines, banks_notes
from nuggets.editing import OpResult
from nuggets.exporting import nuggets_lines, nuggets_notes
from nuggets.forms import CONDITION_CHOICES, GiveWorkForm
from nuggets.giving import GIVE_CHOICES, nugget_work_give
from nuggets.kinds import WORKSPACE_KINDS
from nuggets.services import DependentsUnconfirmed, nugget_operation_apply, nugget_set_reopen, nugget_set_submit
from nuggets.workspace import WorkspaceError
from reports.texts import work_request

OPERATION_PARAMS = ("nugget", "text", "importance", "after", "to", "texts", "segment", "rule", "answer", "answer_text")


@login_required
def index(request: AuthenticatedRequest) -> HttpResponse:
    if user_role(request.user) in (Role.ORGANIZER, Role.ADMIN):
        return redirect("nuggets:organize")
    return redirect("home")


# --- Assessors --------------------------------------------------------------


@require_GET
@assessor_required
def queue(request: AuthenticatedRequest) -> HttpResponse:
    """The assessor's one queue is their home page (every kind of work); this address stays for old links."""
    return redirect("home")


def _panel_context(request: AuthenticatedRequest, panel: selectors.Panel) -> dict:
    # Computed once for the whole list (the per-nugget forms repeat them): the
    # operation URL prefix, the version and the CSRF field.
    op_url = reverse("nuggets:op", args=[panel.work.pk, "add"]).removesuffix("add/")
    csrf_input = format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', get_token(request))
    after = next_work(user=request.user, after=panel.work) if panel.frozen else None
    return {
        "panel": panel,
        "op_url": op_url,
        "version": panel.nugget_set.version,
        "csrf_input": csrf_input,
        "next_work": after,
    }


def _panel_response(request: AuthenticatedRequest, panel: selectors.Panel) -> JsonResponse:
    """The panel for the script to swap in, with the list's version (and a bank's toolbar, which is in its bar)."""
    context = _panel_context(request, panel)
    html = render_to_string("nuggets/workspace.html#panel", context, request=request)
    data = {"panel": html, "version": panel.nugget_set.version}
    if panel.is_bank:
        data["bar"] = render_to_string("nuggets/workspace_toolbar.html", context, request=request)
    return JsonResponse(data)


@require_GET
@assessor_required
def work(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    work = selectors.work_for_assessor(work_id=work_id, user=request.user)
    panel = selectors.panel_load(work=work)
    if wants_json(request):
        return _panel_response(request, panel)
    if panel.is_bank:
        # A bank's questions are written beside the topic's documents, whatever judged them, for the report
        # request they are asked of (a TREC topic's request is its query alone).
        context = {
            **_panel_context(request, panel),
            "work": work,
            "topic": work.topic,
            "documents": topic_document_texts(work.topic_id),
            **work_request(work),
            "started_from": started_from_label(panel.nugget_set),
        }
        return render(request, "nuggets/workspace.html", context)
    segments = selectors.relevant_segments(topic_id=work.topic_id, panel=panel)
    context = {
        **_panel_context(request, panel),
        "work": work,
        "topic": work.topic,
        "segments": segments,
        # Segments the collection has no text for are listed apart, collapsed: they would push the texts down.
        "texted": [segment for segment in segments if segment.text],
        "untexted": [segment for segment in segments if not segment.text],
    }
    return render(request, "nuggets/workspace.html", context)


def _operation_params(request: AuthenticatedRequest) -> dict:
    params = {name: request.POST[name] for name in OPERATION_PARAMS if name in request.POST}
    if "nuggets" in request.POST:
        params["nuggets"] = ",".join(request.POST.getlist("nuggets"))
    if "documents" in request.POST:
        params["documents"] = " ".join(request.POST.getlist("documents"))
    return params


def _refused(request: AuthenticatedRequest, work_id: int, error: WorkspaceError) -> HttpResponse:
    return refused(request, error.message, status=error.status, back=reverse("nuggets:work", args=[work_id]))


def _applied(request: AuthenticatedRequest, work_id: int, result: OpResult) -> HttpResponse:
    if not wants_json(request):
        anchor = f"#nugget-{result.focus_id}" if result.focus_id else ""
        return redirect(reverse("nuggets:work", args=[work_id]) + anchor)
    panel = selectors.panel_load(work=result.work, nugget_set=result.nugget_set, focus_id=result.focus_id)
    return _panel_response(request, panel)


@require_POST
@assessor_required
def operation(request: AuthenticatedRequest, work_id: int, operation: str) -> HttpResponse:
    try:
        result = nugget_operation_apply(
            work_id=work_id,
            user=request.user,
            operation=operation,
            params=_operation_params(request),
            expected_version=expected_version(request),
            op_id=operation_id(request),
        )
    except WorkspaceError as error:
        return _refused(request, work_id, error)
    except CampaignClosedForChanges as closed:
        return refused(request, closed.message, status=409, back=reverse("nuggets:work", args=[work_id]))
    return _applied(request, work_id, result)


@require_POST
@assessor_required
def submit(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    try:
        result = nugget_set_submit(
            work_id=work_id,
            user=request.user,
            expected_version=expected_version(request),
            op_id=operation_id(request),
        )
    except WorkspaceError as error:
        return _refused(request, work_id, error)
    except WorkError as error:
        return _refused(request, work_id, WorkspaceError(error.message))
    except CampaignClosedForChanges as closed:
        return refused(request, closed.message, status=409, back=reverse("nuggets:work", args=[work_id]))
    if not wants_json(request):
        messages.success(request, "Submitted. The list is frozen; an organizer can reopen it.")
    return _applied(request, work_id, result)


@require_POST
@assessor_required
def heartbeat(request: AuthenticatedRequest, work_id: int) -> JsonResponse:
    try:
        work = work_heartbeat(work_id=work_id, user=request.user, kinds=WORKSPACE_KINDS)
    except CampaignClosedForChanges as closed:  # no time is credited to a closed campaign's work
        return JsonResponse({"error": closed.message, "kind": "conflict"}, status=409)
    version = selectors.work_nugget_set(work=work).version
    return JsonResponse(
        {"active_seconds": work.active_seconds, "time": duration_label(work.active_seconds), "version": version}
    )


# --- Organizers -------------------------------------------------------------


@organizer_required
def organize(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "POST" and (refusal := closed_refusal(request, reverse("nuggets:organize"))):
        return refusal
    form = GiveWorkForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        given = give_all(
            form,
            lambda topic: nugget_work_give(
                topic=topic,
                assessor=data["assessor"],
                condition=GIVE_CHOICES[data["condition"]][0],
                form=GIVE_CHOICES[data["condition"]][1],
                by=request.user,
                name=data["name"],
                drafts_name=form.drafts_name(),
            ),
        )
        if given:
            topic_ids = ", ".join(str(topic) for topic in data["topics"])
            condition = dict(CONDITION_CHOICES)[data["condition"]]
            messages.success(request, f"Given to {data['assessor']} ({condition}): {topic_ids}.")
            return redirect("nuggets:organize")
    works = list(selectors.nugget_works())
    for item in works:
        item.time_label = duration_label(item.active_seconds)
    context = {
        "form": form,
        "works": works,
        "averages": selectors.condition_averages(),
        "lineage": selectors.lineage_totals(),
    }
    return render(request, "nuggets/organize.html", context, status=400 if form.errors else 200)


@require_GET
@organizer_required
def organize_topic(request: AuthenticatedRequest, topic_id: str) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_key(topic_id))  # the URL's published id (<topic:...>)
    reports = selectors.topic_report(topic=topic)
    for report in reports:
        report.work.time_label = duration_label(report.work.active_seconds)
        report.log = [(edit, selectors.edit_describe(edit)) for edit in report.edits]
        report.started_from = started_from_label(report.panel.nugget_set)
    context = {"topic": topic, "reports": reports, "reopen_form": ReopenForm()}
    return render(request, "nuggets/organize_topic.html", context)


@require_POST
@organizer_required
def reopen(request: AuthenticatedRequest, work_id: int) -> HttpResponse:
    # Only nugget work has a list to reopen: another kind's id is no page here.
    work = get_object_or_404(AssessorWork, pk=work_id, kind__in=WORKSPACE_KINDS)
    if refusal := closed_refusal(request, reverse("nuggets:organize_topic", args=[work.topic_id])):
        return refusal
    form = ReopenForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        nugget_set_reopen(
            work_id=work.pk, by=request.user, reason=reason, confirmed=request.POST.get("confirmed") == "1"
        )
    except DependentsUnconfirmed as unconfirmed:
        # Labels hang on the list: show what depends on it, and ask again.
        context = {"work": work, "reason": reason, "dependents": unconfirmed.dependents, "message": unconfirmed.message}
        return render(request, "nuggets/reopen_confirm.html", context)
    except WorkError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Reopened {work.kind_label} of topic {published_id(work.topic_id)}; recorded.")
    return redirect("nuggets:organize_topic", topic_id=work.topic_id)


OPEN_LISTS_HEADER = "X-Open-Lists"


@organizer_required
def download_nuggets(request: AuthenticatedRequest, name: str) -> StreamingHttpResponse:
    """The sets named `name` as export_nuggets writes them; its warnings (the open lists it left out, or wrote as
    provisional with `?open=1`) in `X-Open-Lists`, absent when every list is final."""
    response = download_response(nuggets_lines(name=name), f"nuggets.{name}.jsonl")
    notes = nuggets_notes(name=name)
    if notes:
        response[OPEN_LISTS_HEADER] = " ".join(notes)
    return response


@organizer_required
def download_banks(request: AuthenticatedRequest, name: str) -> StreamingHttpResponse:
    """The banks named `name` as export_banks writes them (the AutoJudge v3 layout), open ones noted as for nuggets."""
    response = download_response(banks_lines(name=name), f"banks.{name}.jsonl")
    notes = banks_notes(name=name)
    if notes:
        response[OPEN_LISTS_HEADER] = " ".join(notes)
    return response
